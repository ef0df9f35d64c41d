package translator

// Threads and queues: "samples"[]."thread_id", "thread_metadata",
// "queue_metadata", "samples"[]."queue_address" and "state" ⇄ sample
// attributes thread.id, sentry.thread.id, thread.name,
// sentry.thread.priority, sentry.thread.active, sentry.queue.address,
// sentry.queue.label, sentry.thread.state (and the profile attributes
// sentry.thread_metadata, sentry.queue_metadata). Receive: threadOfProfile,
// threadMetadataAttr, queueMetadataAttr. Export: sampleThreadAttrs,
// threadMetadataOf, queueMetadataFromAttr.

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// threadFields is what a thread of a profile maps to: its samples'
// attributes.
type threadFields struct {
	// "samples"[]."thread_id" → thread.id (int) when it is a decimal or
	// 0x-hex integer, and sentry.thread.id (verbatim) when it is not
	// canonical decimal.
	number    int64
	hasNumber bool
	verbatim  string
	// "thread_metadata"[id]."name" → thread.name, ."priority" →
	// sentry.thread.priority.
	name        string
	priority    int64
	hasPriority bool
	// "transaction"."active_thread_id" → sentry.thread.active.
	active bool
}

// threadOfProfile maps thread id of p; active are the ids of the
// transactions' active threads (activeThreads).
func threadOfProfile(p *sentry.Profile, id string, active []string) threadFields {
	var t threadFields
	t.number, t.hasNumber = threadIDNumber(id)
	if !isDecimalThreadID(id) {
		t.verbatim = id
	}
	for i := range p.ThreadMetadata {
		if tm := &p.ThreadMetadata[i]; tm.ThreadID == id {
			t.name, t.priority, t.hasPriority = tm.Name, tm.Priority, tm.HasPriority
			break
		}
	}
	t.active = slices.Contains(active, id)
	return t
}

// activeThreads: "transaction"."active_thread_id" (of every transaction)
// → sentry.thread.active on that thread's samples.
func activeThreads(p *sentry.Profile) []string {
	var ids []string
	for _, t := range p.Transactions {
		if t.ActiveThreadID != "" {
			ids = append(ids, t.ActiveThreadID)
		}
	}
	return ids
}

// isDecimalThreadID reports whether id is exactly the decimal text of an
// int64, so that the integer thread.id gives it back unchanged.
func isDecimalThreadID(id string) bool {
	n, err := strconv.ParseInt(id, 10, 64)
	return err == nil && strconv.FormatInt(n, 10) == id
}

// threadIDNumber returns the integer value of a decimal or 0x-hex thread id
// that fits thread.id (an int64).
func threadIDNumber(id string) (int64, bool) {
	if n, err := strconv.ParseInt(id, 10, 64); err == nil {
		return n, true
	}
	if h, ok := strings.CutPrefix(strings.ToLower(id), "0x"); ok {
		if n, err := strconv.ParseInt(h, 16, 64); err == nil {
			return n, true
		}
	}
	return 0, false
}

// threadMetadataAttr: "thread_metadata" → profile attribute
// sentry.thread_metadata (map thread id → {name, priority}), which also
// keeps threads without samples. Back: threadMetadataOf.
func threadMetadataAttr(p *sentry.Profile) profileAttr {
	if len(p.ThreadMetadata) == 0 {
		return profileAttr{}
	}
	v, m := newMapValue(len(p.ThreadMetadata))
	for _, tm := range p.ThreadMetadata {
		e := m.PutEmptyMap(tm.ThreadID)
		putNonEmpty(e, keyName, tm.Name) // "name"
		if tm.HasPriority {
			e.PutInt(keyPriority, tm.Priority) // "priority"
		}
	}
	return profileAttr{key: attrThreadMetadata, value: v}
}

// queueMetadataAttr: "queue_metadata" (cocoa) → profile attribute
// sentry.queue_metadata (map address → {label}). Back: queueMetadataFromAttr.
func queueMetadataAttr(p *sentry.Profile) profileAttr {
	if len(p.QueueMetadata) == 0 {
		return profileAttr{}
	}
	v, m := newMapValue(len(p.QueueMetadata))
	for _, q := range p.QueueMetadata {
		putNonEmpty(m.PutEmptyMap(q.Address), keyLabel, q.Label) // "label"
	}
	return profileAttr{key: attrQueueMetadata, value: v}
}

