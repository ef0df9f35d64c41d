package sentryevent

import (
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/stacktrace"
)

// The router's path: the event read once into a sentrysignal.Payload and
// its members written from it into the record, with no map[string]any
// tree between (Decode and PutLogRecord, which build and walk the tree,
// stay for the feedback item, which edits the tree first). The record is
// the one PutLogRecord writes; TestPayloadMatchesTree and
// FuzzPayloadMatchesTree hold the two paths to that.

// Logs is the router's contract for an "event" item (or a /store/ body):
// the event's resource and id, and its one record.
func Logs(payload []byte, opts sentrysignal.Options) (sentrysignal.Logs, error) {
	ev, err := readPayloadEvent(ItemType, payload, opts)
	if err != nil {
		return sentrysignal.Logs{}, err
	}
	return sentrysignal.Logs{
		Facts: sentrysignal.Facts{Resource: ev.Resource, EventID: ev.EventID},
		Append: func(dst plog.LogRecordSlice) int {
			ev.putLogRecord(dst.AppendEmpty(), opts)
			ev.p.Release()
			return 1
		},
	}, nil
}

// payloadEvent is an event read as a Payload: its header fields and
// resource read (in Event, whose Doc is nil), its top-level members
// sorted by key, as the record writes them.
type payloadEvent struct {
	Event
	p       *sentrysignal.Payload
	members []sentrysignal.NodeMember
}

// readPayloadEvent reads an event as DecodeItem does: the same errors
// for the same payloads, the same fields.
func readPayloadEvent(item string, payload []byte, opts sentrysignal.Options) (*payloadEvent, error) {
	p, err := sentrysignal.ReadObject(item, payload, opts)
	if err != nil {
		return nil, err
	}
	ev := &payloadEvent{p: p, members: p.SortedMembers(p.Root())}
	for _, read := range [...]func(string) error{ev.readEventID, ev.readTimestamp, ev.readTrace} {
		if err := read(item); err != nil {
			p.Release()
			return nil, err
		}
	}
	ev.Resource = sentrysignal.ResourceOfEventPayload(p, p.Root())
	return ev, nil
}

// member is the top-level member key; NoNode when it is absent or null.
func (ev *payloadEvent) member(key string) sentrysignal.Node {
	i, found := slices.BinarySearchFunc(ev.members, key, func(m sentrysignal.NodeMember, k string) int {
		return strings.Compare(m.Key, k)
	})
	if !found {
		return sentrysignal.NoNode
	}
	return ev.members[i].Value
}

// readEventID reads "event_id": null or absent is none.
func (ev *payloadEvent) readEventID(item string) error {
	n := ev.member("event_id")
	if n == sentrysignal.NoNode {
		return nil
	}
	id, ok := sentrysignal.EventID(ev.p.Str(n))
	if !ok {
		return sentrysignal.PayloadError(item, "event_id", "not a 32-hex-digit id", nil)
	}
	ev.EventID = id
	return nil
}

// readTimestamp reads "timestamp": null or absent is none.
func (ev *payloadEvent) readTimestamp(item string) error {
	n := ev.member("timestamp")
	if n == sentrysignal.NoNode {
		return nil
	}
	ts, err := sentrysignal.TimestampOf(ev.p.Any(n))
	if err != nil {
		return sentrysignal.PayloadError(item, "timestamp", "not a timestamp", err)
	}
	ev.Timestamp = ts
	return nil
}

// readTrace reads contexts.trace.{trace_id,span_id} (see Event.readTrace).
func (ev *payloadEvent) readTrace(item string) error {
	var err error
	ev.TraceID, ev.SpanID, err = sentrysignal.TraceContextOf(item, ev.p, ev.p.Root())
	return err
}

// object is the member key as a decoded object; nil when it is not one.
// The small members the mapping reads field by field (the message, the
// tags, user and request) are decoded; the large ones are written from
// the payload.
func (ev *payloadEvent) object(key string) map[string]any {
	obj, _ := ev.p.Any(ev.member(key)).(map[string]any)
	return obj
}

// putLogRecord writes the event into lr as PutLogRecord writes it.
func (ev *payloadEvent) putLogRecord(lr plog.LogRecord, opts sentrysignal.Options) {
	opts = opts.WithDefaults()
	l := sentrysignal.NewLimiter(opts)
	attrs := lr.Attributes()
	attrs.EnsureCapacity(min(len(ev.members)+8, opts.MaxMapEntries))
	ev.putHeader(lr, l, ev.p.Str(ev.member("level")))
	msg := putMessage(lr, l, opts, ev.readMessage(), ev.readExceptions())
	// "tags" → sentry.tags.<key>
	putTags(attrs, l, ev.p.Any(ev.member("tags")), opts.MaxDepth)
	// "user", "request": personal data
	if opts.IncludeUserData {
		putUser(attrs, l, ev.object("user"), opts.MaxDepth)
		putRequest(attrs, l, ev.object("request"), opts.MaxDepth)
	}
	// every other member → sentry.<member>, frame vars only with personal data
	ev.putOthers(attrs, l, msg.member, opts)
	// what the map limits cut
	lr.SetDroppedAttributesCount(l.DroppedCount())
}

