package profilesin

// Sentry → pdata: the walk. ProfilesBuilder turns each item into a
// ResourceProfiles with one Profile, calling the object files for each
// Sentry object (resource.go, thread.go, frame.go, image.go,
// transaction.go, measurements.go) and grouping "samples"[] into pprofile
// Samples itself.

import (
	"cmp"
	"math"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/idindex"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/profileschema"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryid"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

// ReceiveOptions tune Sentry → pdata.
type ReceiveOptions struct {
	// ServiceName, when non-empty, overrides the derived service.name (the
	// package part of a `package@version` release, else
	// "unknown_service:<platform>").
	ServiceName string
	// ProjectID is the Sentry project id from the request path; it becomes the
	// sentry.project.id resource attribute when non-empty.
	ProjectID string
	// KeepOriginalPayload sets Profile.original_payload to the item JSON, with
	// the format OriginalPayloadFormatV1 or OriginalPayloadFormatV2.
	KeepOriginalPayload bool
	// GroupSamples writes the Sentry samples of one stack, thread and link
	// as one Sample with their timestamps and no values (sample type
	// samples/count): half the size and cost, but backends that read one
	// value per Sample (Grafana Pyroscope) then show counts, not time. The
	// timestamps still give each sample's wall time as Sentry reckons it
	// (the time to the next sample of its thread). Off: one Sample per
	// Sentry sample, its value that wall time in nanoseconds (sample type
	// wall/nanoseconds).
	GroupSamples bool
}

// DecodedProfile is one validated profile item with what the envelope gives it.
type DecodedProfile struct {
	Profile     *sentry.Profile      // decoded, normalized and validated
	Transaction *sentrytrace.Segment // the envelope's `transaction` item (V1 links), or nil
	// Spans are the spans of the chunk's profiler (V2 links), or nil.
	Spans   SpanLookup
	Payload []byte // the item's JSON, for original_payload
	// Resource is the envelope's resource (ItemDecoder.ProfileItems fills
	// it from the envelope's trace items and its profiles), shared with the
	// envelope's other signals; nil: the profile's own fields. Either way
	// the profile's fields fill what it lacks, and ReceiveOptions'
	// ServiceName and ProjectID, when set, take precedence.
	Resource *sentryresource.Resource
}

// ProfilesBuilder accumulates items into one pprofile.Profiles whose profiles
// share one dictionary. It is not safe for concurrent use.
type ProfilesBuilder struct {
	opts ReceiveOptions
	pd   pprofile.Profiles
	// resource is the resource of the item being added; envelope, the
	// resources of every item since Reset, filled in order (Resource).
	resource, envelope sentryresource.Resource
	dict               *dictionaryBuilder
	samples            int
	// linked counts the samples that got a Link.
	linked int
	// byType counts the samples written since Reset by sample type
	// (SamplesByType); a new map after each Reset, owned by the caller
	// once handed out.
	byType map[string]int
	// cpuWritten is how many Samples the item's CPU view got.
	cpuWritten int
	// intervals is scratch space for measuring the sampling period.
	intervals      []int64
	periodPairs    []threadTime
	periodStarts   []int32
	serviceScratch []int32
	// weights and weightsSorted are the per-sample wall times, in event
	// order and in Sample order; threadOrder and threadStarts are scratch
	// space for computing them (sampleDurations).
	weights, weightsSorted []int64
	threadOrder            []int32
	threadStarts           []int32
	// cpuProf is the CPU-time view of the item being added, when it has
	// one; cpuWeights its values, in event and in Sample order.
	cpuProf                      pprofile.Profile
	cpuWeights, cpuWeightsSorted []int64

	// Locations are found through a hash of their key (frameHash) and
	// confirmed by comparing the whole key.
	locations    hashIndex
	locationKeys []locationKey // by Location index
	mappings     map[sentry.Image]int32
	frameKeys    frameAttrKeys
	// The most frames and stacks of an item since the maps were made: the
	// maps have grown to hold them.
	frameRoom, stackRoom int

	// Scratch space reused from one item to the next.
	frameLocations []int32
	stackIndices   []int32 // Sentry stack → dictionary stack, -1 when invalid
	stackSlots     []int32 // Sentry stack → first Sentry stack with the same dictionary stack
	// stackSlotTable: the slot of each dictionary stack (slotOf), valid
	// for the item numbered item since Reset.
	stackSlotTable []stackSlot
	item           int32
	stackScratch   []int32
	attrScratch    []int32
	threadAttrBuf  []int32
	threads        idindex.Index // thread ids of the item → dense numbers
	threadAttrsOf  []threadAttrs // thread number → its attributes
	sampleThreads  []int32       // Sentry sample → index in threads
	// Sentry sample → its "stack_id" (-1 without a time) and its time;
	// ordinarySamples: none has a queue or a state (resolveThreads).
	sampleStacks    []int32
	sampleTimes     []uint64
	ordinarySamples bool
	images          []imageRange
	events          []event
	groups          []sampleGroup
	groupHeads      []int32
	groupStarts     []int32
	groupFill       []int32
	timestamps      []uint64
	// idleOf and idleStacks: the idle samples of the item and the stacks
	// Sentry gives them (receive_idle.go).
	idleOf     []int32
	idleStacks []int32
}

// addedSamples is what addSamples found out about an item's samples.
type addedSamples struct {
	count       int    // Sentry samples kept
	first, last uint64 // the earliest and latest sample times
	period      int64  // the sampling interval, nanoseconds
	// weighted: the samples carry their own wall time (a method trace).
	weighted bool
}

// event is one Sentry sample on its way to a pprofile Sample: its group,
// its thread (the group's, kept here where it costs no space) and its
// time.
type event struct {
	group, thread int32
	ts            uint64
}

// sampleKey groups the events that become one pprofile Sample.
type sampleKey struct {
	stack, thread, queue, state, link int32
	idle                              int32 // sentry.sample.idle, 0 when active
}

// NewProfilesBuilder returns an empty builder.
func NewProfilesBuilder(opts ReceiveOptions) *ProfilesBuilder {
	b := &ProfilesBuilder{}
	b.Reset(opts)
	return b
}

// Reset starts a new, empty Profiles with opts. The builder keeps the memory
// it grew on earlier items (maps and scratch space), so that a receiver
// reusing one builder per worker allocates it once rather than per
// envelope; what only an unusually large item needed is let go.
func (b *ProfilesBuilder) Reset(opts ReceiveOptions) {
	pd := pprofile.NewProfiles()
	if b.dict == nil || b.frameRoom > builderKeepsFrames || b.stackRoom > builderKeepsStacks || cap(b.events) > builderKeepsSamples {
		*b = ProfilesBuilder{
			dict:     newDictionaryBuilder(pd.Dictionary(), dictionarySizes{}),
			mappings: make(map[sentry.Image]int32),
		}
	} else {
		b.dict.reset(pd.Dictionary())
		clear(b.mappings)
	}
	b.locations.reset()
	// Index 0 is the zero Location, which no frame maps to.
	b.locationKeys = append(b.locationKeys[:0], locationKey{})
	b.frameKeys = frameAttrKeys{}
	b.opts, b.pd, b.samples, b.linked, b.byType = opts, pd, 0, 0, nil
	b.stackSlotTable, b.item = b.stackSlotTable[:0], 0
	b.resource, b.envelope = sentryresource.Resource{}, sentryresource.Resource{}
}

// Bounds of what Reset keeps: the builder's maps and scratch space of items
// up to this size (the dictionary maps hold about two entries per frame).
// They are the builder's own; sentry.Decoder bounds the decoded profile's
// memory it keeps with limits of its own.
const (
	builderKeepsFrames  = 1 << 14
	builderKeepsStacks  = 1 << 15
	builderKeepsSamples = 1 << 17
)

// itemResource is the resource of an item: its envelope's, filled with the
// profile's own fields, under the options' service name and project.
func (b *ProfilesBuilder) itemResource(item DecodedProfile) sentryresource.Resource {
	var r sentryresource.Resource
	if item.Resource != nil {
		r = *item.Resource
	}
	r.Fill(ResourceOfProfile(item.Profile))
	r.ServiceName = cmp.Or(b.opts.ServiceName, r.ServiceName)
	r.ProjectID = cmp.Or(b.opts.ProjectID, r.ProjectID)
	return r
}

// Resource is the resource of the items added since Reset, each filling
// what the earlier ones left empty: for the items of one envelope read by
// ItemDecoder.ProfileItems, the envelope's, which its other signals take
// (TraceOptions.Resource) so that they carry the profiles' attributes.
func (b *ProfilesBuilder) Resource() sentryresource.Resource { return b.envelope }

// SampleCount is the number of Sentry sample events added so far.
func (b *ProfilesBuilder) SampleCount() int { return b.samples }

// SamplesByType is how many Sentry samples each sample type ("type:unit",
// as xreceiverhelper names it) holds in the Profiles being built, every
// profile named even when empty: what a receiver reports per sample type,
// known here without reading the Profiles back. The map is the caller's;
// the next Reset starts another.
func (b *ProfilesBuilder) SamplesByType() map[string]int {
	if b.byType == nil {
		b.byType = make(map[string]int, 1)
	}
	return b.byType
}

// countSamples adds n samples of one sample type to SamplesByType.
func (b *ProfilesBuilder) countSamples(sampleType string, n int) {
	b.SamplesByType()[sampleType] += n
}

// LinkedSampleCount returns how many of SampleCount's samples were linked to
// a span.
func (b *ProfilesBuilder) LinkedSampleCount() int { return b.linked }

// Profiles finishes the build and returns the result. The builder must not
// be given more items until Reset; SampleCount still reports the total, so
// that a caller may read both in either order.
func (b *ProfilesBuilder) Profiles() pprofile.Profiles {
	pd := b.pd
	b.pd = pprofile.Profiles{}
	return pd
}

// Add converts one item into a ResourceProfiles holding one Profile and
// returns the number of Sentry samples it holds. A validated item converts
// whole; on an unvalidated one, samples whose stack, frames or time are out
// of range are skipped, never trusted.
func (b *ProfilesBuilder) Add(item DecodedProfile) int {
	p := item.Profile
	if p == nil {
		return 0
	}
	b.grow(p)

	rp := b.pd.ResourceProfiles().AppendEmpty()
	b.resource = b.itemResource(item)
	b.resource.CopyTo(rp.Resource())
	b.envelope.Fill(b.resource)
	sp := rp.ScopeProfiles().AppendEmpty()
	sp.Scope().SetName(profileschema.ScopeName)
	prof := sp.Profiles().AppendEmpty()
	// A method trace that measured thread CPU time gets a second view of
	// the same samples: cpu/nanoseconds, beside wall time.
	var cpuProf pprofile.Profile
	if hasCPUDurations(p) {
		cpuProf = sp.Profiles().AppendEmpty()
	}
	b.cpuProf, b.cpuWritten = cpuProf, 0

	// "samples"[]."thread_id", "thread_metadata" → the threads' attributes
	// (thread.go).
	start := profileStart(p)
	b.resolveThreads(p, start)
	// "frames" → Location table; "stacks" → Stack table (frame.go).
	b.addFramesAndStacks(p)

	added := b.addSamples(prof, p, item, start)
	b.putProfileHeader(prof, p, start, added)
	b.putProfileAttributes(prof, p, start)
	b.countSamples(b.sampleTypeKey(added), added.count)
	if cpuProf != (pprofile.Profile{}) {
		b.putCPUView(cpuProf, prof)
		b.countSamples(sampleTypeCPU+":"+periodUnitNanos, b.cpuWritten)
	}
	if b.opts.KeepOriginalPayload && len(item.Payload) > 0 {
		putOriginalPayload(prof, p, item.Payload)
	}
	b.samples += added.count
	return added.count
}

// putOriginalPayload: the item's JSON → original_payload, its format by
// "version".
func putOriginalPayload(prof pprofile.Profile, p *sentry.Profile, payload []byte) {
	if isV2(p) {
		prof.SetOriginalPayloadFormat(OriginalPayloadFormatV2)
	} else {
		prof.SetOriginalPayloadFormat(OriginalPayloadFormatV1)
	}
	prof.OriginalPayload().FromRaw(payload)
}

// addFramesAndStacks adds p's frames to the Location table
// (b.frameLocations: the Location of each frame) and its stacks to the
// Stack table (b.stackIndices: the Stack of each Sentry stack;
// b.stackSlots: the slot its samples merge in).
func (b *ProfilesBuilder) addFramesAndStacks(p *sentry.Profile) {
	b.indexImages(p)
	b.frameLocations = b.frameLocations[:0]
	for i := range p.Frames {
		b.frameLocations = append(b.frameLocations, b.location(&p.Frames[i], p.Platform))
	}
	b.stackIndices = b.stackIndices[:0]
	b.stackSlots = b.stackSlots[:0]
	b.item++
	for i := range p.Stacks.Len() {
		stack := b.stack(p.Stacks.At(i))
		b.stackIndices = append(b.stackIndices, stack)
		// Sentry stacks that are the same dictionary stack (duplicates, or
		// frames that are duplicates) share one slot, so that their samples
		// merge into one pprofile Sample per thread.
		b.stackSlots = append(b.stackSlots, b.slotOf(stack, int32(i)))
	}
}

// stackSlot is the slot of a dictionary stack in the item being added
// (item, ProfilesBuilder.item).
type stackSlot struct{ item, slot int32 }

// slotOf is the slot of a dictionary stack (-1: an invalid Sentry stack)
// in this item: the first Sentry stack i that is it. The table is indexed
// by dictionary stack, dense from 0, and marked by item rather than
// cleared, so that an envelope of many items costs no clearing per item.
func (b *ProfilesBuilder) slotOf(stack, i int32) int32 {
	at := int(stack) + 1
	for len(b.stackSlotTable) <= at {
		b.stackSlotTable = append(b.stackSlotTable, stackSlot{})
	}
	e := &b.stackSlotTable[at]
	if e.item != b.item {
		*e = stackSlot{item: b.item, slot: i}
	}
	return e.slot
}

// putProfileHeader writes a profile's time range, sample and period types
// and id.
func (b *ProfilesBuilder) putProfileHeader(prof pprofile.Profile, p *sentry.Profile, start uint64, added addedSamples) {
	// "timestamp" (V1) or the first sample (V2) → Profile.time; the samples'
	// span → duration_nano, half-open so that the last sample is inside.
	prof.SetTime(pcommon.Timestamp(start))
	if added.count > 0 {
		first, last := added.first, added.last
		if !isV2(p) {
			first = min(first, start)
		}
		prof.SetTime(pcommon.Timestamp(first))
		prof.SetDurationNano(last - first + 1)
	}

	dict := b.dict
	// Wall time: each sample stands for the time to the next sample of its
	// thread, as Sentry reckons it; the period is the thread's typical
	// sampling interval. Grouped samples are counted, their timestamps
	// giving the same times (see ReceiveOptions.GroupSamples).
	typ, unit := b.sampleType(added)
	prof.SampleType().SetTypeStrindex(dict.str(typ))
	prof.SampleType().SetUnitStrindex(dict.str(unit))
	prof.PeriodType().SetTypeStrindex(dict.str(periodTypeWall))
	prof.PeriodType().SetUnitStrindex(dict.str(periodUnitNanos))
	prof.SetPeriod(added.period)

	// "chunk_id" (V2) or "event_id" (V1) → Profile.profile_id.
	if isV2(p) {
		prof.SetProfileID(pprofile.ProfileID(sentryid.Parse(p.ChunkID)))
	} else {
		prof.SetProfileID(pprofile.ProfileID(sentryid.Parse(p.EventID)))
	}
}

// sampleType is the sample type and unit of an item's profile: counts when
// its samples are grouped without values, else wall time.
func (b *ProfilesBuilder) sampleType(added addedSamples) (typ, unit string) {
	if b.opts.GroupSamples && !added.weighted {
		return sampleTypeSamples, sampleUnitCount
	}
	return sampleTypeWall, periodUnitNanos
}

// sampleTypeKey is sampleType as "type:unit".
func (b *ProfilesBuilder) sampleTypeKey(added addedSamples) string {
	if typ, _ := b.sampleType(added); typ == sampleTypeSamples {
		return sampleTypeSamples + ":" + sampleUnitCount
	}
	return sampleTypeWall + ":" + periodUnitNanos
}

// putCPUView makes cpuProf the same profile as prof seen through its CPU
// times: same id, time range and attributes (a backend or the exporter
// takes the two as views of one profile).
func (b *ProfilesBuilder) putCPUView(cpuProf, prof pprofile.Profile) {
	dict := b.dict
	cpuProf.SetProfileID(prof.ProfileID())
	cpuProf.SetTime(prof.Time())
	cpuProf.SetDurationNano(prof.DurationNano())
	cpuProf.SampleType().SetTypeStrindex(dict.str(sampleTypeCPU))
	cpuProf.SampleType().SetUnitStrindex(dict.str(periodUnitNanos))
	cpuProf.PeriodType().SetTypeStrindex(dict.str(sampleTypeCPU))
	cpuProf.PeriodType().SetUnitStrindex(dict.str(periodUnitNanos))
	cpuProf.SetPeriod(methodTracePeriodNanos)
	prof.AttributeIndices().CopyTo(cpuProf.AttributeIndices())
}

// profileStart is the Unix time in nanoseconds that V1 elapsed_since_start_ns
// values count from: the profile timestamp (0 when absent).
func profileStart(p *sentry.Profile) uint64 {
	if isV2(p) || p.Timestamp.IsZero() {
		return 0
	}
	ns := p.Timestamp.UnixNano()
	if ns < 0 {
		return 0
	}
	return uint64(ns)
}

// grow sizes the dictionary maps for the item before it is walked, so that a
// large chunk does not rehash its way up.
func (b *ProfilesBuilder) grow(p *sentry.Profile) {
	d := b.dict
	frames, stacks := len(p.Frames), p.Stacks.Len()
	// Maps that held a larger item before (Reset empties them, keeping
	// their memory) have room already.
	if frames > b.frameRoom {
		b.frameRoom = frames
		b.locationKeys = slices.Grow(b.locationKeys, frames)
	}
	b.stackRoom = max(b.stackRoom, stacks)
	b.locations.reserve(frames)
	// A frame's module, filename and in_app become attributes; most are
	// shared, a few per frame are new.
	d.reserve(2*frames, frames, frames, stacks)
	tables := d.dict
	tables.LocationTable().EnsureCapacity(tables.LocationTable().Len() + frames)
	tables.FunctionTable().EnsureCapacity(tables.FunctionTable().Len() + frames)
	tables.StringTable().EnsureCapacity(tables.StringTable().Len() + 2*frames)
	tables.AttributeTable().EnsureCapacity(tables.AttributeTable().Len() + 2*frames)
	tables.StackTable().EnsureCapacity(tables.StackTable().Len() + stacks)
	b.frameLocations = slices.Grow(b.frameLocations[:0], frames)
	b.stackIndices = slices.Grow(b.stackIndices[:0], stacks)
	b.events = slices.Grow(b.events[:0], len(p.Samples))
}

// largeItemSamples is the sample count above which an item's scratch space
// is released as soon as it is used rather than kept for the next item.
const largeItemSamples = 1 << 18

// sampleGroup is one future pprofile Sample: the events sharing a key.
type sampleGroup struct {
	key  sampleKey
	next int32
}

// addSamples groups profile.samples by (stack, thread, queue, state, link)
// into pprofile Samples with sorted timestamps.
func (b *ProfilesBuilder) addSamples(prof pprofile.Profile, p *sentry.Profile, item DecodedProfile, start uint64) addedSamples {
	lk := newLinker(b.dict, sampleLinksOf(p, item.Transaction, item.Spans, start)) // transaction.go
	// A method trace's samples carry their own wall time.
	weighted := hasDurations(p)
	groups, events, weights := b.groupSamples(p, &lk, start, weighted)
	if len(events) == 0 {
		return addedSamples{weighted: weighted, period: sentryPeriodNanos}
	}
	added := addedSamples{count: len(events), weighted: weighted}
	added.first, added.last = timeRange(events)
	// A method trace's samples carry their own wall time; a sampled
	// profile's samples last until the next sample of their thread.
	// Grouped samples carry no values: their timestamps give the same.
	withValues := weighted || !b.opts.GroupSamples
	if weighted {
		added.period = methodTracePeriodNanos
	} else {
		added.period = b.measurePeriod(events)
		if withValues {
			weights = b.sampleDurations(events, added.period)
		}
	}
	b.weights = weights
	b.sortByGroup(groups, events, withValues, weighted)
	if len(events) > largeItemSamples {
		b.releaseScratch()
	}
	b.appendSamples(prof, p, groups, weighted)
	return added
}

// timeRange is the earliest and latest time of events (not empty).
func timeRange(events []event) (first, last uint64) {
	first, last = events[0].ts, events[0].ts
	for _, e := range events {
		first, last = min(first, e.ts), max(last, e.ts)
	}
	return first, last
}

// releaseScratch lets go of the scratch space a large item no longer
// needs: the pdata Samples built next are the peak of its translation,
// and the space is better given back than kept for the next item.
func (b *ProfilesBuilder) releaseScratch() {
	b.events, b.sampleThreads, b.groupHeads = nil, nil, nil
	b.sampleStacks, b.sampleTimes = nil, nil
	b.weights, b.cpuWeights, b.idleOf = nil, nil, nil
}

// groupSamples reads p's samples into events (b.events) and their groups
// (b.groups), one per stack, thread, link, queue and state; for a method
// trace also each sample's wall and CPU time (b.weights, b.cpuWeights).
// Samples of an unknown stack or before the profile's start are left out.
func (b *ProfilesBuilder) groupSamples(p *sentry.Profile, lk *linker, start uint64, weighted bool) ([]sampleGroup, []event, []int64) {
	// Idle samples of a transaction profile: the stack Sentry shows them
	// with, grouped apart from the empty stack (their slots follow the
	// Sentry stacks' slots), and sentry.sample.idle (receive_idle.go).
	var idleAttr int32
	if b.findIdleSamples(p, start) {
		idleAttr = b.dict.attrBool(sentryattr.SampleIdle, true)
	}
	groups := b.groups[:0]
	events := b.events[:0]
	weights, cpuWeights := b.weights[:0], b.cpuWeights[:0]
	// Most items have no links, queues, states or idle samples: their
	// Samples need not be read again (resolveThreads read the rest).
	ordinary := b.ordinarySamples && !lk.any() && idleAttr == 0
	index := b.newGroupIndex(len(p.Samples), len(b.stackSlots)+len(b.idleStacks), ordinary)
	times, threads := b.sampleTimes, b.sampleThreads
	for i, id := range b.sampleStacks {
		// "stack_id" → Sample.stack_index; V2 "timestamp", or V1
		// "timestamp" + "elapsed_since_start_ns" → timestamps_unix_nano
		// (resolveThreads).
		k, slot, ok := b.stackOf(id)
		if !ok {
			continue
		}
		ts := times[i]
		k.thread = threads[i]
		if !ordinary {
			s := &p.Samples[i]
			k.link = lk.linkFor(s.ThreadID, ts)
			if idleAttr != 0 {
				slot = b.idleKey(&k, i, slot, idleAttr)
			}
			b.sampleAttrs(&k, s)
		}
		cell := uint64(slot)*index.threads + uint64(k.thread)
		g, found := index.known(cell)
		if !found {
			groups, g = index.group(groups, cell, k)
		}
		events = append(events, event{group: g, thread: k.thread, ts: ts})
		if weighted {
			weights, cpuWeights = appendWeights(weights, cpuWeights, p, i)
		}
	}
	b.groups, b.events, b.cpuWeights = groups, events, cpuWeights
	return groups, events, weights
}

// stackOf is the dictionary stack of a sample ("stack_id") and the slot its
// samples merge in; false for a stack out of range or invalid.
func (b *ProfilesBuilder) stackOf(id int32) (sampleKey, int32, bool) {
	if id < 0 || int(id) >= len(b.stackIndices) {
		return sampleKey{}, 0, false
	}
	stack := b.stackIndices[id]
	return sampleKey{stack: stack}, b.stackSlots[id], stack >= 0
}

// idleKey marks idle sample i of k with sentry.sample.idle and, when Sentry
// shows it with a stack, that stack and its slot; it returns the slot.
func (b *ProfilesBuilder) idleKey(k *sampleKey, i int, slot, idleAttr int32) int32 {
	r := b.idleOf[i]
	if r == sampleActive {
		return slot
	}
	k.idle = idleAttr
	if r >= 0 {
		k.stack, slot = b.idleStacks[r], int32(len(b.stackSlots))+r
	}
	return slot
}

// sampleAttrs: "queue_address" → sentry.queue.address, "state" →
// sentry.thread.state (sample attributes); it also counts a linked sample.
func (b *ProfilesBuilder) sampleAttrs(k *sampleKey, s *sentry.Sample) {
	if k.link != 0 {
		b.linked++
	}
	if s.QueueAddress != "" {
		k.queue = b.dict.attrStr(sentryattr.QueueAddress, s.QueueAddress)
	}
	if s.State != "" {
		k.state = b.dict.attrStr(sentryattr.ThreadState, s.State)
	}
}

// appendWeights appends sample i's wall and CPU time (0 without one) of a
// method trace.
func appendWeights(weights, cpuWeights []int64, p *sentry.Profile, i int) ([]int64, []int64) {
	weights = append(weights, int64(p.SampleWallNS[i]))
	var cpu int64
	if p.SampleCPUNS != nil {
		cpu = int64(p.SampleCPUNS[i])
	}
	return weights, append(cpuWeights, cpu)
}

// sampleTime is when a sample was taken: V2 "timestamp", or V1 "timestamp"
// + "elapsed_since_start_ns"; false when that is before the Unix epoch or
// overflows.
func sampleTime(s *sentry.Sample, v2 bool, start uint64) (uint64, bool) {
	if v2 {
		return uint64(s.Timestamp), s.Timestamp >= 0
	}
	ts := start + s.ElapsedSinceStartNS
	return ts, ts >= start
}

// groupIndex finds a sample group through its (stack, thread) cell: a dense
// table when it is not much larger than the samples, else a map. Groups of
// one cell that differ in queue, state or link are chained through next.
type groupIndex struct {
	threads uint64
	heads   []int32 // dense: by cell, -1 for none
	headMap map[uint64]int32
	// plain: no sample has a queue, state, link or idle mark, so a cell
	// (whose slot fixes the stack) holds one group, its head, found
	// without reading a key: on a chunk with as many cells as samples,
	// the groups' keys are a cache miss each.
	plain bool
}

func (b *ProfilesBuilder) newGroupIndex(samples, slots int, plain bool) groupIndex {
	x := groupIndex{threads: uint64(b.threads.Len()), plain: plain}
	cells := uint64(slots) * x.threads
	if cells > 2*uint64(samples)+1024 {
		x.headMap = make(map[uint64]int32, slots)
		return x
	}
	x.heads = slices.Grow(b.groupHeads[:0], int(cells))[:cells]
	for i := range x.heads {
		x.heads[i] = -1
	}
	b.groupHeads = x.heads
	return x
}

// known is the group of cell when the index is plain and dense and the
// cell has one, found inline: a call per sample to group, which passes the
// key and the groups, cost 1.9 % of BenchmarkBuildReused's instructions.
func (x *groupIndex) known(cell uint64) (int32, bool) {
	if x.plain && x.headMap == nil {
		if g := x.heads[cell]; g >= 0 {
			return g, true
		}
	}
	return 0, false
}

// head is the first group of a cell, -1 for none.
func (x *groupIndex) head(cell uint64) int32 {
	if x.headMap == nil {
		return x.heads[cell]
	}
	if h, ok := x.headMap[cell]; ok {
		return h
	}
	return -1
}

// group is the group of key k in cell, added to groups when new.
func (x *groupIndex) group(groups []sampleGroup, cell uint64, k sampleKey) ([]sampleGroup, int32) {
	head := x.head(cell)
	if x.plain && head >= 0 {
		return groups, head
	}
	g := head
	for g >= 0 && groups[g].key != k {
		g = groups[g].next
	}
	if g < 0 {
		g = int32(len(groups))
		groups = append(groups, sampleGroup{key: k, next: head})
		x.setHead(cell, g)
	}
	return groups, g
}

func (x *groupIndex) setHead(cell uint64, g int32) {
	if x.headMap == nil {
		x.heads[cell] = g
		return
	}
	x.headMap[cell] = g
}

// sortByGroup is a counting sort of the events by group, their timestamps
// into b.timestamps and their wall (and CPU) times into b.weightsSorted
// (b.cpuWeightsSorted), group g at b.groupStarts[g]:b.groupStarts[g+1]:
// one backing array for every Sample's timestamps instead of one growing
// slice per Sample.
func (b *ProfilesBuilder) sortByGroup(groups []sampleGroup, events []event, withValues, withCPU bool) {
	starts := groupStartsOf(slices.Grow(b.groupStarts[:0], len(groups)+1)[:len(groups)+1], events)
	ts := slices.Grow(b.timestamps[:0], len(events))[:len(events)]
	fill := slices.Grow(b.groupFill[:0], len(groups))[:len(groups)]
	copy(fill, starts[:len(groups)])
	values := sizedIf(withValues, b.weightsSorted, len(events))
	cpuValues := sizedIf(withCPU, b.cpuWeightsSorted, len(events))
	for i, e := range events {
		at := fill[e.group]
		ts[at] = e.ts
		if withValues {
			values[at] = b.weights[i]
		}
		if withCPU {
			cpuValues[at] = b.cpuWeights[i]
		}
		fill[e.group]++
	}
	b.groupStarts, b.timestamps, b.groupFill = starts, ts, fill
	if withValues {
		b.weightsSorted = values
	}
	if withCPU {
		b.cpuWeightsSorted = cpuValues
	}
}

// groupStartsOf fills starts (one more than the groups) with where each
// group's events start once sorted by group: a count, then prefix sums.
func groupStartsOf(starts []int32, events []event) []int32 {
	clear(starts)
	for _, e := range events {
		starts[e.group+1]++
	}
	for g := 1; g < len(starts); g++ {
		starts[g] += starts[g-1]
	}
	return starts
}

// sizedIf is buf's memory as n values when want, else nil.
func sizedIf(want bool, buf []int64, n int) []int64 {
	if !want {
		return nil
	}
	return slices.Grow(buf[:0], n)[:n]
}

// appendSamples writes the groups as pprofile Samples: one per Sentry
// sample, its value its wall time (OTLP asks that timestamps and values be
// as many, and backends that read one value per Sample, Grafana Pyroscope
// among them, then show wall time rather than a count); with GroupSamples,
// one per group, its timestamps without values (a method trace's keep
// theirs). The group's attributes are built once.
func (b *ProfilesBuilder) appendSamples(prof pprofile.Profile, p *sentry.Profile, groups []sampleGroup, weighted bool) {
	starts := b.groupStarts
	service := b.serviceSampleAttrs()
	queueLabels := queueLabelIndex(b.dict, p)
	out := groupSamples{samples: prof.Samples(), withValues: weighted}
	if b.cpuProf != (pprofile.Profile{}) {
		out.cpu = b.cpuProf.Samples()
	}
	if b.opts.GroupSamples {
		out.samples.EnsureCapacity(out.samples.Len() + len(groups))
	} else {
		out.samples.EnsureCapacity(out.samples.Len() + len(b.timestamps))
	}
	attrs := b.attrScratch[:0]
	for g := range groups {
		k := &groups[g].key
		attrs = b.groupAttrs(attrs[:0], k, service, queueLabels)
		group, groupValues, groupCPU := b.sortedGroup(starts[g], starts[g+1], weighted)
		if b.opts.GroupSamples {
			out.appendGroup(k, attrs, group, groupValues, groupCPU)
		} else {
			out.appendEach(k, attrs, group, groupValues, groupCPU)
		}
	}
	b.attrScratch, b.cpuWritten = attrs, out.cpuWritten
}

// sortedGroup is the timestamps of the group at [from, to) of the sorted
// events, with their wall and CPU times when there are, sorted by time.
func (b *ProfilesBuilder) sortedGroup(from, to int32, weighted bool) (group []uint64, values, cpu []int64) {
	group = b.timestamps[from:to]
	switch {
	case weighted:
		values, cpu = b.weightsSorted[from:to], b.cpuWeightsSorted[from:to]
		sortByTime(group, values, cpu)
	case b.weightsSorted != nil:
		values = b.weightsSorted[from:to]
		sortByTime(group, values)
	default:
		sortByTime(group)
	}
	return group, values, cpu
}

// groupSamples is where a group's Samples go: the profile's, and the CPU
// view's when the item has one (cpu not zero).
type groupSamples struct {
	samples, cpu pprofile.SampleSlice
	// withValues: grouped Samples keep their values (a method trace's).
	withValues bool
	// cpuWritten counts the samples written to the CPU view.
	cpuWritten int
}

// appendGroup writes a group as one Sample with its timestamps (and its
// values when withValues), and its CPU times to the CPU view.
func (o *groupSamples) appendGroup(k *sampleKey, attrs []int32, group []uint64, values, cpu []int64) {
	s := appendSample(o.samples, k, attrs)
	s.TimestampsUnixNano().FromRaw(group)
	if o.withValues {
		s.Values().FromRaw(values)
	}
	if o.cpu != (pprofile.SampleSlice{}) {
		c := appendSample(o.cpu, k, attrs)
		c.TimestampsUnixNano().FromRaw(group)
		c.Values().FromRaw(cpu)
		o.cpuWritten += len(group)
	}
}

// appendEach writes a group as one Sample per timestamp, its value its
// wall time, and each positive CPU time as a Sample of the CPU view.
func (o *groupSamples) appendEach(k *sampleKey, attrs []int32, group []uint64, values, cpu []int64) {
	hasCPU := o.cpu != (pprofile.SampleSlice{})
	for i, at := range group {
		s := appendSample(o.samples, k, attrs)
		// Sized by EnsureCapacity, then appended to (see appendSample).
		ts, v := s.TimestampsUnixNano(), s.Values()
		ts.EnsureCapacity(1)
		ts.Append(at)
		v.EnsureCapacity(1)
		v.Append(values[i])
		if hasCPU && cpu[i] > 0 {
			c := appendSample(o.cpu, k, attrs)
			c.TimestampsUnixNano().Append(at)
			c.Values().Append(cpu[i])
			o.cpuWritten++
		}
	}
}

// groupAttrs appends the attributes every Sample of a group carries: its
// thread's, the service's, its queue (and the queue's label) and its state.
func (b *ProfilesBuilder) groupAttrs(attrs []int32, k *sampleKey, service []int32, queueLabels map[int32]int32) []int32 {
	t := b.threadAttrsOf[k.thread]
	attrs = append(attrs, b.threadAttrBuf[t.first:t.first+t.n]...)
	attrs = append(attrs, service...)
	if k.queue != 0 {
		attrs = append(attrs, k.queue)
		if label, ok := queueLabels[k.queue]; ok {
			attrs = append(attrs, label)
		}
	}
	if k.state != 0 {
		attrs = append(attrs, k.state)
	}
	if k.idle != 0 {
		attrs = append(attrs, k.idle)
	}
	return attrs
}

// methodTracePeriodNanos is the resolution of an exact method trace (ART
// records microseconds): its samples are time slices, not sampling periods.
const methodTracePeriodNanos = 1000

func hasCPUDurations(p *sentry.Profile) bool {
	return hasDurations(p) && len(p.SampleCPUNS) == len(p.Samples)
}

func hasDurations(p *sentry.Profile) bool {
	return len(p.Samples) > 0 && len(p.SampleWallNS) == len(p.Samples)
}

// sortByTime sorts timestamps and their values together (a method trace's
// slices of one stack come in time order; this only guards the rest).
func sortByTime(ts []uint64, values ...[]int64) {
	if slices.IsSorted(ts) {
		return
	}
	idx := make([]int, len(ts))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(ts[a], ts[b]) })
	t2 := slices.Clone(ts)
	for i, j := range idx {
		ts[i] = t2[j]
	}
	for _, v := range values {
		v2 := slices.Clone(v)
		for i, j := range idx {
			v[i] = v2[j]
		}
	}
}