// threadInfo is one thread of a profile, from the sample attributes.
type threadInfo struct {
	id          string
	name        string
	priority    int64
	hasPriority bool
}

// sampleThreadAttrs reads a sample's attributes: its thread (sentry.thread.id, else
// thread.id, else one synthetic thread "0" for every sample without one)
// with thread.name and sentry.thread.priority, its sentry.queue.address →
// "queue_address" and its sentry.thread.state → "state".
func sampleThreadAttrs(indices pcommon.Int32Slice, dv *dictionaryView) (t threadInfo, queue, state string) {
	roles, vals := dv.attrRoles, dv.attrVals
	var numeric int64
	hasNumeric := false
	for i := range indices.Len() {
		idx := indices.At(i)
		if idx <= 0 || int(idx) >= len(roles) {
			continue
		}
		v := vals[idx]
		switch roles[idx] {
		case roleSentryThreadID:
			if v.Type() == pcommon.ValueTypeStr {
				t.id = v.Str()
			}
		case roleThreadID:
			if v.Type() == pcommon.ValueTypeInt {
				numeric, hasNumeric = v.Int(), true
			} else if v.Type() == pcommon.ValueTypeStr {
				t.id = cmp.Or(t.id, v.Str())
			}
		case roleThreadName:
			t.name = v.AsString()
		case roleThreadPriority:
			if v.Type() == pcommon.ValueTypeInt {
				t.priority, t.hasPriority = v.Int(), true
			}
		case roleQueueAddress:
			queue = v.AsString()
		case roleThreadState:
			state = v.AsString()
		}
	}
	switch {
	case t.id != "":
	case hasNumeric:
		t.id = strconv.FormatInt(numeric, 10)
	default:
		t.id = "0"
	}
	return t, queue, state
}

// threadMetadataOf: profile attribute sentry.thread_metadata →
// "thread_metadata" as received; for profiles from other sources, the
// used threads' thread.name and sentry.thread.priority → "name",
// "priority".
func threadMetadataOf(attrs *profileAttrs, threads []threadInfo, usedThreads []bool) []sentry.ThreadMetadata {
	var out []sentry.ThreadMetadata
	if attrs.hasThreads {
		for id, v := range attrs.threadMetadata.All() {
			tm := sentry.ThreadMetadata{ThreadID: id}
			if v.Type() == pcommon.ValueTypeMap {
				tm.Name = mapStr(v.Map(), keyName)
				if pr, ok := v.Map().Get(keyPriority); ok && pr.Type() == pcommon.ValueTypeInt {
					tm.Priority, tm.HasPriority = pr.Int(), true
				}
			}
			out = append(out, tm)
		}
		return out
	}
	for i, t := range threads {
		if usedThreads[i] && (t.name != "" || t.hasPriority) {
			out = append(out, sentry.ThreadMetadata{
				ThreadID: t.id, Name: t.name, Priority: t.priority, HasPriority: t.hasPriority,
			})
		}
	}
	return out
}

// queueMetadataFromAttr: profile attribute sentry.queue_metadata →
// "queue_metadata" (address → "label").
func queueMetadataFromAttr(m pcommon.Map) []sentry.QueueMetadata {
	var out []sentry.QueueMetadata
	for addr, v := range m.All() {
		q := sentry.QueueMetadata{Address: addr}
		if v.Type() == pcommon.ValueTypeMap {
			q.Label = mapStr(v.Map(), keyLabel)
		}
		out = append(out, q)
	}
	return out
}

// idleOfSample reports whether a sample's attributes mark it idle
// (sentry.sample.idle = true): the SDK sent it with an empty stack, and
// its stack is the one Sentry shows it with (receive_idle.go). The
// exporter writes such a sample back with an empty stack.
func idleOfSample(indices pcommon.Int32Slice, dv *dictionaryView) bool {
	roles, vals := dv.attrRoles, dv.attrVals
	for i := range indices.Len() {
		idx := indices.At(i)
		if idx > 0 && int(idx) < len(roles) && roles[idx] == roleSampleIdle {
			v := vals[idx]
			return v.Type() == pcommon.ValueTypeBool && v.Bool()
		}
	}
	return false
}
