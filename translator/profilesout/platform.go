package profilesout

// Platforms: the chunk's "platform" from its frames' profile.frame.type
// (internal/frametype), else telemetry.sdk.language, for sources without
// one; and the memory that keeps one platform per profiler across exports.

import (
	"cmp"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// platformOfSDKLanguage maps semconv telemetry.sdk.language to a Sentry
// platform, for resources whose frames carry no frame type.
func platformOfSDKLanguage(language string) string { return platformOfLanguage[language] }

// platformOfLanguage: semconv telemetry.sdk.language → Sentry "platform".
var platformOfLanguage = map[string]string{
	semconv.TelemetrySDKLanguageCPP.Value.AsString():    "native",
	semconv.TelemetrySDKLanguageDotnet.Value.AsString(): "csharp",
	semconv.TelemetrySDKLanguageErlang.Value.AsString(): "elixir",
	semconv.TelemetrySDKLanguageGo.Value.AsString():     "go",
	semconv.TelemetrySDKLanguageJava.Value.AsString():   "java",
	semconv.TelemetrySDKLanguageKotlin.Value.AsString(): "java",
	semconv.TelemetrySDKLanguageNodejs.Value.AsString(): "node",
	semconv.TelemetrySDKLanguagePHP.Value.AsString():    "php",
	semconv.TelemetrySDKLanguagePython.Value.AsString(): "python",
	semconv.TelemetrySDKLanguageRuby.Value.AsString():   "ruby",
	semconv.TelemetrySDKLanguageRust.Value.AsString():   "rust",
	semconv.TelemetrySDKLanguageSwift.Value.AsString():  "cocoa",
	semconv.TelemetrySDKLanguageWebJS.Value.AsString():  "javascript",
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
	if best := mostFramesPlatform(counts); best != "" {
		return best
	}
	if counts["native"] > 0 {
		return "native"
	}
	return cmp.Or(platformOfSDKLanguage(language), defaultPlatform)
}

// mostFramesPlatform is the platform other than native with the most
// frames, the first by name on a tie; "" for none.
func mostFramesPlatform(counts map[string]int) string {
	best, bestN := "", 0
	for p, n := range counts {
		if p != "native" && (n > bestN || (n == bestN && p < best)) {
			best, bestN = p, n
		}
	}
	return best
}

// locationFrameType is profile.frame.type of Location l.
func locationFrameType(dv *dictionaryView, l int32) string {
	var ft string
	loc, ok := dv.Location(l)
	if !ok {
		return ""
	}
	dv.attrs.Each(loc.AttributeIndices(), func(key string, v pcommon.Value) {
		if key == string(semconv.ProfileFrameTypeKey) {
			ft = v.AsString()
		}
	})
	return ft
}