// appendSample appends a Sample of a group's stack, link and attributes.
func appendSample(samples pprofile.SampleSlice, k *sampleKey, attrs []int32) pprofile.Sample {
	s := samples.AppendEmpty()
	// A new Sample's indices are 0: the stores are skipped for the
	// common values (no link), as they run once per Sentry sample.
	if k.stack != 0 {
		s.SetStackIndex(k.stack)
	}
	if k.link != 0 {
		s.SetLinkIndex(k.link)
	}
	if len(attrs) > 0 {
		// Sized by EnsureCapacity, then appended to: FromRaw or Append on
		// the new Sample's empty slice make the same allocation through
		// growslice, which sizes it in more steps. For the attribute
		// indices, timestamp and value of each Sample (appendEach), 4.7 %
		// fewer instructions in BenchmarkBuildReused; written out here,
		// as a helper of three lines is not inlined and costs 2 % back.
		a := s.AttributeIndices()
		a.EnsureCapacity(len(attrs))
		a.Append(attrs...)
	}
	return s
}

// maxPeriodIntervals bounds the intervals a period is measured from.
const maxPeriodIntervals = 4096

// measurePeriod is the median interval between consecutive samples of one
// thread: the SDK's typical sampling period (Sentry's spec says 101 Hz;
// SDKs differ), the profile's period and the wall time of each thread's
// last sample. Without two samples on a thread, or when
// the median is no plausible sampling interval, it is the spec's 1/101 s.
func (b *ProfilesBuilder) measurePeriod(events []event) int64 {
	// The first samples suffice; sorted by thread and time, as SDKs need
	// not send them in order.
	pairs := b.byThreadAndTime(events[:min(len(events), maxPeriodIntervals)])
	intervals := appendIntervals(b.intervals[:0], pairs)
	b.periodPairs, b.intervals = pairs, intervals
	if len(intervals) == 0 {
		return sentryPeriodNanos
	}
	slices.Sort(intervals)
	period := intervals[len(intervals)/2]
	if period < minPeriodNanos || period > maxPeriodNanos {
		// Not a sampling interval: hand-written or clipped samples.
		return sentryPeriodNanos
	}
	return period
}

