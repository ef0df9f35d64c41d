package sentrylog

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// OTelItemType is the envelope item type of one log in OpenTelemetry's
// JSON form, which Sentry's logs spec documents beside its own.
const OTelItemType = "otel_log"

// otelLog is an OpenTelemetry LogRecord in JSON, with the snake_case names
// Sentry's spec writes and the lowerCamelCase of OTLP/JSON.
type otelLog struct {
	TimeUnixNano       json.RawMessage `json:"time_unix_nano"`
	TimeUnixNanoC      json.RawMessage `json:"timeUnixNano"`
	ObservedUnixNano   json.RawMessage `json:"observed_time_unix_nano"`
	ObservedUnixNanoC  json.RawMessage `json:"observedTimeUnixNano"`
	Timestamp          json.RawMessage `json:"timestamp"`
	SeverityText       string          `json:"severity_text"`
	SeverityTextC      string          `json:"severityText"`
	SeverityNumber     int32           `json:"severity_number"`
	SeverityNumberC    int32           `json:"severityNumber"`
	Body               json.RawMessage `json:"body"`
	Attributes         []keyValue      `json:"attributes"`
	TraceID            string          `json:"trace_id"`
	TraceIDC           string          `json:"traceId"`
	SpanID             string          `json:"span_id"`
	SpanIDC            string          `json:"spanId"`
	Flags              uint32          `json:"flags"`
	EventName          string          `json:"event_name"`
	EventNameC         string          `json:"eventName"`
	DroppedAttributes  uint32          `json:"dropped_attributes_count"`
	DroppedAttributesC uint32          `json:"droppedAttributesCount"`
}

type keyValue struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// OTelLogs is the router's contract for an "otel_log" item: its one
// LogRecord, and the resource its sentry.release, sentry.environment,
// sentry.sdk.* and server.address string attributes name. On error it
// gives a *sentrysignal.DecodeError and nothing to append.
func OTelLogs(payload []byte, opts sentrysignal.Options) (sentrysignal.Logs, error) {
	opts = opts.WithDefaults()
	if err := opts.CheckSize(OTelItemType, payload); err != nil {
		return sentrysignal.Logs{}, err
	}
	var l otelLog
	if err := json.Unmarshal(payload, &l); err != nil {
		return sentrysignal.Logs{}, sentrysignal.PayloadError(OTelItemType, "", "not an OpenTelemetry log", err)
	}
	records := plog.NewLogRecordSlice()
	var facts sentrysignal.Facts
	if de := putOTelLog(records.AppendEmpty(), &l, opts, &facts.Resource); de != nil {
		return sentrysignal.Logs{}, de
	}
	return sentrysignal.LogsOf(facts, records), nil
}

func otelFail(field, reason string, err error) *sentrysignal.DecodeError {
	return sentrysignal.PayloadError(OTelItemType, field, reason, err)
}

// putOTelLog maps the log's fields in OTLP's order, noting in res what its
// attributes name of the program.
func putOTelLog(lr plog.LogRecord, l *otelLog, opts sentrysignal.Options, res *sentryresource.Resource) *sentrysignal.DecodeError {
	for _, put := range [...]func(plog.LogRecord, *otelLog) *sentrysignal.DecodeError{putOTelTimes, putOTelSeverity, putOTelIDs} {
		if de := put(lr, l); de != nil {
			return de
		}
	}
	// flags, event_name
	lr.SetFlags(plog.LogRecordFlags(l.Flags))
	lr.SetEventName(l.EventName + l.EventNameC)
	lim := sentrysignal.NewLimiter(opts)
	// body
	if err := putAnyValue(lr.Body(), lim, l.Body, opts.MaxDepth); err != nil {
		return otelFail("body", "not an AnyValue", err)
	}
	if de := putOTelAttributes(lr.Attributes(), lim, l.Attributes, opts.MaxDepth, res); de != nil {
		return de
	}
	// what the sender dropped (dropped_attributes_count), and what the map
	// limits cut
	lr.SetDroppedAttributesCount(saturatingAdd(l.DroppedAttributes+l.DroppedAttributesC, lim.DroppedCount()))
	return nil
}

