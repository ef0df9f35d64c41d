package sentry

import (
	"fmt"
	"strconv"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/idindex"
)

// Limits bounds what Validate accepts. A zero field means its default.
type Limits struct {
	MaxDurationV1 time.Duration // default 30s (Relay's MAX_PROFILE_DURATION)
	MaxDurationV2 time.Duration // default 66s (Relay's MAX_PROFILE_CHUNK_DURATION)
}

// DefaultLimits returns Relay's limits.
func DefaultLimits() Limits {
	return Limits{MaxDurationV1: 30 * time.Second, MaxDurationV2: 66 * time.Second}
}

func (l Limits) withDefaults() Limits {
	def := DefaultLimits()
	if l.MaxDurationV1 <= 0 {
		l.MaxDurationV1 = def.MaxDurationV1
	}
	if l.MaxDurationV2 <= 0 {
		l.MaxDurationV2 = def.MaxDurationV2
	}
	return l
}

// Mode chooses which of Relay's rules refuse a profile.
type Mode uint8

const (
	// ModeLenient refuses a profile only when its samples cannot be read:
	// an unsupported version or format, no samples, a stack_id or frame
	// index out of range, a V2 sample without a positive timestamp. Every
	// other Relay rule it breaks is returned as a warning.
	ModeLenient Mode = iota
	// ModeRelay refuses what Relay refuses.
	ModeRelay
)

// Validate applies the rules by which Relay rejects a sample-format profile
// and returns the first one p breaks as an *Error (Item is -1: the caller
// locates it with AtItem), or nil. It only accepts or rejects: p is not
// changed. It gives the same answer before and after Normalize. It is
// Check in ModeRelay without the warnings.
func Validate(p *Profile, limits Limits) error {
	_, err := Check(p, limits, ModeRelay)
	return err
}

// Check applies Relay's rules to p. It returns as err the first rule that
// refuses p under mode; in ModeLenient, the metadata rules p breaks come
// back as warnings instead, at most one per group of rules (metadata,
// transaction, samples), in the order below. p is not changed.
//
// The rules, in the order they are checked:
//
//   - version is "1" or "2" (ReasonUnsupportedVersion). Always refused.
//   - Metadata (ReasonMissingProfileMetadata when absent): V1 needs event_id,
//     platform, timestamp, device.architecture, os.name and os.version,
//     runtime.name and runtime.version when runtime is sent, and for cocoa
//     also os.build_number, device.is_emulator, device.locale,
//     device.manufacturer and device.model; V2 needs profiler_id, chunk_id,
//     platform, client_sdk.name and client_sdk.version. A string field is
//     present when it is non-empty or Profile.Present records it: Relay
//     takes an empty string as a value. An id present but not a UUID is
//     ReasonInvalidJSON, as in Relay where it fails to deserialize.
//   - V1 transaction: `transaction` or `transactions[0]` must exist
//     (ReasonNoTransactionAssociated) with a non-nil UUID id and trace_id, a
//     name, and relative_start_ns < relative_end_ns unless both are zero
//     (ReasonInvalidTransactionMetadata). active_thread_id is optional, as
//     in Relay, which defaults it to 0.
//   - At least one sample (ReasonNotEnoughSamples). Always refused.
//   - V2 sample timestamps are positive (ReasonMalformedSamples, Sample set).
//     Always refused.
//   - Every stack_id names a stack (ReasonMalformedSamples, Sample set) and
//     every frame index names a frame (ReasonMalformedStacks; Stack is the
//     stack and Frame the position of the bad index within it, since the
//     index itself is not a frame). Always refused.
//   - Something is left after Relay's lossy clean-up (ReasonNotEnoughSamples):
//     V1 keeps the samples inside the transaction's relative range, trims
//     each thread's idle (empty-stack) samples at its edges and drops
//     threads left with one sample; V2 drops threads with at most one
//     non-idle sample.
//   - Duration of what is left (ReasonDurationIsTooLong): V1, the last
//     sample's elapsed_since_start_ns over MaxDurationV1 (Relay measures
//     from the profile's start, not from the first sample); V2 latest minus
//     earliest timestamp over MaxDurationV2.
func Check(p *Profile, limits Limits, mode Mode) (warnings []*Error, err error) {
	limits = limits.withDefaults()
	// metadata applies a rule that only Relay mode refuses on.
	metadata := func(e *Error) *Error {
		if e == nil {
			return nil
		}
		if mode == ModeRelay {
			return e
		}
		warnings = append(warnings, e)
		return nil
	}
	switch p.Version {
	case VersionV1:
		if e := metadata(validateMetadataV1(p)); e != nil {
			return nil, e
		}
		if e := metadata(validateTransaction(p)); e != nil {
			return nil, e
		}
	case VersionV2:
		if e := metadata(validateMetadataV2(p)); e != nil {
			return nil, e
		}
	default:
		if e := checkVersion(p.Version, p.Platform); e != nil {
			return nil, e
		}
	}
	if len(p.Samples) == 0 {
		return nil, NewError(ReasonNotEnoughSamples, "profile has no samples")
	}
	// A V2 chunk's threads are followed in the same pass over the samples
	// as their indices: the samples are most of the profile's memory.
	var threads *chunkThreads
	if p.Version == VersionV2 {
		threads = &chunkThreads{}
	}
	if e := validateSamples(p, threads); e != nil {
		return nil, e
	}
	if e := validateStacks(p); e != nil {
		return nil, e
	}
	var e *Error
	if p.Version == VersionV1 {
		e = metadata(validateSamplesV1(p, limits.MaxDurationV1))
	} else {
		e = metadata(threads.check(limits.MaxDurationV2))
	}
	if e != nil {
		return nil, e
	}
	return warnings, nil
}