// byThreadAndTime is the thread and time of each event, sorted by thread
// (a counting sort: threads are dense numbers) and then by time within a
// thread, where an SDK did not send them in order: linear for the usual
// time-ordered samples, instead of a comparison sort of them all.
func (b *ProfilesBuilder) byThreadAndTime(events []event) []threadTime {
	starts := slices.Grow(b.periodStarts[:0], b.threads.Len()+1)[:b.threads.Len()+1]
	clear(starts)
	for _, e := range events {
		starts[e.thread+1]++
	}
	for t := 1; t < len(starts); t++ {
		starts[t] += starts[t-1]
	}
	pairs := slices.Grow(b.periodPairs[:0], len(events))[:len(events)]
	for _, e := range events {
		t := e.thread
		pairs[starts[t]] = threadTime{thread: t, ts: e.ts}
		starts[t]++
	}
	// starts[t] is now where thread t ends.
	begin := int32(0)
	for _, end := range starts[:len(starts)-1] {
		run := pairs[begin:end]
		if !slices.IsSortedFunc(run, byTime) {
			slices.SortFunc(run, byTime)
		}
		begin = end
	}
	b.periodStarts, b.periodPairs = starts, pairs
	return pairs
}

func byTime(a, b threadTime) int { return cmp.Compare(a.ts, b.ts) }

