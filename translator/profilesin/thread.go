package profilesin

// Threads and queues: "samples"[]."thread_id", "thread_metadata",
// "queue_metadata", "samples"[]."queue_address" and "state" ⇄ sample
// attributes thread.id, sentry.thread.id, thread.name,
// sentry.thread.priority, sentry.thread.active, sentry.queue.address,
// sentry.queue.label, sentry.thread.state (and the profile attributes
// sentry.thread_metadata, sentry.queue_metadata). Here: threadOfProfile,
// threadMetadataAttr, queueMetadataAttr; the way back is
// profilesout/thread.go.

import (
	"slices"
	"strconv"
	"strings"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/profileschema"
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
	v, m := profileschema.NewMapValue(len(p.ThreadMetadata))
	for _, tm := range p.ThreadMetadata {
		e := m.PutEmptyMap(tm.ThreadID)
		profileschema.PutNonEmpty(e, profileschema.KeyName, tm.Name) // "name"
		if tm.HasPriority {
			e.PutInt(profileschema.KeyPriority, tm.Priority) // "priority"
		}
	}
	return profileAttr{key: sentryattr.ThreadMetadata, value: v}
}

// queueMetadataAttr: "queue_metadata" (cocoa) → profile attribute
// sentry.queue_metadata (map address → {label}). Back: queueMetadataFromAttr.
func queueMetadataAttr(p *sentry.Profile) profileAttr {
	if len(p.QueueMetadata) == 0 {
		return profileAttr{}
	}
	v, m := profileschema.NewMapValue(len(p.QueueMetadata))
	for _, q := range p.QueueMetadata {
		profileschema.PutNonEmpty(m.PutEmptyMap(q.Address), profileschema.KeyLabel, q.Label) // "label"
	}
	return profileAttr{key: sentryattr.QueueMetadata, value: v}
}
