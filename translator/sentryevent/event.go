package sentryevent

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// ItemType is the envelope item type this package reads.
const ItemType = "event"

// Event is one decoded event: its members as JSON values, and the fields
// the mapping and a resource builder read from them.
type Event struct {
	// Doc holds every top-level member, decoded by sentrysignal.DecodeAny.
	Doc map[string]any
	// EventID is "event_id" as 32 lower-case hex digits; empty when absent.
	EventID string
	// Timestamp is "timestamp"; zero when absent (Relay then uses the time
	// it received the event).
	Timestamp pcommon.Timestamp
	// TraceID and SpanID are contexts.trace.trace_id and span_id.
	TraceID pcommon.TraceID
	SpanID  pcommon.SpanID
	// Resource holds release, environment, dist, platform, server_name,
	// sdk and the os, runtime and device contexts.
	Resource sentryresource.Resource
}

// Decode reads one event payload. It fails on what would make the record
// wrong (not a JSON object, an event id, timestamp or trace context that is
// not one); members of unexpected types are kept as they are.
func Decode(payload []byte, opts sentrysignal.Options) (*Event, error) {
	return DecodeItem(ItemType, payload, opts)
}

// DecodeItem is Decode for items of other types with an event's shape
// ("feedback"); item names the type in errors.
func DecodeItem(item string, payload []byte, opts sentrysignal.Options) (*Event, error) {
	doc, err := sentrysignal.DecodeObject(item, payload, opts)
	if err != nil {
		return nil, err
	}
	ev := &Event{Doc: doc}
	for _, read := range [...]func(string) error{ev.readEventID, ev.readTimestamp, ev.readTrace} {
		if err := read(item); err != nil {
			return nil, err
		}
	}
	ev.Resource = sentrysignal.ResourceOfEvent(doc)
	return ev, nil
}

// readEventID reads "event_id": null or absent is none.
func (ev *Event) readEventID(item string) error {
	if ev.Doc["event_id"] == nil {
		return nil
	}
	id, ok := sentrysignal.EventID(sentrysignal.Str(ev.Doc, "event_id"))
	if !ok {
		return sentrysignal.PayloadError(item, "event_id", "not a 32-hex-digit id", nil)
	}
	ev.EventID = id
	return nil
}

// readTimestamp reads "timestamp": null or absent is none.
func (ev *Event) readTimestamp(item string) error {
	raw := ev.Doc["timestamp"]
	if raw == nil {
		return nil
	}
	ts, err := sentrysignal.TimestampOf(raw)
	if err != nil {
		return sentrysignal.PayloadError(item, "timestamp", "not a timestamp", err)
	}
	ev.Timestamp = ts
	return nil
}

// readTrace reads contexts.trace.{trace_id,span_id}; an id that is present
// but not one fails, since a record linked to the wrong trace is worse than
// none.
func (ev *Event) readTrace(item string) error {
	var err error
	ev.TraceID, ev.SpanID, err = sentrysignal.TraceContext(item, ev.Doc)
	return err
}