func missing(field string) *Error {
	return NewError(ReasonMissingProfileMetadata, field+" is missing")
}

// validateID checks a required UUID field.
func validateID(field, id string) *Error {
	if id == "" {
		return missing(field)
	}
	if !isUUID(id) {
		return NewError(ReasonInvalidJSON, field+" "+strconv.Quote(id)+" is not a UUID")
	}
	return nil
}

// requiredString is one metadata string a rule needs present.
type requiredString struct {
	name  string
	value string
	field Fields
}

// firstMissing returns the first of fields that p lacks.
func firstMissing(p *Profile, fields ...requiredString) *Error {
	for _, f := range fields {
		if f.value == "" && !p.Present.Has(f.field) {
			return missing(f.name)
		}
	}
	return nil
}

func validateMetadataV1(p *Profile) *Error {
	if e := validateID("event_id", p.EventID); e != nil {
		return e
	}
	if e := firstMissing(p,
		requiredString{"platform", p.Platform, FieldPlatform},
		requiredString{"device.architecture", p.Device.Architecture, FieldDeviceArchitecture},
		requiredString{"os.name", p.OS.Name, FieldOSName},
		requiredString{"os.version", p.OS.Version, FieldOSVersion},
	); e != nil {
		return e
	}
	if p.Timestamp.IsZero() {
		return missing("timestamp")
	}
	// runtime is optional, but when sent both its fields are required.
	if p.Present.Has(FieldRuntime) || p.Runtime != (Runtime{}) {
		if e := firstMissing(p,
			requiredString{"runtime.name", p.Runtime.Name, FieldRuntimeName},
			requiredString{"runtime.version", p.Runtime.Version, FieldRuntimeVersion},
		); e != nil {
			return e
		}
	}
	// Relay's extra requirement for cocoa: the device fields Apple SDKs
	// always send.
	if p.Platform == "cocoa" {
		if e := firstMissing(p,
			requiredString{"os.build_number", p.OS.BuildNumber, FieldOSBuildNumber},
			requiredString{"device.locale", p.Device.Locale, FieldDeviceLocale},
			requiredString{"device.manufacturer", p.Device.Manufacturer, FieldDeviceManufacturer},
			requiredString{"device.model", p.Device.Model, FieldDeviceModel},
		); e != nil {
			return e
		}
		if !p.Device.IsEmulator.Set() {
			return missing("device.is_emulator")
		}
	}
	return nil
}

func validateMetadataV2(p *Profile) *Error {
	if e := validateID("profiler_id", p.ProfilerID); e != nil {
		return e
	}
	if e := validateID("chunk_id", p.ChunkID); e != nil {
		return e
	}
	return firstMissing(p,
		requiredString{"platform", p.Platform, FieldPlatform},
		requiredString{"client_sdk.name", p.ClientSDK.Name, FieldClientSDKName},
		requiredString{"client_sdk.version", p.ClientSDK.Version, FieldClientSDKVersion},
	)
}

func validateTransaction(p *Profile) *Error {
	if len(p.Transactions) == 0 {
		return NewError(ReasonNoTransactionAssociated, "profile has no transaction or transactions")
	}
	t := &p.Transactions[0]
	invalid := func(msg string) *Error {
		return NewError(ReasonInvalidTransactionMetadata, "transaction: "+msg)
	}
	for _, f := range [...]struct {
		name, value string
	}{{"id", t.ID}, {"trace_id", t.TraceID}} {
		switch {
		case f.value == "":
			return invalid(f.name + " is missing")
		case !isUUID(f.value):
			return invalid(f.name + " " + strconv.Quote(f.value) + " is not a UUID")
		case isNilUUID(f.value):
			return invalid(f.name + " is the nil UUID")
		}
	}
	if t.Name == "" {
		return invalid("name is missing")
	}
	if (t.RelativeStartNS != 0 || t.RelativeEndNS != 0) && t.RelativeStartNS >= t.RelativeEndNS {
		return invalid(fmt.Sprintf("relative_start_ns %d is not before relative_end_ns %d", t.RelativeStartNS, t.RelativeEndNS))
	}
	return nil
}

