package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"context"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/pmap"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/native"
)

// processLogs resolves the frames of every error record of the batch (the
// sentryprofile receiver's records of Sentry events: sentry.exception,
// sentry.threads, sentry.stacktrace, with the images of sentry.debug_meta)
// with the resolvers and the frame cache of profiles, rewrites them as
// Sentry writes an event after symbolication, re-renders
// exception.stacktrace, and sets the grouping key. Other records pass
// untouched.
//
// The batch waits for artifacts at most MaxBatchWait, as a profiles batch
// does; frames whose artifact is not ready by then pass as they came.
func (s *frameProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.MaxBatchWait)
	defer cancel()
	defer context.AfterFunc(s.stopping, cancel)()
	ctx = native.WithFetchLimit(ctx, s.cfg.Native.MaxFetchesPerBatch)

	var counts outcomeCounts
	for _, rl := range ld.ResourceLogs().All() {
		platform := resourcePlatform(rl.Resource())
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				s.processErrorRecord(ctx, lr, platform, &counts)
			}
		}
	}
	counts.record(ctx, s.telemetry)
	return ld, nil
}

// resourcePlatform is the event platform the receiver puts on the resource.
func resourcePlatform(res pcommon.Resource) string {
	if v, ok := res.Attributes().Get(sentryattr.Platform); ok {
		return v.AsString()
	}
	return ""
}

// errorRecord is one error record being resolved.
type errorRecord struct {
	p      *frameProcessor
	images errorImages
	counts *outcomeCounts
	// platform is the event's, for frames that do not name theirs.
	platform string
}

// processErrorRecord resolves one record's stack traces; a record that
// carries none is left alone.
func (s *frameProcessor) processErrorRecord(ctx context.Context, lr plog.LogRecord, platform string, counts *outcomeCounts) {
	attrs := lr.Attributes()
	if !carriesFrames(attrs) {
		return
	}
	r := errorRecord{p: s, images: readErrorImages(attrs), counts: counts, platform: platform}
	if r.resolveRecord(ctx, attrs) {
		rerenderStacktrace(attrs)
	}
	putGroupingKey(lr, platform)
}

// carriesFrames reports whether a record is a Sentry event with frames.
func carriesFrames(attrs pcommon.Map) bool {
	for _, key := range [...]string{sentryattr.EventException, sentryattr.EventThreads, sentryattr.EventStacktrace} {
		if v, ok := attrs.Get(key); ok && v.Type() == pcommon.ValueTypeMap {
			return true
		}
	}
	return false
}

// resolveRecord resolves every stack trace of a record: each exception's
// of the chain, each thread's, and the event's own; true when one changed.
func (r *errorRecord) resolveRecord(ctx context.Context, attrs pcommon.Map) bool {
	changed := false
	for _, key := range [...]string{sentryattr.EventException, sentryattr.EventThreads} {
		for _, v := range pmap.Slice(pmap.Map(attrs, key), "values").All() {
			if v.Type() == pcommon.ValueTypeMap && r.resolveStack(ctx, v.Map(), "stacktrace", "raw_stacktrace") {
				changed = true
			}
		}
	}
	if r.resolveStack(ctx, attrs, sentryattr.EventStacktrace, sentryattr.EventRawStacktrace) {
		changed = true
	}
	return changed
}

// resolveStack resolves the frames of the stack trace at parent[key]. When
// one resolves, the stack trace as sent is kept at parent[rawKey] (Sentry's
// raw_stacktrace) and its frames are replaced by the resolved ones, each
// answer expanded into its inlined frames; unresolved frames stay as they
// came. It reports whether the frames changed.
func (r *errorRecord) resolveStack(ctx context.Context, parent pcommon.Map, key, rawKey string) bool {
	st := pmap.Map(parent, key)
	frames := pmap.Slice(st, "frames")
	answers, targets, found := r.resolveFrames(ctx, frames)
	if !found {
		return false
	}
	st.CopyTo(parent.PutEmptyMap(rawKey))
	resolved := pcommon.NewSlice()
	resolved.EnsureCapacity(frames.Len())
	for j, v := range frames.All() {
		if answers[j] == nil {
			v.CopyTo(resolved.AppendEmpty())
			continue
		}
		appendResolvedFrames(resolved, v.Map(), targets[j], answers[j])
	}
	resolved.MoveAndAppendTo(st.PutEmptySlice("frames"))
	return true
}

// resolveFrames asks each frame's resolver, through the frame cache;
// answers[j] is nil for a frame that stays as it came. found says one was
// resolved.
func (r *errorRecord) resolveFrames(ctx context.Context, frames pcommon.Slice) (answers [][]symbolication.Frame, targets []errorTarget, found bool) {
	n := frames.Len()
	for j, v := range frames.All() {
		if v.Type() != pcommon.ValueTypeMap {
			continue
		}
		t, ok := r.p.errorTargetOf(v.Map(), frameScene{platform: r.platform, images: &r.images, caller: j < n-1})
		if !ok {
			continue
		}
		answer := r.resolve(ctx, t)
		if len(answer) == 0 {
			continue
		}
		if answers == nil {
			answers, targets = make([][]symbolication.Frame, n), make([]errorTarget, n)
		}
		answers[j], targets[j], found = answer, t, true
	}
	return answers, targets, found
}

// resolve is one frame's answer, counted; nil when it stays as it came.
func (r *errorRecord) resolve(ctx context.Context, t errorTarget) []symbolication.Frame {
	answer, hit, err := r.p.resolve(ctx, t.kind, t.in)
	r.counts.add(t.kind, hit, err)
	if err != nil {
		r.p.logUnresolved(t.kind, t.in, err)
		return nil
	}
	return answer
}