// putOTelTimes: time_unix_nano (else Sentry's "timestamp" seconds),
// observed_time_unix_nano
func putOTelTimes(lr plog.LogRecord, l *otelLog) *sentrysignal.DecodeError {
	ts, err := unixNano(first(l.TimeUnixNano, l.TimeUnixNanoC))
	if err == nil && ts == 0 && !sentrysignal.IsNull(l.Timestamp) {
		ts, err = sentrysignal.Timestamp(l.Timestamp)
	}
	if err != nil {
		return otelFail("time_unix_nano", "not a timestamp", err)
	}
	lr.SetTimestamp(ts)
	observed, err := unixNano(first(l.ObservedUnixNano, l.ObservedUnixNanoC))
	if err != nil {
		return otelFail("observed_time_unix_nano", "not a timestamp", err)
	}
	lr.SetObservedTimestamp(observed)
	return nil
}

// putOTelSeverity: severity_text, severity_number
func putOTelSeverity(lr plog.LogRecord, l *otelLog) *sentrysignal.DecodeError {
	lr.SetSeverityText(l.SeverityText + l.SeverityTextC)
	lr.SetSeverityNumber(plog.SeverityNumber(l.SeverityNumber + l.SeverityNumberC))
	return nil
}

// putOTelIDs: trace_id, span_id
func putOTelIDs(lr plog.LogRecord, l *otelLog) *sentrysignal.DecodeError {
	if s := l.TraceID + l.TraceIDC; s != "" {
		id, err := sentrysignal.TraceID(s)
		if err != nil {
			return otelFail("trace_id", "not a trace id", err)
		}
		lr.SetTraceID(id)
	}
	if s := l.SpanID + l.SpanIDC; s != "" {
		id, err := sentrysignal.SpanID(s)
		if err != nil {
			return otelFail("span_id", "not a span id", err)
		}
		lr.SetSpanID(id)
	}
	return nil
}

// putOTelAttributes: attributes; beyond the map limit each is still read,
// to refuse the payload on a bad one wherever it is
func putOTelAttributes(m pcommon.Map, lim *sentrysignal.Limiter, kvs []keyValue, depth int, res *sentryresource.Resource) *sentrysignal.DecodeError {
	values, kept := lim.Entries(m, keysOf(kvs))
	for i, kv := range kvs {
		v := values[i]
		if !kept[i] {
			v = pcommon.NewValueEmpty()
		}
		if err := putAnyValue(v, lim, kv.Value, depth); err != nil {
			return otelFail("attributes["+strconv.Itoa(i)+"]", "not an AnyValue", err)
		}
		if kept[i] && v.Type() == pcommon.ValueTypeStr {
			sentrysignal.NoteResourceAttribute(res, kv.Key, v.Str())
		}
	}
	return nil
}

// keysOf lists the keys of key/value pairs in order.
func keysOf(kvs []keyValue) []string {
	keys := make([]string, len(kvs))
	for i, kv := range kvs {
		keys[i] = kv.Key
	}
	return keys
}

// saturatingAdd adds two counts without wrapping past the largest uint32.
func saturatingAdd(a, b uint32) uint32 {
	if a > ^uint32(0)-b {
		return ^uint32(0)
	}
	return a + b
}

func first(a, b json.RawMessage) json.RawMessage {
	if !sentrysignal.IsNull(a) {
		return a
	}
	return b
}

// unixNano reads a uint64 of nanoseconds, as a JSON number or (OTLP/JSON's
// form for 64-bit integers) a string; absent is zero.
func unixNano(raw json.RawMessage) (pcommon.Timestamp, error) {
	if sentrysignal.IsNull(raw) {
		return 0, nil
	}
	text := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, err
		}
	}
	n, err := strconv.ParseUint(text, 10, 64)
	return pcommon.Timestamp(n), err
}

// anyValue is OTLP's AnyValue in JSON, both spellings.
type anyValue struct {
	StringValue  *string         `json:"string_value"`
	StringValueC *string         `json:"stringValue"`
	BoolValue    *bool           `json:"bool_value"`
	BoolValueC   *bool           `json:"boolValue"`
	IntValue     json.RawMessage `json:"int_value"`
	IntValueC    json.RawMessage `json:"intValue"`
	DoubleValue  *float64        `json:"double_value"`
	DoubleValueC *float64        `json:"doubleValue"`
	BytesValue   *string         `json:"bytes_value"`
	BytesValueC  *string         `json:"bytesValue"`
	ArrayValue   *struct {
		Values []json.RawMessage `json:"values"`
	} `json:"array_value"`
	ArrayValueC *struct {
		Values []json.RawMessage `json:"values"`
	} `json:"arrayValue"`
	KVListValue *struct {
		Values []keyValue `json:"values"`
	} `json:"kvlist_value"`
	KVListValueC *struct {
		Values []keyValue `json:"values"`
	} `json:"kvlistValue"`
}

