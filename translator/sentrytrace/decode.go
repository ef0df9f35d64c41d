package sentrytrace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/sentrytime"
)

// rawTransaction is a `transaction` item as SDKs write it.
type rawTransaction struct {
	EventID        string          `json:"event_id"`
	Transaction    string          `json:"transaction"`
	Platform       string          `json:"platform"`
	Release        string          `json:"release"`
	Environment    string          `json:"environment"`
	Dist           string          `json:"dist"`
	StartTimestamp json.RawMessage `json:"start_timestamp"`
	Timestamp      json.RawMessage `json:"timestamp"`
	SDK            struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"sdk"`
	Tags     json.RawMessage `json:"tags"`
	Contexts struct {
		Trace   rawSpan `json:"trace"`
		Profile struct {
			ProfilerID string `json:"profiler_id"`
			// sentry-python 2.6.0, its first continuous profiler, wrote
			// the key dotted.
			ProfilerIDDotted string `json:"profiler.id"`
		} `json:"profile"`
		OS      nameVersion `json:"os"`
		Runtime nameVersion `json:"runtime"`
		Device  struct {
			Arch         string `json:"arch"`
			Model        string `json:"model"`
			Manufacturer string `json:"manufacturer"`
		} `json:"device"`
	} `json:"contexts"`
	Measurements map[string]struct {
		Value float64 `json:"value"`
		Unit  string  `json:"unit"`
	} `json:"measurements"`
	Spans   []rawSpan       `json:"spans"`
	User    json.RawMessage `json:"user"`
	Request json.RawMessage `json:"request"`
}

type nameVersion struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// rawSpan is "contexts.trace" or an element of "spans".
type rawSpan struct {
	TraceID        string          `json:"trace_id"`
	SpanID         string          `json:"span_id"`
	ParentSpanID   string          `json:"parent_span_id"`
	Op             string          `json:"op"`
	Description    string          `json:"description"`
	Origin         string          `json:"origin"`
	Status         string          `json:"status"`
	StartTimestamp json.RawMessage `json:"start_timestamp"`
	Timestamp      json.RawMessage `json:"timestamp"`
	Data           json.RawMessage `json:"data"`
	Tags           json.RawMessage `json:"tags"`
}

// DecodeTransaction reads a `transaction` item. The segment (from
// "contexts.trace", named after "transaction" and timed by the event's
// start_timestamp and timestamp) comes first, then "spans" in order. A span
// without trace_id takes the transaction's.
func DecodeTransaction(data []byte) (*Segment, error) {
	var tx rawTransaction
	if err := strictUnmarshal(data, &tx); err != nil {
		return nil, fmt.Errorf("transaction: %w", err)
	}
	seg := segmentOf(&tx)
	user, err := userAttributes(tx.User, tx.Request)
	if err != nil {
		return nil, err
	}
	seg.User = user
	segment, err := rootSpan(&tx)
	if err != nil {
		return nil, err
	}
	seg.Spans = append(make([]Span, 0, 1+len(tx.Spans)), segment)
	return seg, childSpans(seg, tx.Spans, &segment)
}

// segmentOf is the metadata of a transaction: who sent it.
func segmentOf(tx *rawTransaction) *Segment {
	return &Segment{
		EventID: tx.EventID, Platform: tx.Platform, Release: tx.Release, Environment: tx.Environment, Dist: tx.Dist,
		SDKName: tx.SDK.Name, SDKVersion: tx.SDK.Version,
		OSName: tx.Contexts.OS.Name, OSVersion: tx.Contexts.OS.Version,
		RuntimeName: tx.Contexts.Runtime.Name, RuntimeVersion: tx.Contexts.Runtime.Version,
		DeviceArch: tx.Contexts.Device.Arch, DeviceModel: tx.Contexts.Device.Model, DeviceMaker: tx.Contexts.Device.Manufacturer,
	}
}

// rootSpan is the transaction's segment span: "contexts.trace", named
// after "transaction", with the event's own times, tags, profiler and
// measurements.
func rootSpan(tx *rawTransaction) (Span, error) {
	root := tx.Contexts.Trace
	if root.TraceID == "" || root.SpanID == "" {
		return Span{}, errors.New("transaction: contexts.trace needs trace_id and span_id")
	}
	root.StartTimestamp, root.Timestamp, root.Tags = tx.StartTimestamp, tx.Timestamp, tx.Tags
	segment, err := convertSpan(root, tx.Transaction, "contexts.trace")
	if err != nil {
		return Span{}, err
	}
	segment.IsSegment = true
	segment.ProfilerID = firstNonEmpty(tx.Contexts.Profile.ProfilerID, tx.Contexts.Profile.ProfilerIDDotted,
		profilerIDOf(segment.Attributes))
	segment.Measurements = measurementsOf(tx)
	return segment, nil
}

// measurementsOf is "measurements", in name order.
func measurementsOf(tx *rawTransaction) []Measurement {
	var out []Measurement
	for name, m := range tx.Measurements {
		out = append(out, Measurement{Name: name, Value: m.Value, Unit: m.Unit})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// childSpans appends "spans" to seg in order: a span without trace_id
// takes the segment's, one without description is named after its op, and
// one without a profiler ran under the segment's.
func childSpans(seg *Segment, spans []rawSpan, segment *Span) error {
	for i, raw := range spans {
		raw.TraceID = firstNonEmpty(raw.TraceID, segment.TraceID)
		s, err := convertSpan(raw, raw.Description, fmt.Sprintf("spans[%d]", i))
		if err != nil {
			return err
		}
		s.Name = firstNonEmpty(s.Name, s.Op)
		s.ProfilerID = firstNonEmpty(profilerIDOf(s.Attributes), segment.ProfilerID)
		seg.Spans = append(seg.Spans, s)
	}
	return nil
}

// Span "data" keys that name the profiler running while the span ran.
// sentry-python (SPANDATA.PROFILER_ID) and sentry-java
// (SpanDataConvention.PROFILER_ID) write "profiler_id" on each span, and
// sentry-python 3 (OpenTelemetry-based) only there and in
// "contexts.trace.data"; the other spellings are read for the SDKs that
// wrote the context key dotted or the span v2 attribute name into data.
var spanDataProfilerIDKeys = [...]string{"profiler_id", "profiler.id", keyProfilerID}

// profilerIDOf returns the profiler a span's "data" names, or "".
func profilerIDOf(attrs []Attribute) string {
	for _, key := range spanDataProfilerIDKeys {
		if v := stringAttribute(attrs, key); v != "" {
			return v
		}
	}
	return ""
}

// stringAttribute is the string value of key among attrs (whose keys are
// unique), or "".
func stringAttribute(attrs []Attribute, key string) string {
	for _, a := range attrs {
		if a.Key == key {
			v, _ := a.Value.(string)
			return v
		}
	}
	return ""
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// convertSpan maps a transaction's span; where names it in errors.
func convertSpan(raw rawSpan, name, where string) (Span, error) {
	s := Span{
		TraceID: raw.TraceID, SpanID: raw.SpanID, ParentSpanID: raw.ParentSpanID,
		Name: name, Op: raw.Op, Origin: raw.Origin, Status: raw.Status,
	}
	if err := s.readTimes(raw.StartTimestamp, raw.Timestamp, "timestamp", where); err != nil {
		return Span{}, err
	}
	data, err := objectAttributes(raw.Data, false)
	if err != nil {
		return Span{}, fmt.Errorf("%s.data: %w", where, err)
	}
	tags, err := tagAttributes(raw.Tags)
	if err != nil {
		return Span{}, fmt.Errorf("%s.tags: %w", where, err)
	}
	s.Attributes = mergeAttributes(data, tags)
	return s, nil
}

// readTimes checks the span's ids and reads its start_timestamp and its
// end (endKey: "timestamp", or span v2's "end_timestamp").
func (s *Span) readTimes(start, end json.RawMessage, endKey, where string) error {
	if s.TraceID == "" || s.SpanID == "" {
		return fmt.Errorf("%s: trace_id and span_id are required", where)
	}
	var err error
	if s.Start, err = timestamp(start); err != nil {
		return fmt.Errorf("%s.start_timestamp: %w", where, err)
	}
	if s.End, err = timestamp(end); err != nil {
		return fmt.Errorf("%s.%s: %w", where, endKey, err)
	}
	return nil
}

// rawContainer is a span v2 item: {"version":2,"items":[…]}.
type rawContainer struct {
	Items []rawSpanV2 `json:"items"`
}

type rawSpanV2 struct {
	TraceID        string          `json:"trace_id"`
	SpanID         string          `json:"span_id"`
	ParentSpanID   string          `json:"parent_span_id"`
	Name           string          `json:"name"`
	Status         string          `json:"status"`
	IsSegment      bool            `json:"is_segment"`
	StartTimestamp json.RawMessage `json:"start_timestamp"`
	EndTimestamp   json.RawMessage `json:"end_timestamp"`
	Attributes     json.RawMessage `json:"attributes"`
}

// Span v2 attributes that are the metadata of the segment rather than of
// the span; they stay on the span as well.
const (
	keyOp         = sentryattr.Op
	keyOrigin     = sentryattr.Origin
	keyProfilerID = sentryattr.ProfilerID
	keyRelease    = sentryattr.Release
	keyEnv        = sentryattr.Environment
	keyPlatform   = sentryattr.Platform
	keyDist       = sentryattr.Dist
	keySDKName    = sentryattr.SDKName
	keySDKVersion = sentryattr.SDKVersion
	keyOSName     = "os.name"
	keyOSVersion  = "os.version"
)

// spanV2Metadata maps the span v2 string attributes that say what a span
// is (its op, origin, profiler) or who sent it (the segment's release,
// environment, SDK, platform, OS: the first span that carries each).
var spanV2Metadata = map[string]func(seg *Segment, s *Span, v string){
	keyOp:         func(_ *Segment, s *Span, v string) { s.Op = v },
	keyOrigin:     func(_ *Segment, s *Span, v string) { s.Origin = v },
	keyProfilerID: func(_ *Segment, s *Span, v string) { s.ProfilerID = v },
	keyRelease:    func(seg *Segment, _ *Span, v string) { setOnce(&seg.Release, v) },
	keyEnv:        func(seg *Segment, _ *Span, v string) { setOnce(&seg.Environment, v) },
	keyPlatform:   func(seg *Segment, _ *Span, v string) { setOnce(&seg.Platform, v) },
	keyDist:       func(seg *Segment, _ *Span, v string) { setOnce(&seg.Dist, v) },
	keySDKName:    func(seg *Segment, _ *Span, v string) { setOnce(&seg.SDKName, v) },
	keySDKVersion: func(seg *Segment, _ *Span, v string) { setOnce(&seg.SDKVersion, v) },
	keyOSName:     func(seg *Segment, _ *Span, v string) { setOnce(&seg.OSName, v) },
	keyOSVersion:  func(seg *Segment, _ *Span, v string) { setOnce(&seg.OSVersion, v) },
}

// DecodeSpans reads a span v2 container. Its metadata (release,
// environment, SDK, platform, OS) is read from the first span that carries
// each attribute: SDKs write it on every span of a container they send.
func DecodeSpans(data []byte) (*Segment, error) {
	var c rawContainer
	if err := strictUnmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("span container: %w", err)
	}
	seg := &Segment{Spans: make([]Span, 0, len(c.Items))}
	for i := range c.Items {
		s, err := convertSpanV2(&c.Items[i], fmt.Sprintf("items[%d]", i))
		if err != nil {
			return nil, err
		}
		applySpanV2Metadata(seg, &s)
		s.Name = firstNonEmpty(s.Name, s.Op)
		seg.Spans = append(seg.Spans, s)
	}
	return seg, nil
}

// convertSpanV2 maps one span of a container; where names it in errors.
func convertSpanV2(raw *rawSpanV2, where string) (Span, error) {
	s := Span{TraceID: raw.TraceID, SpanID: raw.SpanID, ParentSpanID: raw.ParentSpanID,
		Name: raw.Name, Status: raw.Status, IsSegment: raw.IsSegment}
	if err := s.readTimes(raw.StartTimestamp, raw.EndTimestamp, "end_timestamp", where); err != nil {
		return Span{}, err
	}
	var err error
	if s.Attributes, err = objectAttributes(raw.Attributes, true); err != nil {
		return Span{}, fmt.Errorf("%s.attributes: %w", where, err)
	}
	return s, nil
}

// applySpanV2Metadata reads the span's metadata attributes (spanV2Metadata).
func applySpanV2Metadata(seg *Segment, s *Span) {
	for _, a := range s.Attributes {
		v, ok := a.Value.(string)
		if apply := spanV2Metadata[a.Key]; ok && apply != nil {
			apply(seg, s, v)
		}
	}
}

func setOnce(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// strictUnmarshal decodes one JSON value and refuses trailing data.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err == nil {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// timestamp reads Sentry's timestamps (translator/internal/sentrytime):
// float seconds since the epoch, read from the decimal text so that
// nanoseconds survive, or RFC 3339; out of int64 nanoseconds' range, refused.
func timestamp(raw json.RawMessage) (int64, error) {
	t, err := sentrytime.Parse(raw)
	return t.UnixNano(), err
}
