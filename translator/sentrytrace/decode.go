package sentrytrace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

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
	seg := &Segment{
		EventID: tx.EventID, Platform: tx.Platform, Release: tx.Release, Environment: tx.Environment, Dist: tx.Dist,
		SDKName: tx.SDK.Name, SDKVersion: tx.SDK.Version,
		OSName: tx.Contexts.OS.Name, OSVersion: tx.Contexts.OS.Version,
		RuntimeName: tx.Contexts.Runtime.Name, RuntimeVersion: tx.Contexts.Runtime.Version,
		DeviceArch: tx.Contexts.Device.Arch, DeviceModel: tx.Contexts.Device.Model, DeviceMaker: tx.Contexts.Device.Manufacturer,
	}
	user, err := userAttributes(tx.User, tx.Request)
	if err != nil {
		return nil, err
	}
	seg.User = user

	root := tx.Contexts.Trace
	if root.TraceID == "" || root.SpanID == "" {
		return nil, errors.New("transaction: contexts.trace needs trace_id and span_id")
	}
	// The transaction's own times and tags belong to its root span.
	root.StartTimestamp, root.Timestamp, root.Tags = tx.StartTimestamp, tx.Timestamp, tx.Tags
	segment, err := convertSpan(root, tx.Transaction, "contexts.trace")
	if err != nil {
		return nil, err
	}
	segment.IsSegment = true
	segment.ProfilerID = firstNonEmpty(tx.Contexts.Profile.ProfilerID, tx.Contexts.Profile.ProfilerIDDotted,
		profilerIDOf(segment.Attributes))
	for name, m := range tx.Measurements {
		segment.Measurements = append(segment.Measurements, Measurement{Name: name, Value: m.Value, Unit: m.Unit})
	}
	sort.Slice(segment.Measurements, func(i, j int) bool { return segment.Measurements[i].Name < segment.Measurements[j].Name })
	seg.Spans = append(make([]Span, 0, 1+len(tx.Spans)), segment)

	for i, raw := range tx.Spans {
		if raw.TraceID == "" {
			raw.TraceID = root.TraceID
		}
		s, err := convertSpan(raw, raw.Description, fmt.Sprintf("spans[%d]", i))
		if err != nil {
			return nil, err
		}
		if s.Name == "" {
			s.Name = s.Op
		}
		s.ProfilerID = firstNonEmpty(profilerIDOf(s.Attributes), segment.ProfilerID)
		seg.Spans = append(seg.Spans, s)
	}
	return seg, nil
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
		for _, a := range attrs {
			if v, ok := a.Value.(string); ok && a.Key == key && v != "" {
				return v
			}
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

func convertSpan(raw rawSpan, name, where string) (Span, error) {
	s := Span{
		TraceID: raw.TraceID, SpanID: raw.SpanID, ParentSpanID: raw.ParentSpanID,
		Name: name, Op: raw.Op, Origin: raw.Origin, Status: raw.Status,
	}
	if s.TraceID == "" || s.SpanID == "" {
		return Span{}, fmt.Errorf("%s: trace_id and span_id are required", where)
	}
	var err error
	if s.Start, err = timestamp(raw.StartTimestamp); err != nil {
		return Span{}, fmt.Errorf("%s.start_timestamp: %w", where, err)
	}
	if s.End, err = timestamp(raw.Timestamp); err != nil {
		return Span{}, fmt.Errorf("%s.timestamp: %w", where, err)
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

// DecodeSpans reads a span v2 container. Its metadata (release,
// environment, SDK, platform, OS) is read from the first span that carries
// each attribute: SDKs write it on every span of a container they send.
func DecodeSpans(data []byte) (*Segment, error) {
	var c rawContainer
	if err := strictUnmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("span container: %w", err)
	}
	seg := &Segment{Spans: make([]Span, 0, len(c.Items))}
	for i, raw := range c.Items {
		where := fmt.Sprintf("items[%d]", i)
		s := Span{TraceID: raw.TraceID, SpanID: raw.SpanID, ParentSpanID: raw.ParentSpanID,
			Name: raw.Name, Status: raw.Status, IsSegment: raw.IsSegment}
		if s.TraceID == "" || s.SpanID == "" {
			return nil, fmt.Errorf("%s: trace_id and span_id are required", where)
		}
		var err error
		if s.Start, err = timestamp(raw.StartTimestamp); err != nil {
			return nil, fmt.Errorf("%s.start_timestamp: %w", where, err)
		}
		if s.End, err = timestamp(raw.EndTimestamp); err != nil {
			return nil, fmt.Errorf("%s.end_timestamp: %w", where, err)
		}
		if s.Attributes, err = objectAttributes(raw.Attributes, true); err != nil {
			return nil, fmt.Errorf("%s.attributes: %w", where, err)
		}
		for _, a := range s.Attributes {
			v, ok := a.Value.(string)
			if !ok {
				continue
			}
			switch a.Key {
			case keyOp:
				s.Op = v
			case keyOrigin:
				s.Origin = v
			case keyProfilerID:
				s.ProfilerID = v
			case keyRelease:
				setOnce(&seg.Release, v)
			case keyEnv:
				setOnce(&seg.Environment, v)
			case keyPlatform:
				setOnce(&seg.Platform, v)
			case keyDist:
				setOnce(&seg.Dist, v)
			case keySDKName:
				setOnce(&seg.SDKName, v)
			case keySDKVersion:
				setOnce(&seg.SDKVersion, v)
			case keyOSName:
				setOnce(&seg.OSName, v)
			case keyOSVersion:
				setOnce(&seg.OSVersion, v)
			}
		}
		if s.Name == "" {
			s.Name = s.Op
		}
		seg.Spans = append(seg.Spans, s)
	}
	return seg, nil
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

// objectAttributes reads "data" (key → value) or, typed, span v2
// "attributes" (key → {"type", "value"}), in key order.
func objectAttributes(raw json.RawMessage, typed bool) ([]Attribute, error) {
	if isNull(raw) {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	out := make([]Attribute, 0, len(obj))
	for k, v := range obj {
		if typed {
			var tv struct {
				Value json.RawMessage `json:"value"`
			}
			if err := json.Unmarshal(v, &tv); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			v = tv.Value
		}
		if isNull(v) {
			continue
		}
		val, err := value(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out = append(out, Attribute{Key: k, Value: val})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// tagAttributes reads "tags": an object, or the array of [key, value] pairs
// some SDKs write. Tag values are strings in Sentry; others are printed.
func tagAttributes(raw json.RawMessage) ([]Attribute, error) {
	if isNull(raw) {
		return nil, nil
	}
	var out []Attribute
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		var pairs [][2]json.RawMessage
		if err := json.Unmarshal(raw, &pairs); err != nil {
			return nil, err
		}
		for _, p := range pairs {
			var k string
			if err := json.Unmarshal(p[0], &k); err != nil {
				return nil, err
			}
			out = append(out, Attribute{Key: k, Value: tagText(p[1])})
		}
	} else {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, err
		}
		for k, v := range obj {
			out = append(out, Attribute{Key: k, Value: tagText(v)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func tagText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// mergeAttributes adds the tags whose keys data does not have; both are
// sorted by key, and so is the result.
func mergeAttributes(data, tags []Attribute) []Attribute {
	if len(tags) == 0 {
		return data
	}
	have := make(map[string]bool, len(data))
	for _, a := range data {
		have[a.Key] = true
	}
	for _, t := range tags {
		if !have[t.Key] {
			have[t.Key] = true
			data = append(data, t)
		}
	}
	sort.SliceStable(data, func(i, j int) bool { return data[i].Key < data[j].Key })
	return data
}

// userAttributes reads the PII-bearing "user" and "request" into
// attributes under semantic-convention names where one exists.
func userAttributes(user, request json.RawMessage) ([]Attribute, error) {
	var out []Attribute
	if !isNull(user) {
		var u struct {
			ID        json.RawMessage `json:"id"`
			Email     string          `json:"email"`
			Username  string          `json:"username"`
			IPAddress string          `json:"ip_address"`
		}
		if err := json.Unmarshal(user, &u); err != nil {
			return nil, fmt.Errorf("user: %w", err)
		}
		if !isNull(u.ID) {
			out = append(out, Attribute{Key: "user.id", Value: tagText(u.ID)})
		}
		if u.IPAddress == "{{auto}}" {
			u.IPAddress = "" // Sentry's "take it from the connection": not an address
		}
		for _, a := range []Attribute{{"user.email", u.Email}, {"user.name", u.Username}, {"client.address", u.IPAddress}} {
			if a.Value != "" {
				out = append(out, a)
			}
		}
	}
	if !isNull(request) {
		var r struct {
			URL     string          `json:"url"`
			Method  string          `json:"method"`
			Headers json.RawMessage `json:"headers"`
		}
		if err := json.Unmarshal(request, &r); err != nil {
			return nil, fmt.Errorf("request: %w", err)
		}
		for _, a := range []Attribute{{"url.full", r.URL}, {"http.request.method", r.Method}} {
			if a.Value != "" {
				out = append(out, a)
			}
		}
		headers, err := tagAttributes(r.Headers)
		if err != nil {
			return nil, fmt.Errorf("request.headers: %w", err)
		}
		for _, h := range headers {
			out = append(out, Attribute{Key: "http.request.header." + strings.ToLower(h.Key), Value: h.Value})
		}
	}
	return out, nil
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// value converts a JSON value to an attribute value: objects become their
// JSON text, since OTLP maps would let a client nest without bound.
func value(raw json.RawMessage) (any, error) {
	t := bytes.TrimSpace(raw)
	switch t[0] {
	case '"':
		var s string
		err := json.Unmarshal(t, &s)
		return s, err
	case 't', 'f':
		var b bool
		err := json.Unmarshal(t, &b)
		return b, err
	case '{':
		if !json.Valid(t) {
			return nil, errors.New("invalid object")
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, t); err != nil {
			return nil, err
		}
		return buf.String(), nil
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(t, &elems); err != nil {
			return nil, err
		}
		out := make([]any, 0, len(elems))
		for _, e := range elems {
			if isNull(e) {
				continue
			}
			v, err := value(e)
			if err != nil {
				return nil, err
			}
			if _, nested := v.([]any); nested {
				v = string(bytes.TrimSpace(e)) // arrays of arrays: their JSON text
			}
			out = append(out, v)
		}
		return out, nil
	}
	return number(string(t))
}

// number reads an integer as int64 when it is one that fits, else float64.
func number(text string) (any, error) {
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, fmt.Errorf("not a JSON value: %.40s", text)
	}
	if math.IsInf(f, 0) {
		return nil, fmt.Errorf("number out of range: %.40s", text)
	}
	return f, nil
}
