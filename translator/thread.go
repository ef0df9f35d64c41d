package translator

// Threads and queues: "samples"[]."thread_id", "thread_metadata",
// "queue_metadata", "samples"[]."queue_address" and "state" ⇄ sample
// attributes thread.id, sentry.thread.id, thread.name,
// sentry.thread.priority, sentry.thread.active, sentry.queue.address,
// sentry.queue.label, sentry.thread.state (and the profile attributes
// sentry.thread_metadata, sentry.queue_metadata). Receive:
// ProfilesBuilder.resolveThreads, threadAttributes, append*Attr. Export:
// groupConverter.readSampleAttrs, threadMetadataOf, queueMetadataFromAttr.

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// threadAttrs are the attribute indices every sample of one thread carries.
type threadAttrs struct {
	first, n int32 // range in ProfilesBuilder.threadAttrBuf
}

// resolveThreads gives every sample its thread index in sampleThreads and
// writes the threads' attributes. It runs before frames and stacks are
// walked so that the thread attributes, which every pprofile Sample
// references, get the smallest attribute indices: one-byte varints in the
// protobuf encoding.
func (b *ProfilesBuilder) resolveThreads(p *sentry.Profile) {
	b.threads.Reset()
	b.threadAttrsOf = b.threadAttrsOf[:0]
	b.threadAttrBuf = b.threadAttrBuf[:0]
	active := activeThreads(p)
	threads := slices.Grow(b.sampleThreads[:0], len(p.Samples))
	for i := range p.Samples {
		id := p.Samples[i].ThreadID
		t, added := b.threads.Lookup(id)
		if added {
			b.threadAttrsOf = append(b.threadAttrsOf, b.threadAttributes(p, id, active))
		}
		threads = append(threads, t)
	}
	b.sampleThreads = threads
}

// threadAttributes appends the attributes of one thread to threadAttrBuf:
// thread.id (and the Sentry id verbatim when it is not decimal), thread.name
// and sentry.thread.priority from thread_metadata, sentry.thread.active for
// the V1 transaction's active thread.
func (b *ProfilesBuilder) threadAttributes(p *sentry.Profile, id string, active []string) threadAttrs {
	d := b.dict
	first := int32(len(b.threadAttrBuf))
	if n, ok := threadIDNumber(id); ok {
		b.threadAttrBuf = append(b.threadAttrBuf, d.attrInt(string(semconv.ThreadIDKey), n))
	}
	if !isDecimalThreadID(id) {
		b.threadAttrBuf = append(b.threadAttrBuf, d.attrStr(attrThreadID, id))
	}
	for i := range p.ThreadMetadata {
		tm := &p.ThreadMetadata[i]
		if tm.ThreadID != id {
			continue
		}
		if tm.Name != "" {
			b.threadAttrBuf = append(b.threadAttrBuf, d.attrStr(string(semconv.ThreadNameKey), tm.Name))
		}
		if tm.HasPriority {
			b.threadAttrBuf = append(b.threadAttrBuf, d.attrInt(attrThreadPriority, tm.Priority))
		}
		break
	}
	if slices.Contains(active, id) {
		b.threadAttrBuf = append(b.threadAttrBuf, d.attrBool(attrThreadActive, true))
	}
	return threadAttrs{first: first, n: int32(len(b.threadAttrBuf)) - first}
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

// queueLabelIndex maps the attribute of each queue_metadata address to the
// attribute of its label, so samples on a queue carry the label too.
func queueLabelIndex(d *dictionaryBuilder, p *sentry.Profile) map[int32]int32 {
	if len(p.QueueMetadata) == 0 {
		return nil
	}
	m := make(map[int32]int32, len(p.QueueMetadata))
	for _, q := range p.QueueMetadata {
		if q.Label != "" {
			m[d.attrStr(attrQueueAddress, q.Address)] = d.attrStr(attrQueueLabel, q.Label)
		}
	}
	return m
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

// sampleAttrs reads the thread of a sample (sentry.thread.id, else
// thread.id, else one synthetic thread "0" for every sample without one),
// its queue_address and its state.
func (x *groupConverter) sampleAttrs(s pprofile.Sample, index map[string]int32) (thread int32, queue, state string) {
	// Samples of one thread carry the same few attribute indices: the
	// answer for a list seen recently is remembered.
	indices := s.AttributeIndices()
	var key attrList
	memo := indices.Len() <= len(key.indices)
	if memo {
		key.n = indices.Len()
		for i := range key.n {
			key.indices[i] = indices.At(i)
		}
		for i := range x.attrMemo {
			if m := &x.attrMemo[i]; m.key == key {
				return m.thread, m.queue, m.state
			}
		}
	}
	thread, queue, state = x.readSampleAttrs(indices, index)
	if memo {
		if len(x.attrMemo) == attrMemoSize {
			x.attrMemo = x.attrMemo[:0]
		}
		x.attrMemo = append(x.attrMemo, sampleAttrMemo{key: key, thread: thread, queue: queue, state: state})
	}
	return thread, queue, state
}

// attrList is a short list of attribute indices, comparable.
type attrList struct {
	indices [8]int32
	n       int
}

type sampleAttrMemo struct {
	key          attrList
	thread       int32
	queue, state string
}

const attrMemoSize = 32

func (x *groupConverter) readSampleAttrs(indices pcommon.Int32Slice, index map[string]int32) (thread int32, queue, state string) {
	var t threadInfo
	var numeric int64
	hasNumeric := false
	for i := range indices.Len() {
		idx := indices.At(i)
		if idx <= 0 || int(idx) >= len(x.conv.attrRoles) {
			continue
		}
		v := x.conv.attrVals[idx]
		switch x.conv.attrRoles[idx] {
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
	if i, ok := index[t.id]; ok {
		return i, queue, state
	}
	i := int32(len(x.threads))
	index[t.id] = i
	x.threads = append(x.threads, t)
	return i, queue, state
}

// threadMetadataOf: profile attribute sentry.thread_metadata →
// "thread_metadata" as received; for profiles from other sources, the
// used threads' thread.name and sentry.thread.priority → "name",
// "priority".
func (x *groupConverter) threadMetadataOf(usedThreads []bool) []sentry.ThreadMetadata {
	var out []sentry.ThreadMetadata
	if x.attrs.hasThreads {
		for id, v := range x.attrs.threadMetadata.All() {
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
	for i, t := range x.threads {
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
