// Package frametype maps a Sentry "platform" (of a profile or of one
// frame) to the semconv profile.frame.type of its frames (Of) and back
// (Platform): the one table both directions of the translator read.
package frametype

import (
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// Of maps a Sentry platform (of the profile or of one frame) to the
// semconv profile.frame.type of its frames; "" when there is none. Browser
// JavaScript engines other than V8 have no frame type of their own, so
// javascript maps to v8js too.
func Of(platform string) string {
	var kv attribute.KeyValue
	switch platform {
	case "python":
		kv = semconv.ProfileFrameTypeCpython
	case "node", "javascript":
		kv = semconv.ProfileFrameTypeV8JS
	case "java", "android", "kotlin":
		kv = semconv.ProfileFrameTypeJVM
	case "cocoa", "native", "c", "objc", "swift":
		kv = semconv.ProfileFrameTypeNative
	case "rust":
		kv = semconv.ProfileFrameTypeRust
	case "go":
		kv = semconv.ProfileFrameTypeGo
	case "php":
		kv = semconv.ProfileFrameTypePHP
	case "ruby":
		kv = semconv.ProfileFrameTypeRuby
	case "csharp", "dotnet":
		kv = semconv.ProfileFrameTypeDotnet
	case "elixir", "erlang":
		kv = semconv.ProfileFrameTypeBeam
	case "perl":
		kv = semconv.ProfileFrameTypePerl
	default:
		return ""
	}
	return kv.Value.AsString()
}

// Platform is the way back: the Sentry platform of frames of one
// semconv profile.frame.type; "" when Sentry has none.
func Platform(frameType string) string {
	switch frameType {
	case semconv.ProfileFrameTypeCpython.Value.AsString():
		return "python"
	case semconv.ProfileFrameTypeV8JS.Value.AsString():
		return "node"
	case semconv.ProfileFrameTypeJVM.Value.AsString():
		return "java"
	case semconv.ProfileFrameTypeNative.Value.AsString(), semconv.ProfileFrameTypeKernel.Value.AsString():
		return "native"
	case semconv.ProfileFrameTypeRust.Value.AsString():
		return "rust"
	case semconv.ProfileFrameTypeGo.Value.AsString():
		return "go"
	case semconv.ProfileFrameTypePHP.Value.AsString():
		return "php"
	case semconv.ProfileFrameTypeRuby.Value.AsString():
		return "ruby"
	case semconv.ProfileFrameTypeDotnet.Value.AsString():
		return "csharp"
	case semconv.ProfileFrameTypeBeam.Value.AsString():
		return "elixir"
	case semconv.ProfileFrameTypePerl.Value.AsString():
		return "perl"
	}
	return ""
}