// appendIntervals appends the intervals between consecutive samples of
// one thread at different times (pairs sorted by thread and time).
func appendIntervals(intervals []int64, pairs []threadTime) []int64 {
	for i := 1; i < len(pairs); i++ {
		if pairs[i].thread == pairs[i-1].thread && pairs[i].ts > pairs[i-1].ts {
			intervals = append(intervals, int64(pairs[i].ts-pairs[i-1].ts))
		}
	}
	return intervals
}

// sampleDurations is the wall time of each event, in event order, by
// Sentry's rule (vroom's call trees and flame graphs, Sentry's UI): a
// sample lasts from its time until the next sample of its thread. Sentry
// caps nothing: a sample followed by a long gap (a stopped process, a
// sampler that fell behind) holds the whole gap, and so it does here. The
// last sample of a thread has no next one in the item: Sentry gives it
// nothing in a single profile and, across continuous-profiling chunks, the
// time to the next chunk's first sample; an item converts alone, so it is
// worth period, the thread's typical interval (what the next chunk's first
// sample follows it by). Samples at the same time: all but the last are
// worth 0.
//
// SDKs send each thread's samples in time order: then each event's next
// is the thread's next event, found in one pass. Otherwise the events are
// sorted by thread and time first (sampleDurationsSorted).
func (b *ProfilesBuilder) sampleDurations(events []event, period int64) []int64 {
	durations := slices.Grow(b.weights[:0], len(events))[:len(events)]
	last := slices.Grow(b.threadStarts[:0], b.threads.Len())[:b.threads.Len()]
	for t := range last {
		last[t] = -1
	}
	b.threadStarts = last
	for i, e := range events {
		if j := last[e.thread]; j >= 0 {
			if e.ts < events[j].ts {
				return b.sampleDurationsSorted(events, period)
			}
			durations[j] = int64(min(e.ts-events[j].ts, math.MaxInt64))
		}
		last[e.thread] = int32(i)
	}
	for _, j := range last {
		if j >= 0 {
			durations[j] = period
		}
	}
	return durations
}