// validateSamples checks that samples name stacks and, in a V2 chunk
// (threads not nil), have a positive timestamp; it follows the chunk's
// threads in threads.
func validateSamples(p *Profile, threads *chunkThreads) *Error {
	nStacks := uint64(p.Stacks.Len())
	for i := range p.Samples {
		smp := &p.Samples[i]
		if uint64(smp.StackID) >= nStacks { // negative too
			e := NewError(ReasonMalformedSamples, fmt.Sprintf("stack_id %d is out of range (%d stacks)", smp.StackID, nStacks))
			e.Sample = i
			return e
		}
		if threads == nil {
			continue
		}
		if smp.Timestamp <= 0 {
			e := NewError(ReasonMalformedSamples, fmt.Sprintf("timestamp %s is not positive", formatNanos(smp.Timestamp)))
			e.Sample = i
			return e
		}
		// The thread, found inline when it is the one after the last
		// (chunkThreads.add): this runs once per sample.
		n, ok := threads.ids.Next(smp.ThreadID)
		if !ok {
			n = threads.thread(smp)
		}
		threads.ranges[n].add(smp.Timestamp, stackEmpty(&p.Stacks, int(smp.StackID)))
	}
	return nil
}

// stackEmpty reports whether stack i (in range) has no frames, without
// trusting the offsets that validateStacks checks after.
func stackEmpty(st *Stacks, i int) bool {
	end := len(st.FrameIndices)
	if i+1 < len(st.Offsets) {
		end = st.Offsets[i+1]
	}
	return end <= st.Offsets[i]
}

// validateStacks checks that stacks name frames.
func validateStacks(p *Profile) *Error {
	offsets, indices := p.Stacks.Offsets, p.Stacks.FrameIndices
	for i, start := range offsets {
		end := len(indices)
		if i+1 < len(offsets) {
			end = offsets[i+1]
		}
		if start < 0 || start > end || end > len(indices) {
			e := NewError(ReasonMalformedStacks, "stack offsets are inconsistent")
			e.Stack = i
			return e
		}
	}
	// The stacks, consistent, hold indices[offsets[0]:]: the largest of
	// them as unsigned (a negative index is larger than any frame count)
	// tells whether every one names a frame, in a loop without a branch
	// per index; the stack of a bad one is looked for only then.
	if len(offsets) == 0 || largestUnsigned(indices[offsets[0]:]) < uint64(len(p.Frames)) {
		return nil
	}
	return badFrameIndex(p)
}

// largestUnsigned is the largest of v as unsigned integers, 0 for none.
func largestUnsigned(v []int64) uint64 {
	var m uint64
	for _, x := range v {
		m = max(m, uint64(x))
	}
	return m
}

// badFrameIndex is the error of the first frame index out of range.
func badFrameIndex(p *Profile) *Error {
	nFrames := int64(len(p.Frames))
	for i := range p.Stacks.Len() {
		for j, f := range p.Stacks.At(i) {
			if f < 0 || f >= nFrames {
				e := NewError(ReasonMalformedStacks, fmt.Sprintf("frame index %d at position %d is out of range (%d frames)", f, j, nFrames))
				e.Stack = i
				e.Frame = j
				return e
			}
		}
	}
	return nil
}

// threadSpan follows one thread through Relay's clean-up.
type threadSpan struct {
	firstActive, lastActive int // sample indices of its first and last non-idle sample
	kept                    int // samples Relay would keep
}

// threadSpans is the per-thread state of one profile, found through each
// sample's dense thread number.
type threadSpans struct {
	ofSample []int32 // sample index → thread number
	spans    []threadSpan
}

// newThreadSpans numbers the threads of p's samples once, so that the
// passes over the samples below index a slice instead of comparing ids.
func newThreadSpans(p *Profile) threadSpans {
	var ids idindex.Index
	t := threadSpans{ofSample: make([]int32, len(p.Samples))}
	for i := range p.Samples {
		id := p.Samples[i].ThreadID
		n, ok := ids.Next(id)
		if !ok {
			var added bool
			if n, added = ids.Lookup(id); added {
				t.spans = append(t.spans, threadSpan{firstActive: -1, lastActive: -1})
			}
		}
		t.ofSample[i] = n
	}
	return t
}

// get returns the state of the thread of sample i.
func (t *threadSpans) get(i int) *threadSpan { return &t.spans[t.ofSample[i]] }

func isIdle(p *Profile, smp *Sample) bool {
	return len(p.Stacks.At(int(smp.StackID))) == 0
}

