package translator

// Platforms: "platform" (of the profile and of each frame) ⇄ semconv
// profile.frame.type; telemetry.sdk.language → "platform" for sources
// without frame types; and the memory that keeps one platform per
// profiler across exports.

import (
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// frameTypeOf maps a Sentry platform (of the profile or of one frame) to the
// semconv profile.frame.type of its frames; "" when there is none. Browser
// JavaScript engines other than V8 have no frame type of their own, so
// javascript maps to v8js too.
func frameTypeOf(platform string) string {
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

// platformOfFrameType is the way back: the Sentry platform of frames of one
// semconv profile.frame.type; "" when Sentry has none.
func platformOfFrameType(frameType string) string {
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

// platformOfSDKLanguage maps semconv telemetry.sdk.language to a Sentry
// platform, for resources whose frames carry no frame type.
func platformOfSDKLanguage(language string) string {
	switch language {
	case semconv.TelemetrySDKLanguageCPP.Value.AsString():
		return "native"
	case semconv.TelemetrySDKLanguageDotnet.Value.AsString():
		return "csharp"
	case semconv.TelemetrySDKLanguageErlang.Value.AsString():
		return "elixir"
	case semconv.TelemetrySDKLanguageGo.Value.AsString():
		return "go"
	case semconv.TelemetrySDKLanguageJava.Value.AsString(), semconv.TelemetrySDKLanguageKotlin.Value.AsString():
		return "java"
	case semconv.TelemetrySDKLanguageNodejs.Value.AsString():
		return "node"
	case semconv.TelemetrySDKLanguagePHP.Value.AsString():
		return "php"
	case semconv.TelemetrySDKLanguagePython.Value.AsString():
		return "python"
	case semconv.TelemetrySDKLanguageRuby.Value.AsString():
		return "ruby"
	case semconv.TelemetrySDKLanguageRust.Value.AsString():
		return "rust"
	case semconv.TelemetrySDKLanguageSwift.Value.AsString():
		return "cocoa"
	case semconv.TelemetrySDKLanguageWebJS.Value.AsString():
		return "javascript"
	}
	return ""
}

// PlatformMemory remembers the platform of each profiler across FromProfiles
// calls, so that every chunk of a profiler has one platform: Relay routes
// chunks by platform, and Sentry shows a profiler's chunks together only
// when they agree. It holds at most its capacity of profilers, forgetting
// the oldest first. Safe for concurrent use; the zero value is not usable:
// call NewPlatformMemory.
type PlatformMemory struct {
	mu       sync.Mutex
	capacity int
	byID     map[string]string
	order    []string // profiler ids, oldest first: a ring of capacity entries
	next     int
}

// NewPlatformMemory returns a memory of up to capacity profilers (at least 1).
func NewPlatformMemory(capacity int) *PlatformMemory {
	capacity = max(capacity, 1)
	return &PlatformMemory{capacity: capacity, byID: make(map[string]string), order: make([]string, 0, capacity)}
}

// settle returns the platform a profiler's chunk gets, given the platform
// its own frames voted for. The first platform other than native that a
// profiler gets is its platform from then on: native frames (the kernel,
// libc) run under every runtime, so a window with only those says nothing
// about the process. A profiler that never showed anything else stays
// native.
func (m *PlatformMemory) settle(profilerID, voted string) string {
	if m == nil {
		return voted
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if known, ok := m.byID[profilerID]; ok {
		if known != "native" || voted == "native" {
			return known
		}
		m.byID[profilerID] = voted
		return voted
	}
	if len(m.order) < m.capacity {
		m.order = append(m.order, profilerID)
	} else {
		delete(m.byID, m.order[m.next])
		m.order[m.next] = profilerID
		m.next = (m.next + 1) % m.capacity
	}
	m.byID[profilerID] = voted
	return voted
}

// votedPlatform is the platform of the most common frame type among
// counts (platform → frames of the sampled stacks; interpreted frames win
// over native ones, which every runtime has underneath), else that of
// telemetry.sdk.language, else the default.
func votedPlatform(counts map[string]int, language, defaultPlatform string) string {
	best, bestN := "", 0
	for p, n := range counts {
		if p == "native" {
			continue
		}
		if n > bestN || (n == bestN && p < best) {
			best, bestN = p, n
		}
	}
	if best != "" {
		return best
	}
	if counts["native"] > 0 {
		return "native"
	}
	if p := platformOfSDKLanguage(language); p != "" {
		return p
	}
	return defaultPlatform
}

// locationFrameType is profile.frame.type of Location l.
func locationFrameType(dv *dictionaryView, l int32) string {
	var ft string
	dv.eachAttr(dv.dict.LocationTable().At(int(l)).AttributeIndices(), func(key string, v pcommon.Value) {
		if key == string(semconv.ProfileFrameTypeKey) {
			ft = v.AsString()
		}
	})
	return ft
}