// sampleDurationsSorted is sampleDurations for events whose threads' times
// are not in order.
func (b *ProfilesBuilder) sampleDurationsSorted(events []event, period int64) []int64 {
	// The events of each thread, in event order (a counting sort by
	// thread), then by time where an SDK did not send them in order.
	nThreads := b.threads.Len()
	starts := slices.Grow(b.threadStarts[:0], nThreads+1)[:nThreads+1]
	clear(starts)
	for _, e := range events {
		starts[e.thread+1]++
	}
	for t := 1; t < len(starts); t++ {
		starts[t] += starts[t-1]
	}
	order := slices.Grow(b.threadOrder[:0], len(events))[:len(events)]
	for i, e := range events {
		t := e.thread
		order[starts[t]] = int32(i)
		starts[t]++
	}
	// starts[t] is now where thread t ends.
	durations := slices.Grow(b.weights[:0], len(events))[:len(events)]
	begin := int32(0)
	for _, end := range starts[:nThreads] {
		runDurations(durations, events, order[begin:end], period)
		begin = end
	}
	b.threadStarts, b.threadOrder = starts, order
	if len(events) > largeItemSamples {
		b.threadOrder = nil // let it go before the next arrays are made
	}
	return durations
}

// runDurations sets the wall time of the events of one thread's run (event
// indices, in event order): until the next sample by time, the last one
// period.
func runDurations(durations []int64, events []event, run []int32, period int64) {
	if !inTimeOrder(events, run) {
		slices.SortStableFunc(run, func(x, y int32) int { return cmp.Compare(events[x].ts, events[y].ts) })
	}
	for k, i := range run {
		if k+1 < len(run) {
			durations[i] = int64(min(events[run[k+1]].ts-events[i].ts, math.MaxInt64))
		} else {
			durations[i] = period
		}
	}
}