func validateSamplesV1(p *Profile, maxDuration time.Duration) *Error {
	window := transactionWindow(p)
	threads := newThreadSpans(p)
	markActive(p, &threads, window)
	countKept(p, &threads, window)
	last, kept := lastKept(p, &threads, window)
	if !kept {
		return NewError(ReasonNotEnoughSamples, "no thread has two samples once idle edges and samples outside the transaction are left out")
	}
	if last > uint64(maxDuration) {
		return NewError(ReasonDurationIsTooLong, fmt.Sprintf("last sample at %s, more than %s", time.Duration(last), maxDuration))
	}
	return nil
}

// sampleWindow is the span of a V1 profile's transaction, in nanoseconds
// since the profile's start; an unranged window holds every sample.
type sampleWindow struct {
	start, end uint64
	ranged     bool
}

// transactionWindow is the window of the profile's first transaction,
// when it says where it ends.
func transactionWindow(p *Profile) sampleWindow {
	if len(p.Transactions) == 0 || p.Transactions[0].RelativeEndNS == 0 {
		return sampleWindow{}
	}
	return sampleWindow{start: p.Transactions[0].RelativeStartNS, end: p.Transactions[0].RelativeEndNS, ranged: true}
}

func (w sampleWindow) holds(smp *Sample) bool {
	return !w.ranged || (smp.ElapsedSinceStartNS >= w.start && smp.ElapsedSinceStartNS <= w.end)
}

// markActive records each thread's first and last non-idle sample in the
// window.
func markActive(p *Profile, threads *threadSpans, window sampleWindow) {
	for i := range p.Samples {
		smp := &p.Samples[i]
		if !window.holds(smp) || isIdle(p, smp) {
			continue
		}
		ts := threads.get(i)
		if ts.firstActive < 0 {
			ts.firstActive = i
		}
		ts.lastActive = i
	}
}

// countKept counts each thread's samples in the window between its first
// and last active ones: the samples Relay keeps once idle edges are cut.
func countKept(p *Profile, threads *threadSpans, window sampleWindow) {
	for i := range p.Samples {
		if !window.holds(&p.Samples[i]) {
			continue
		}
		if ts := threads.get(i); ts.firstActive >= 0 && i >= ts.firstActive && i <= ts.lastActive {
			ts.kept++
		}
	}
}

// lastKept is the elapsed time of the last sample kept of a thread with
// two or more, in payload order, as Relay reads the duration.
func lastKept(p *Profile, threads *threadSpans, window sampleWindow) (last uint64, kept bool) {
	for i := range p.Samples {
		smp := &p.Samples[i]
		ts := threads.get(i)
		if !window.holds(smp) || ts.kept < 2 || i < ts.firstActive || i > ts.lastActive {
			continue
		}
		last, kept = smp.ElapsedSinceStartNS, true
	}
	return last, kept
}

// chunkThreads follows the threads of a V2 chunk through Relay's
// clean-up: each thread's non-idle samples and time range, found through
// the thread's dense number (no array per sample).
type chunkThreads struct {
	ids    idindex.Index
	ranges []threadRange
}

// thread is the number of a sample's thread, a new one when first seen.
func (c *chunkThreads) thread(smp *Sample) int32 {
	n, added := c.ids.Lookup(smp.ThreadID)
	if added {
		c.ranges = append(c.ranges, threadRange{first: smp.Timestamp, last: smp.Timestamp})
	}
	return n
}

// add counts a sample of the thread at ts, idle when its stack is empty.
func (t *threadRange) add(ts int64, idle bool) {
	t.first, t.last = min(t.first, ts), max(t.last, ts)
	if !idle {
		t.active++
	}
}

// check applies the V2 sample rules: Relay keeps the threads with two
// non-idle samples; the duration is that of every sample they hold.
func (c *chunkThreads) check(maxDuration time.Duration) *Error {
	var first, last int64
	kept := false
	for _, t := range c.ranges {
		if t.active < 2 {
			continue
		}
		if !kept {
			first, last = t.first, t.last
		}
		first, last, kept = min(first, t.first), max(last, t.last), true
	}
	if !kept {
		return NewError(ReasonNotEnoughSamples, "no thread has two non-idle samples")
	}
	if d := last - first; d > int64(maxDuration) {
		return NewError(ReasonDurationIsTooLong, fmt.Sprintf("samples span %s, more than %s", time.Duration(d), maxDuration))
	}
	return nil
}

// threadRange is one thread of a V2 chunk: its non-idle samples and the
// time of its first and last sample.
type threadRange struct {
	active      int
	first, last int64
}

// formatNanos writes Unix nanoseconds as decimal seconds for messages.
func formatNanos(ns int64) string {
	return string(appendNanos(nil, ns))
}
