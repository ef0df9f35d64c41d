// Package frametype maps a Sentry "platform" (of a profile or of one
// frame) to the semconv profile.frame.type of its frames (Of) and back
// (Platform): the one table both directions of the translator read.
package frametype

import (
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// frameTypeOfPlatform: Sentry "platform" → semconv profile.frame.type.
// Browser JavaScript engines other than V8 have no frame type of their
// own, so javascript maps to v8js too.
var frameTypeOfPlatform = map[string]string{
	"python":     frameType(semconv.ProfileFrameTypeCpython),
	"node":       frameType(semconv.ProfileFrameTypeV8JS),
	"javascript": frameType(semconv.ProfileFrameTypeV8JS),
	"java":       frameType(semconv.ProfileFrameTypeJVM),
	"android":    frameType(semconv.ProfileFrameTypeJVM),
	"kotlin":     frameType(semconv.ProfileFrameTypeJVM),
	"cocoa":      frameType(semconv.ProfileFrameTypeNative),
	"native":     frameType(semconv.ProfileFrameTypeNative),
	"c":          frameType(semconv.ProfileFrameTypeNative),
	"objc":       frameType(semconv.ProfileFrameTypeNative),
	"swift":      frameType(semconv.ProfileFrameTypeNative),
	"rust":       frameType(semconv.ProfileFrameTypeRust),
	"go":         frameType(semconv.ProfileFrameTypeGo),
	"php":        frameType(semconv.ProfileFrameTypePHP),
	"ruby":       frameType(semconv.ProfileFrameTypeRuby),
	"csharp":     frameType(semconv.ProfileFrameTypeDotnet),
	"dotnet":     frameType(semconv.ProfileFrameTypeDotnet),
	"elixir":     frameType(semconv.ProfileFrameTypeBeam),
	"erlang":     frameType(semconv.ProfileFrameTypeBeam),
	"perl":       frameType(semconv.ProfileFrameTypePerl),
}

// platformOfFrameType: semconv profile.frame.type → the Sentry "platform"
// of its frames; kernel frames are native to Sentry.
var platformOfFrameType = map[string]string{
	frameType(semconv.ProfileFrameTypeCpython): "python",
	frameType(semconv.ProfileFrameTypeV8JS):    "node",
	frameType(semconv.ProfileFrameTypeJVM):     "java",
	frameType(semconv.ProfileFrameTypeNative):  "native",
	frameType(semconv.ProfileFrameTypeKernel):  "native",
	frameType(semconv.ProfileFrameTypeRust):    "rust",
	frameType(semconv.ProfileFrameTypeGo):      "go",
	frameType(semconv.ProfileFrameTypePHP):     "php",
	frameType(semconv.ProfileFrameTypeRuby):    "ruby",
	frameType(semconv.ProfileFrameTypeDotnet):  "csharp",
	frameType(semconv.ProfileFrameTypeBeam):    "elixir",
	frameType(semconv.ProfileFrameTypePerl):    "perl",
}

func frameType(kv attribute.KeyValue) string { return kv.Value.AsString() }

// Of maps a Sentry platform (of the profile or of one frame) to the
// semconv profile.frame.type of its frames; "" when there is none.
func Of(platform string) string { return frameTypeOfPlatform[platform] }

// Platform is the way back: the Sentry platform of frames of one
// semconv profile.frame.type; "" when Sentry has none.
func Platform(frameType string) string { return platformOfFrameType[frameType] }