// putAnyValue maps an AnyValue; beyond depth nested values keep their JSON
// text. An empty or absent AnyValue is the empty value.
func putAnyValue(v pcommon.Value, lim *sentrysignal.Limiter, raw json.RawMessage, depth int) error {
	if sentrysignal.IsNull(raw) {
		return nil
	}
	var a anyValue
	if err := json.Unmarshal(raw, &a); err != nil {
		return err
	}
	if done, err := a.putScalar(v); done {
		return err
	}
	switch {
	case !a.isComposite():
	case depth <= 0:
		v.SetStr(string(raw))
	case a.ArrayValue != nil || a.ArrayValueC != nil:
		return putArray(v, lim, a, depth)
	default:
		return putKVList(v, lim, a, depth)
	}
	return nil
}

// putScalar writes a string, bool, int, double or bytes value, in that
// order of precedence; done is false when a holds none of them.
func (a *anyValue) putScalar(v pcommon.Value) (done bool, err error) {
	for _, put := range [...]func(pcommon.Value) (bool, error){a.putString, a.putBool, a.putInt, a.putDouble, a.putBytes} {
		if done, err := put(v); done {
			return true, err
		}
	}
	return false, nil
}

// putString writes string_value.
func (a *anyValue) putString(v pcommon.Value) (bool, error) {
	if a.StringValue == nil && a.StringValueC == nil {
		return false, nil
	}
	v.SetStr(deref(a.StringValue, a.StringValueC))
	return true, nil
}

// putBool writes bool_value.
func (a *anyValue) putBool(v pcommon.Value) (bool, error) {
	if a.BoolValue == nil && a.BoolValueC == nil {
		return false, nil
	}
	v.SetBool(deref(a.BoolValue, a.BoolValueC))
	return true, nil
}

// putInt writes int_value.
func (a *anyValue) putInt(v pcommon.Value) (bool, error) {
	if sentrysignal.IsNull(a.IntValue) && sentrysignal.IsNull(a.IntValueC) {
		return false, nil
	}
	return true, putSignedInt(v, first(a.IntValue, a.IntValueC))
}

// putDouble writes double_value.
func (a *anyValue) putDouble(v pcommon.Value) (bool, error) {
	if a.DoubleValue == nil && a.DoubleValueC == nil {
		return false, nil
	}
	v.SetDouble(deref(a.DoubleValue, a.DoubleValueC))
	return true, nil
}

// putBytes writes bytes_value from its base64 text.
func (a *anyValue) putBytes(v pcommon.Value) (bool, error) {
	if a.BytesValue == nil && a.BytesValueC == nil {
		return false, nil
	}
	b, err := base64.StdEncoding.DecodeString(deref(a.BytesValue, a.BytesValueC))
	if err != nil {
		return true, err
	}
	v.SetEmptyBytes().FromRaw(b)
	return true, nil
}

// isComposite says whether a holds an array or a key/value list.
func (a *anyValue) isComposite() bool {
	return a.ArrayValue != nil || a.ArrayValueC != nil || a.KVListValue != nil || a.KVListValueC != nil
}

func putArray(v pcommon.Value, lim *sentrysignal.Limiter, a anyValue, depth int) error {
	arr := a.ArrayValue
	if arr == nil {
		arr = a.ArrayValueC
	}
	s := v.SetEmptySlice()
	for i, e := range arr.Values {
		if err := putAnyValue(s.AppendEmpty(), lim, e, depth-1); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return nil
}

func putKVList(v pcommon.Value, lim *sentrysignal.Limiter, a anyValue, depth int) error {
	kv := a.KVListValue
	if kv == nil {
		kv = a.KVListValueC
	}
	values, kept := lim.Entries(v.SetEmptyMap(), keysOf(kv.Values))
	for i, e := range kv.Values {
		ev := values[i]
		if !kept[i] {
			ev = pcommon.NewValueEmpty()
		}
		if err := putAnyValue(ev, lim, e.Value, depth-1); err != nil {
			return fmt.Errorf("%s: %w", e.Key, err)
		}
	}
	return nil
}

// putSignedInt reads an int64 written as a JSON number or, as OTLP/JSON
// writes 64-bit integers, a string.
func putSignedInt(v pcommon.Value, raw json.RawMessage) error {
	text := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return err
		}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return err
	}
	v.SetInt(n)
	return nil
}

func deref[T any](a, b *T) T {
	if a != nil {
		return *a
	}
	return *b
}
