package sentrytrace

// Segment is what one envelope item says about one service's spans: the
// metadata that becomes the OTLP resource, and the spans.
type Segment struct {
	// Of the transaction event, or of the first span of a container.
	EventID     string // "event_id" (transactions)
	Platform    string // "platform", span attribute "sentry.platform"
	Release     string // "release", span attribute "sentry.release"
	Environment string // "environment", span attribute "sentry.environment"
	Dist        string // "dist", span attribute "sentry.dist"
	SDKName     string // "sdk.name", span attribute "sentry.sdk.name"
	SDKVersion  string // "sdk.version", span attribute "sentry.sdk.version"

	OSName         string // "contexts.os.name", span attribute "os.name"
	OSVersion      string // "contexts.os.version", span attribute "os.version"
	RuntimeName    string // "contexts.runtime.name"
	RuntimeVersion string // "contexts.runtime.version"
	DeviceArch     string // "contexts.device.arch"
	DeviceModel    string // "contexts.device.model"
	DeviceMaker    string // "contexts.device.manufacturer"

	// User holds "user" and "request" of a transaction as attributes
	// (PII: the translator copies them only when asked).
	User []Attribute

	Spans []Span
}

// Span is one span: the segment of a transaction (from "contexts.trace"),
// one of its "spans", or one span of a span container.
type Span struct {
	TraceID      string // "trace_id": 32 hex digits
	SpanID       string // "span_id": 16 hex digits
	ParentSpanID string // "parent_span_id"
	Name         string // transaction name for segments, else "description" ("name" in span v2)
	Op           string // "op", span attribute "sentry.op"
	Origin       string // "origin", span attribute "sentry.origin"
	Status       string // "status": Sentry's span status ("ok", "internal_error", …; span v2: "ok"/"error")
	Start        int64  // "start_timestamp" as Unix nanoseconds
	End          int64  // "timestamp" ("end_timestamp" in span v2) as Unix nanoseconds
	IsSegment    bool   // the transaction's root span, span v2 "is_segment"
	// ProfilerID names the profiler that ran while the span ran. Of a
	// transaction's span: its own "data.profiler_id" (also spelled
	// "profiler.id" or "sentry.profiler_id"), else the transaction's. Of a
	// transaction: "contexts.profile.profiler_id" (sentry-python 2.6.0:
	// contexts.profile."profiler.id"), else
	// "contexts.trace.data.profiler_id" (sentry-python 3). Of a span v2: the
	// attribute "sentry.profiler_id".
	ProfilerID string
	// Attributes are "data" (transactions) or "attributes" (span v2), then
	// "tags" under their own names where data has no such key, in key order.
	Attributes []Attribute
	// Measurements are the transaction's "measurements" (on the segment).
	Measurements []Measurement
}

// Attribute is one key and its JSON value: string, bool, int64 (a JSON
// number without fraction or exponent that fits), float64, or []any of those.
type Attribute struct {
	Key   string
	Value any
}

// Measurement is one of "measurements": {name: {value, unit}}.
type Measurement struct {
	Name  string
	Value float64
	Unit  string
}
