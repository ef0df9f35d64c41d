package profilesout

// Threads and queues: "samples"[]."thread_id", "thread_metadata",
// "queue_metadata", "samples"[]."queue_address" and "state" ⇄ sample
// attributes thread.id, sentry.thread.id, thread.name,
// sentry.thread.priority, sentry.thread.active, sentry.queue.address,
// sentry.queue.label, sentry.thread.state (and the profile attributes
// sentry.thread_metadata, sentry.queue_metadata). Here: sampleThreadAttrs,
// threadMetadataOf, queueMetadataFromAttr; the way in is
// profilesin/thread.go.

import (
	"cmp"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/profileschema"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

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
	roles, vals := dv.attrRoles, dv.attrs.Values
	var st sampleThread
	for i := range indices.Len() {
		if idx := indices.At(i); idx > 0 && int(idx) < len(roles) {
			st.put(roles[idx], vals[idx])
		}
	}
	return st.thread(), st.queue, st.state
}

// sampleThread is what a sample's attributes say of its thread, queue and
// state.
type sampleThread struct {
	info         threadInfo
	numeric      int64
	hasNumeric   bool
	queue, state string
}

// put maps one sample attribute: sentry.thread.id (verbatim), thread.id
// (an integer, or text), thread.name → "name", sentry.thread.priority →
// "priority", sentry.queue.address → "queue_address", sentry.thread.state
// → "state".
func (st *sampleThread) put(role attrRole, v pcommon.Value) {
	switch role {
	case roleSentryThreadID:
		st.putSentryThreadID(v)
	case roleThreadID:
		st.putThreadID(v)
	case roleThreadName:
		st.info.name = v.AsString()
	case roleThreadPriority:
		st.putPriority(v)
	case roleQueueAddress:
		st.queue = v.AsString()
	case roleThreadState:
		st.state = v.AsString()
	}
}

// putPriority reads sentry.thread.priority, an integer.
func (st *sampleThread) putPriority(v pcommon.Value) {
	if v.Type() == pcommon.ValueTypeInt {
		st.info.priority, st.info.hasPriority = v.Int(), true
	}
}

// putSentryThreadID reads sentry.thread.id, a string: the thread id as
// the SDK sent it, over thread.id.
func (st *sampleThread) putSentryThreadID(v pcommon.Value) {
	if v.Type() == pcommon.ValueTypeStr {
		st.info.id = v.Str()
	}
}

// putThreadID reads thread.id: an integer, or text when sentry.thread.id
// gave none.
func (st *sampleThread) putThreadID(v pcommon.Value) {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		st.numeric, st.hasNumeric = v.Int(), true
	case pcommon.ValueTypeStr:
		st.info.id = cmp.Or(st.info.id, v.Str())
	}
}

// thread is the sample's thread: its "thread_id" is sentry.thread.id, else
// thread.id, else "0", one synthetic thread for every sample without one.
func (st *sampleThread) thread() threadInfo {
	t := st.info
	switch {
	case t.id != "":
	case st.hasNumeric:
		t.id = strconv.FormatInt(st.numeric, 10)
	default:
		t.id = "0"
	}
	return t
}

// threadMetadataOf: profile attribute sentry.thread_metadata →
// "thread_metadata" as received; for profiles from other sources, the
// used threads' thread.name and sentry.thread.priority → "name",
// "priority".
func threadMetadataOf(attrs *profileAttrs, threads []threadInfo, usedThreads []bool) []sentry.ThreadMetadata {
	if attrs.hasThreads {
		return threadMetadataFromAttr(attrs.threadMetadata)
	}
	var out []sentry.ThreadMetadata
	for i, t := range threads {
		if usedThreads[i] && (t.name != "" || t.hasPriority) {
			out = append(out, sentry.ThreadMetadata{
				ThreadID: t.id, Name: t.name, Priority: t.priority, HasPriority: t.hasPriority,
			})
		}
	}
	return out
}

// threadMetadataFromAttr: profile attribute sentry.thread_metadata (thread
// id → {name, priority}) → "thread_metadata".
func threadMetadataFromAttr(m pcommon.Map) []sentry.ThreadMetadata {
	var out []sentry.ThreadMetadata
	for id, v := range m.All() {
		tm := sentry.ThreadMetadata{ThreadID: id}
		if v.Type() == pcommon.ValueTypeMap {
			tm.Name = profileschema.MapStr(v.Map(), profileschema.KeyName)
			if pr, ok := v.Map().Get(profileschema.KeyPriority); ok && pr.Type() == pcommon.ValueTypeInt {
				tm.Priority, tm.HasPriority = pr.Int(), true
			}
		}
		out = append(out, tm)
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
			q.Label = profileschema.MapStr(v.Map(), profileschema.KeyLabel)
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
	v, ok := dv.firstOfRole(indices, roleSampleIdle)
	return ok && v.Type() == pcommon.ValueTypeBool && v.Bool()
}