// readMessage is readMessage of the event's "logentry" and "message".
func (ev *payloadEvent) readMessage() message {
	doc := make(map[string]any, 2)
	for _, k := range [...]string{"logentry", "message"} {
		if n := ev.member(k); n != sentrysignal.NoNode {
			doc[k] = ev.p.Any(n)
		}
	}
	return readMessage(doc)
}

// readExceptions is readExceptions of the payload's "exception".
func (ev *payloadEvent) readExceptions() exceptionChain {
	p := ev.p
	values := p.Values(ev.member("exception"))
	var chain exceptionChain
	for e := range p.Elements(values) {
		if p.Kind(e) == sentrysignal.KindObject {
			chain = append(chain, ev.readException(e))
		}
	}
	return chain
}

// readException is readException of an entry of "exception.values".
func (ev *payloadEvent) readException(e sentrysignal.Node) exception {
	p := ev.p
	synthetic, _ := p.Bool(p.Member(p.Member(e, "mechanism"), "synthetic"))
	ex := exception{Exception: stacktrace.Exception{Type: p.Str(p.Member(e, "type")), Value: p.Text(p.Member(e, "value"))}, synthetic: synthetic}
	for f := range p.Elements(p.Member(p.Member(e, "stacktrace"), "frames")) {
		if p.Kind(f) == sentrysignal.KindObject {
			ex.Frames = append(ex.Frames, ev.frame(f))
		}
	}
	return ex
}

// frame is frameOf of a frame of the payload, its members read in one
// pass (the last one sent of a key counts, as in the decoded map).
func (ev *payloadEvent) frame(f sentrysignal.Node) stacktrace.Frame {
	var fr stacktrace.Frame
	for k, v := range ev.p.Members(f) {
		setFrameMember(&fr, ev.p, k, v)
	}
	return fr
}

// setFrameMember reads one member of a frame, if the stack trace text
// shows it.
func setFrameMember(fr *stacktrace.Frame, p *sentrysignal.Payload, key string, v sentrysignal.Node) {
	switch key {
	case "function":
		fr.Function = p.Str(v)
	case "abs_path":
		fr.AbsPath = p.Str(v)
	case "filename":
		fr.Filename = p.Str(v)
	case "module":
		fr.Module = p.Str(v)
	case "lineno":
		fr.Lineno = frameInt(p, v)
	case "colno":
		fr.Colno = frameInt(p, v)
	}
}

// frameInt is a frame's "lineno" or "colno"; 0, no position, when it is
// not an integer.
func frameInt(p *sentrysignal.Payload, v sentrysignal.Node) int {
	n, _ := p.Int(v)
	return int(n)
}

// putOthers is putOthers of the payload's members.
func (ev *payloadEvent) putOthers(attrs pcommon.Map, l *sentrysignal.Limiter, messageMember string, opts sentrysignal.Options) {
	for _, m := range ev.members {
		if !ev.mappedElsewhere(m, messageMember) {
			ev.putOther(attrs, l, m.Key, m.Value, opts)
		}
	}
}

// mappedElsewhere is mappedElsewhere of a member (null ones are not
// among ev.members).
func (ev *payloadEvent) mappedElsewhere(m sentrysignal.NodeMember, messageMember string) bool {
	k := m.Key
	if specialMembers[k] || resourceMembers[k] || k == messageMember {
		return true
	}
	return k == "level" && ev.p.Kind(m.Value) == sentrysignal.KindString
}

// putOther is putOther of a member written from the payload.
func (ev *payloadEvent) putOther(attrs pcommon.Map, l *sentrysignal.Limiter, k string, n sentrysignal.Node, opts sentrysignal.Options) {
	depth := opts.MaxDepth
	if shapedInterfaces[k] {
		depth += interfaceDepth
	}
	var omit *sentrysignal.Omission
	if (k == "exception" || k == "threads") && !opts.IncludeUserData {
		omit = &omitFrameVars
	}
	if listInterfaces[k] && ev.p.Kind(n) == sentrysignal.KindArray {
		l.PutNodeValues(attrs, AttrPrefix+k, ev.p, n, depth, omit)
		return
	}
	l.PutNode(attrs, AttrPrefix+k, ev.p, n, depth, omit)
}