// inTimeOrder reports whether the events of run are in time order, as
// SDKs send them: compared in place, as a sort's comparison function
// called per pair cost more than the durations themselves.
func inTimeOrder(events []event, run []int32) bool {
	for k := 1; k < len(run); k++ {
		if events[run[k]].ts < events[run[k-1]].ts {
			return false
		}
	}
	return true
}

// No Sentry SDK samples faster than 10 kHz or slower than 1 Hz.
const (
	minPeriodNanos = 100_000
	maxPeriodNanos = 1_000_000_000
)

type threadTime struct {
	thread int32
	ts     uint64
}

// putProfileAttributes keeps the per-item fields and collections that have
// no OTLP place as profile attributes, so that the exporter can give them
// back. Each Sentry object's file maps its own.
func (b *ProfilesBuilder) putProfileAttributes(prof pprofile.Profile, p *sentry.Profile, start uint64) {
	d := b.dict
	// At most 11 attributes: on the stack, not one allocation per item.
	var buf [11]int32
	attrs := buf[:0]
	for _, a := range idAttrs(p) { // resource.go
		attrs = d.appendStr(attrs, a.key, a.value)
	}
	names, transactions := transactionAttrs(p) // transaction.go
	for _, a := range names {
		attrs = d.appendStr(attrs, a.key, a.value)
	}
	for _, a := range [...]profileAttr{
		transactions,
		threadMetadataAttr(p),      // thread.go
		queueMetadataAttr(p),       // thread.go
		debugImagesAttr(p),         // image.go
		measurementsAttr(p, start), // measurements.go
	} {
		if a.key != "" {
			attrs = append(attrs, d.attrValue(a.key, a.value))
		}
	}
	if len(attrs) > 0 {
		prof.AttributeIndices().FromRaw(attrs)
	}
}

