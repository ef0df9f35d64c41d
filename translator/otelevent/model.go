package otelevent

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// sentryEvent is the Sentry event JSON this package writes: the struct
// tags are the schema (relay/event.schema.json names each member).
type sentryEvent struct {
	EventID     string            `json:"event_id"`
	Timestamp   float64           `json:"timestamp"`
	Platform    string            `json:"platform"`
	Level       string            `json:"level"`
	Logger      string            `json:"logger,omitempty"`
	Transaction string            `json:"transaction,omitempty"`
	LogEntry    *logEntry         `json:"logentry,omitempty"`
	Exception   *exceptionList    `json:"exception,omitempty"`
	Contexts    map[string]any    `json:"contexts,omitempty"`
	Release     string            `json:"release,omitempty"`
	Environment string            `json:"environment,omitempty"`
	ServerName  string            `json:"server_name,omitempty"`
	SDK         *sdkInfo          `json:"sdk,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	Extra       map[string]any    `json:"extra,omitempty"`
}

type logEntry struct {
	Formatted string `json:"formatted"`
}

type exceptionList struct {
	Values []exceptionValue `json:"values"`
	// raw is the exception as our receiver kept it (every frame field);
	// written instead of Values when set.
	raw json.RawMessage
	// unparsed is exception.stacktrace when the parser could not read it.
	unparsed string
}

func (e *exceptionList) MarshalJSON() ([]byte, error) {
	if e.raw != nil {
		return e.raw, nil
	}
	type plain struct {
		Values []exceptionValue `json:"values"`
	}
	return json.Marshal(plain{Values: e.Values})
}

type exceptionValue struct {
	Type       string      `json:"type,omitempty"`
	Value      string      `json:"value,omitempty"`
	Module     string      `json:"module,omitempty"`
	Stacktrace *stackTrace `json:"stacktrace,omitempty"`
	Mechanism  *mechanism  `json:"mechanism,omitempty"`
}

type mechanism struct {
	Type    string `json:"type"`
	Handled *bool  `json:"handled,omitempty"`
}

type stackTrace struct {
	Frames []frame `json:"frames"`
}

type frame struct {
	Function string `json:"function,omitempty"`
	Module   string `json:"module,omitempty"`
	Filename string `json:"filename,omitempty"`
	AbsPath  string `json:"abs_path,omitempty"`
	Lineno   int    `json:"lineno,omitempty"`
	Colno    int    `json:"colno,omitempty"`
	Package  string `json:"package,omitempty"`
	InApp    *bool  `json:"in_app,omitempty"`
	// ContextLine is the source line, where the trace prints it (Python).
	ContextLine string `json:"context_line,omitempty"`
}

type sdkInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// resource holds the event fields read from a resource once per resource.
type resource struct {
	platform, release, environment, serverName string
	sdk                                        *sdkInfo
	runtime, os                                map[string]any
	service                                    string
	// attributes of the resource, bounded as extra, for contexts.otel
	attributes map[string]any
	// identity tells resources apart in event ids: the attributes that
	// name a service instance.
	identity string
}

func resourceFacts(res pcommon.Resource, opts EventOptions) resource {
	a := res.Attributes()
	r := resource{
		// resource.service.version
		release: cmpOr(str(a, "service.version"), opts.DefaultRelease),
		// resource.deployment.environment.name (deployment.environment before semconv 1.27)
		environment: cmpOr(cmpOr(str(a, "deployment.environment.name"), str(a, "deployment.environment")), opts.DefaultEnvironment),
		// resource.host.name
		serverName: cmpOr(str(a, "host.name"), str(a, "service.instance.id")),
		platform:   PlatformOf(str(a, "telemetry.sdk.language")),
		service:    str(a, "service.name"),
		attributes: extraOf(a),
	}
	r.identity = str(a, "service.name") + "\x00" + str(a, "service.namespace") + "\x00" + str(a, "service.instance.id") + "\x00" + r.serverName
	// resource.telemetry.sdk.{name,version}
	if name := str(a, "telemetry.sdk.name"); name != "" {
		r.sdk = &sdkInfo{Name: name, Version: cmpOr(str(a, "telemetry.sdk.version"), "unknown")}
	}
	// resource.process.runtime.{name,version}
	if name := str(a, "process.runtime.name"); name != "" {
		r.runtime = map[string]any{"type": "runtime", "name": name}
		if v := str(a, "process.runtime.version"); v != "" {
			r.runtime["version"] = v
		}
	}
	// resource.os.{type,version}
	if name := str(a, "os.type"); name != "" {
		r.os = map[string]any{"type": "os", "name": name}
		if v := str(a, "os.version"); v != "" {
			r.os["version"] = v
		}
	}
	return r
}

// PlatformOf is Sentry's platform for an OTel telemetry.sdk.language
// (Sentry's list of platforms; "other" for the rest).
func PlatformOf(language string) string {
	if platform, ok := platformOfLanguage[language]; ok {
		return platform
	}
	return "other"
}

// platformOfLanguage maps telemetry.sdk.language to Sentry's platform.
var platformOfLanguage = map[string]string{
	"cpp": "native", "rust": "native",
	"dotnet":     "csharp",
	"erlang":     "elixir",
	"go":         "go",
	"java":       "java",
	"php":        "php",
	"python":     "python",
	"ruby":       "ruby",
	"javascript": "javascript",
	"elixir":     "elixir",
	"nodejs":     "node",
	"webjs":      "javascript",
	"swift":      "cocoa",
}

// contexts are the event's contexts: the trace (nil when none) and the
// resource's runtime and os.
func (r resource) contexts(trace map[string]any) map[string]any {
	c := map[string]any{}
	if trace != nil {
		c["trace"] = trace
	}
	if r.runtime != nil {
		c["runtime"] = r.runtime
	}
	if r.os != nil {
		c["os"] = r.os
	}
	if r.attributes != nil {
		// Where Sentry's own OpenTelemetry integration puts them.
		c["otel"] = map[string]any{"type": "otel", "resource": r.attributes}
	}
	if len(c) == 0 {
		return nil
	}
	return c
}

func newEvent(res resource, ts pcommon.Timestamp, level string) *sentryEvent {
	t := ts.AsTime()
	if ts == 0 {
		t = time.Now()
	}
	return &sentryEvent{
		EventID:     newEventID(),
		Timestamp:   float64(t.UnixMicro()) / 1e6,
		Platform:    res.platform,
		Level:       level,
		Release:     res.release,
		Environment: res.environment,
		ServerName:  res.serverName,
		SDK:         res.sdk,
	}
}

// finish adds the resource contexts and encodes the event, shedding extra
// and then frames to fit MaxEventBytes; ok is false when even that does
// not fit.
func finish(ev *sentryEvent, resourceIndex int) (Event, bool) {
	out := Event{ResourceIndex: resourceIndex, EventID: ev.EventID, Platform: ev.Platform}
	shed := []func(*sentryEvent){shedExtra, shedFrames, nil}
	for _, next := range shed {
		payload, err := json.Marshal(ev)
		if err == nil && len(payload) <= MaxEventBytes {
			out.Payload = payload
			return out, true
		}
		if next != nil {
			next(ev)
		}
	}
	return out, false
}

// shedExtra replaces extra by a note that it was dropped.
func shedExtra(ev *sentryEvent) {
	ev.Extra = map[string]any{"sentry.bridge.extra_dropped": "over max_event_size"}
}

// shedFrames keeps the 50 innermost frames of each exception and cuts its
// message.
func shedFrames(ev *sentryEvent) {
	if ev.Exception == nil {
		return
	}
	ev.Exception.raw = nil
	for i := range ev.Exception.Values {
		v := &ev.Exception.Values[i]
		if st := v.Stacktrace; st != nil && len(st.Frames) > 50 {
			st.Frames = st.Frames[len(st.Frames)-50:]
		}
		v.Value = cut(v.Value, MaxExtraValueChars)
	}
}

// finiteOrString keeps a double JSON can hold; NaN and infinities as text.
func finiteOrString(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return f
}