// serviceSampleAttrs are the attributes of the item's service that every
// Sample carries too (serviceAttrs).
func (b *ProfilesBuilder) serviceSampleAttrs() []int32 {
	out := b.serviceScratch[:0]
	for _, a := range serviceAttrs(&b.resource) { // resource.go
		out = b.dict.appendStr(out, a.key, a.value)
	}
	b.serviceScratch = out
	return out
}

// linker finds the Link of a sample (sampleLinks) in the dictionary.
type linker struct {
	sampleLinks
	dict *dictionaryBuilder
}

// newLinker adds a Link for each span of l.
func newLinker(d *dictionaryBuilder, l sampleLinks) linker {
	for i := range l.ranges {
		l.ranges[i].link = d.link(l.ranges[i].trace, l.ranges[i].span)
	}
	return linker{sampleLinks: l, dict: d}
}

// any reports whether a sample may have a Link.
func (l *linker) any() bool { return l.lookup != nil || len(l.ranges) > 0 }

// linkFor is the Link of a sample on thread at ts, 0 for none.
func (l *linker) linkFor(thread string, ts uint64) int32 {
	if l.lookup != nil {
		trace, span, ok := l.lookup.SpanAt(thread, ts)
		if !ok {
			return 0
		}
		return l.dict.link(trace, span)
	}
	if len(l.ranges) == 0 {
		return 0
	}
	if r := l.rangeAt(thread, ts); r != nil {
		return r.link
	}
	return 0
}
