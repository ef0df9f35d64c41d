package profilesout

// pdata → Sentry: the walk. FromProfiles groups the profiles by profiler
// (export_group.go), expands their samples into time-sorted events
// (export_sort.go), cuts them into windows and assembles each window's V2
// chunk (export_chunk.go), calling the object files for each Sentry object.

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/pprofdict"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/profileschema"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// ExportOptions tune pdata → Sentry. The zero value works.
type ExportOptions struct {
	// DefaultPlatform is the chunk platform when neither sentry.platform, nor
	// the frames' profile.frame.type, nor telemetry.sdk.language names one.
	// Default "native": profiles with nothing else to go by are, in practice,
	// address-only native stacks (eBPF and perf based profilers).
	DefaultPlatform string
	// SDKName and SDKVersion are the client_sdk of every chunk. Defaults:
	// "sentryprofileexporter" and the version of this module.
	SDKName, SDKVersion string
	// DefaultSampleRateHz spreads aggregated samples (values without
	// timestamps) over time when the profile has no usable period. Default
	// 101, the Sentry SDKs' rate.
	DefaultSampleRateHz float64
	// DefaultRelease and DefaultEnvironment are the release and environment
	// of chunks whose resource has no service.version, respectively no
	// deployment.environment.name (or the older deployment.environment).
	DefaultRelease, DefaultEnvironment string
	// InstanceID tells apart the profilers of sources whose resource names
	// no host, container, pod or service instance (see profilerIdentityKeys):
	// without it, pid 1 of every container on every host would be one
	// profiler. The exporter passes the collector's service.instance.id.
	InstanceID string
	// ChunkWindow is the longest span of one chunk, in nanoseconds. Profiles
	// of one profiler are merged and then cut into windows of at most this
	// length. Default (and upper bound) 66 s, Relay's limit, which keeps a
	// Sentry SDK's 60 s chunk whole.
	ChunkWindow int64
	// Platforms, when set, keeps the platform chosen for each profiler across
	// calls, so that a window holding only kernel frames does not send a
	// Python process as native (Relay routes chunks by platform).
	Platforms *PlatformMemory
	// MaxChunkBytes is the most JSON bytes one chunk may hold; a larger
	// chunk is not built to the end and is dropped as
	// profiling_exceed_size_limit. Default (and upper bound)
	// profileschema.MaxProfileItemBytes, Relay's limit for one profile item.
	MaxChunkBytes int64
	// MaxRequestBytes is the most JSON bytes the chunks of one call may
	// hold together. Once a chunk does not fit, it and the profiles not yet
	// converted are dropped as profiling_exceed_size_limit without being
	// built. Default DefaultMaxRequestChunkBytes.
	MaxRequestBytes int64
}

// DefaultSDKName is the client_sdk.name of produced chunks.
const DefaultSDKName = "sentryprofileexporter"

// Chunk is one V2 profile chunk and the resource it came from.
type Chunk struct {
	ResourceIndex int             // index of the ResourceProfiles it came from (the exporter routes by resource)
	Profile       *sentry.Profile // V2 chunk that passes sentry.Validate
	// Resources are every ResourceProfiles whose samples the chunk holds,
	// ResourceIndex first: profiles of one profiler are merged across the
	// resources of a request (see FromProfiles), so delivering the chunk
	// delivers all of them.
	Resources []int
	// SizeBound is at least the length of the chunk's JSON
	// (sentry.AppendChunkJSON), and at most MaxChunkBytes.
	SizeBound int64
}

// Drop is a part of the input that produced no chunk.
type Drop struct {
	Reason  sentry.Reason
	Samples int   // sample events lost
	Err     error // why
	// Partial: samples were cut from chunks that were still made; no
	// chunk was lost. A value cut short counts as one sample.
	Partial bool
}

// Limits of one conversion. Relay rejects a chunk that spans more than 66 s;
// longer spans are cut into equal windows of at most ExportOptions.ChunkWindow.
const (
	maxChunkSpanNanos = 66e9
	// maxProfileEvents bounds the events one profile may expand to: values
	// of aggregated samples are counts chosen by the sender, and a chunk that
	// large would exceed Relay's 50 MB item limit anyway.
	maxProfileEvents = 1 << 19
)

func (o ExportOptions) withDefaults() ExportOptions {
	o.DefaultPlatform = cmp.Or(o.DefaultPlatform, "native")
	o.SDKName = cmp.Or(o.SDKName, DefaultSDKName)
	if o.SDKVersion == "" {
		o.SDKVersion = moduleVersion()
	}
	if !(o.DefaultSampleRateHz > 0) || math.IsInf(o.DefaultSampleRateHz, 0) {
		o.DefaultSampleRateHz = 101
	}
	o.ChunkWindow = inRangeOr(o.ChunkWindow, maxChunkSpanNanos, maxChunkSpanNanos)
	o.MaxChunkBytes = inRangeOr(o.MaxChunkBytes, profileschema.MaxProfileItemBytes, profileschema.MaxProfileItemBytes)
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = DefaultMaxRequestChunkBytes
	}
	return o
}

// inRangeOr is v when it is in (0, limit], else def.
func inRangeOr[T int | int64](v, limit, def T) T {
	if v <= 0 || v > limit {
		return def
	}
	return v
}

// FromProfiles converts every profile of pd into V2 chunks. Each returned
// chunk passes sentry.Validate; whatever cannot become one is reported as a
// Drop with the number of sample events it held. The output is
// deterministic: the same input gives the same chunks in the same order.
//
// Samples with timestamps become one event per timestamp (a value above 1
// for a timestamp is that many events at that time). Samples with values and
// no timestamps are spread over the profile from its start time, one event
// per period (the profile's period, else 1/DefaultSampleRateHz), squeezed to
// fit the profile's duration when they would overflow it. Profiles that span
// more than 66 s are cut into chunks of 60 s.
//
// What one call makes is bounded whatever the input: one sample value
// makes at most 65,536 events, the request at most 524,288 beyond one per
// sample or timestamp, a chunk at most MaxChunkBytes of JSON and the
// request's chunks at most MaxRequestBytes (see export_limits.go); what
// they cut is reported as profiling_exceed_size_limit.
func FromProfiles(pd pprofile.Profiles, opts ExportOptions) ([]Chunk, []Drop) {
	var chunks []Chunk
	drops := EachChunk(pd, opts, func(c Chunk) { chunks = append(chunks, c) })
	return chunks, drops
}

// EachChunk is FromProfiles handing each chunk to emit as soon as it is
// made, so that the caller can encode it and let the Profile go before the
// next one is built: a request's chunks are never all in memory at once.
// Chunks come in the order FromProfiles returns them; the drops are
// returned at the end.
func EachChunk(pd pprofile.Profiles, opts ExportOptions, emit func(Chunk)) []Drop {
	e := newExportRun(pd, opts, emit)
	return e.convert(pd)
}

func newExportRun(pd pprofile.Profiles, opts ExportOptions, emit func(Chunk)) *exportRun {
	e := &exportRun{opts: opts.withDefaults(), dictionaryView: dictionaryView{Reader: pprofdict.New(pd.Dictionary())}, emit: emit}
	e.extraEvents = maxRequestExtraEvents
	e.bytesLeft = e.opts.MaxRequestBytes
	e.indexAttributes()
	return e
}

// exportRun is one FromProfiles call: pd's dictionary read once into
// lookup tables, and the chunks and drops made so far.
type exportRun struct {
	opts ExportOptions
	dictionaryView
	emit  func(Chunk)
	drops []Drop
	// extraEvents is what is left of maxRequestExtraEvents; bytesLeft of
	// MaxRequestBytes. Once a chunk does not fit bytesLeft, spent is set
	// and nothing more is built.
	extraEvents int64
	bytesLeft   int64
	spent       bool
	// stackStates memoizes the validity of each dictionary stack, found
	// by the chunk builder as it walks the stack (or by stackValid where a
	// stack reaches no chunk): samples of one stack on several threads,
	// and every chunk of a profile, share it.
	stackStates   []stackState
	locationValid []bool // see validLocations
	frameCount    int    // see dictionaryFrames
	tables        chunkTables
}

// stackState is the memoized validity of a dictionary stack.
type stackState uint8

const (
	stackUnchecked stackState = iota
	stackValid
	stackInvalid
)

func (e *exportRun) indexAttributes() {
	e.indexAttrs()
	e.stackStates = make([]stackState, e.Len(pprofdict.Stacks))
}

// Sample type ranks, best first.
const (
	rankSamples     = iota // samples/count: one per event
	rankWall               // wall time
	rankCPU                // cpu time
	rankOtherTime          // another kind of time
	rankUnsupported        // bytes, objects, …: not samples of a stack over time
)

func (e *exportRun) sampleTypeRank(prof pprofile.Profile) int {
	st := prof.SampleType()
	typ, unit := e.Str(st.TypeStrindex()), e.Str(st.UnitStrindex())
	switch {
	case unit == "count" || unit == "":
		return rankOf(countRanks, typ)
	case timeUnitNanos(unit) > 0:
		return rankOf(timeRanks, typ)
	}
	return rankUnsupported
}

// The sample types the exporter reads, by unit: counted (unit "count" or
// none) or timed (a time unit), each with its rank.
var (
	countRanks = map[string]int{"": rankSamples, "samples": rankSamples, "sample": rankSamples, "count": rankSamples, "events": rankSamples,
		"wall": rankWall, "cpu": rankCPU}
	timeRanks = map[string]int{"wall": rankWall, "cpu": rankCPU, "samples": rankCPU, "sample": rankCPU, "": rankCPU,
		"off_cpu": rankOtherTime}
)

// rankOf is the rank of sample type typ in ranks; rankUnsupported when
// it has none.
func rankOf(ranks map[string]int, typ string) int {
	if r, ok := ranks[typ]; ok {
		return r
	}
	return rankUnsupported
}

// timeUnitNanos is the length of a time unit in nanoseconds, 0 for other
// units.
func timeUnitNanos(unit string) float64 {
	switch unit {
	case "nanoseconds", "nanosecond", "ns":
		return 1
	case "microseconds", "microsecond", "us":
		return 1e3
	case "milliseconds", "millisecond", "ms":
		return 1e6
	case "seconds", "second", "s":
		return 1e9
	}
	return 0
}

func (e *exportRun) drop(reason sentry.Reason, samples int, err error) {
	e.drops = append(e.drops, Drop{Reason: reason, Samples: samples, Err: err})
}

// sampleInfo is what every event of one pprofile Sample shares.
type sampleInfo struct {
	stack  int32
	thread int32 // index in groupConverter.threads
	queue  string
	state  string
}

// exportEvent is one sample event: a time at which a pprofile Sample's
// stack was seen. It carries the sample's thread (in the padding a
// timestamp and an index leave anyway) so that sorting compares in place.
type exportEvent struct {
	ts     uint64
	sample int32
	thread int32 // index in groupConverter.threads
}

// groupConverter converts the profiles of one profiler (a profileGroup):
// their samples, numbered one after the other, make one run of chunks.
type groupConverter struct {
	conv      *exportRun
	meta      resourceMeta
	profs     []pprofile.Profile
	resources []int
	where     string
	samples   []sampleInfo
	threads   []threadInfo
	attrMemo  []sampleAttrMemo
	events    []exportEvent
	attrs     profileAttrs
	// malformed counts the events of samples whose stack reaches outside
	// the dictionary, found while collecting events or building chunks;
	// they are reported as one Drop at malformedAt, where collecting
	// events ended.
	malformed   int64
	malformedAt int
}

func (e *exportRun) profile(g *profileGroup) {
	x := &groupConverter{conv: e, meta: g.meta, profs: g.profs, resources: g.resources, where: g.where()}
	x.convert()
}

// sampleCount is the number of pprofile Samples of the group.
func (x *groupConverter) sampleCount() int {
	n := 0
	for _, prof := range x.profs {
		n += prof.Samples().Len()
	}
	return n
}

// convert adds the chunks and drops of the group's profiles.
func (x *groupConverter) convert() {
	e := x.conv
	defer x.dropMalformed()
	x.attrs = x.readProfileAttrs()
	x.collectEvents()
	if len(x.events) == 0 {
		if n := x.sampleCount(); n > 0 {
			e.drop(sentry.ReasonNotEnoughSamples, 0, fmt.Errorf("%s: %d samples hold no events", x.where, n))
		}
		return
	}
	if e.spent {
		// Nothing more is built: the events are counted, not sorted.
		e.drop(sentry.ReasonExceedSizeLimit, len(x.events), fmt.Errorf("%s: the request's chunks reached %d bytes", x.where, e.opts.MaxRequestBytes))
		return
	}
	x.sortEvents()

	platform := x.platform()
	windows := splitWindows(x.events, uint64(x.conv.opts.ChunkWindow))
	for w, evs := range windows {
		var next uint64
		if w+1 < len(windows) {
			next = windows[w+1][0].ts
		}
		x.window(w, evs, next, platform)
	}
}

// window makes the chunk of window w (its events evs; next is when the
// next window starts, 0 for none) and emits it, or drops it saying why.
func (x *groupConverter) window(w int, evs []exportEvent, next uint64, platform string) {
	e := x.conv
	if e.spent {
		e.drop(sentry.ReasonExceedSizeLimit, len(evs), fmt.Errorf("%s chunk %d: the request's chunks reached %d bytes", x.where, w, e.opts.MaxRequestBytes))
		return
	}
	chunk, valid, size := x.chunk(evs, w, next, platform)
	switch {
	case size < 0:
		e.dropOversized(x, w, len(evs))
		return
	case len(chunk.Samples) == 0:
		// Every sample of the window reached outside the dictionary:
		// they are counted in the group's malformed Drop.
		return
	case !valid:
		// The builder could not vouch for the chunk: Validate decides,
		// and names the rule it breaks.
		if err := sentry.Validate(chunk, sentry.DefaultLimits()); err != nil {
			e.drop(reasonOf(err), len(chunk.Samples), fmt.Errorf("%s chunk %d: %w", x.where, w, err))
			return
		}
	}
	e.bytesLeft -= size
	e.emit(Chunk{ResourceIndex: x.meta.index, Profile: chunk, Resources: x.resources, SizeBound: size})
}

// reasonOf is the Relay reason of a validation error.
func reasonOf(err error) sentry.Reason {
	var serr *sentry.Error
	if errors.As(err, &serr) {
		return serr.Reason
	}
	return sentry.ReasonInvalidSampledProfile
}

// dropOversized drops a chunk whose building stopped at the chunk or the
// request limit. The bytes it took to find out are spent: a request of
// many oversized chunks costs no more than one of the request's size.
func (e *exportRun) dropOversized(x *groupConverter, w, events int) {
	limit := min(e.opts.MaxChunkBytes, e.bytesLeft)
	if e.bytesLeft <= e.opts.MaxChunkBytes {
		e.spent = true
		e.drop(sentry.ReasonExceedSizeLimit, events, fmt.Errorf("%s chunk %d: the request's chunks reached %d bytes", x.where, w, e.opts.MaxRequestBytes))
		return
	}
	e.bytesLeft -= limit
	e.drop(sentry.ReasonExceedSizeLimit, events, fmt.Errorf("%s chunk %d: more than %d bytes of JSON", x.where, w, limit))
}

// dropMalformed reports the malformed samples of the group, in the place of
// the drops where collecting events ended.
func (x *groupConverter) dropMalformed() {
	if x.malformed == 0 {
		return
	}
	d := Drop{
		Reason:  sentry.ReasonMalformedStacks,
		Samples: clampInt(x.malformed),
		Err:     fmt.Errorf("%s: samples reference stacks, locations or functions outside the dictionary", x.where),
	}
	x.conv.drops = slices.Insert(x.conv.drops, x.malformedAt, d)
}

// collectEvents expands the samples of the group's profiles into events.
// A sample whose stack is not valid makes none: it is counted as malformed,
// before it can shape a chunk.
func (x *groupConverter) collectEvents() {
	x.samples = make([]sampleInfo, x.sampleCount())
	threadIndex := make(map[string]int32)
	events := 0
	for _, prof := range x.profs {
		for _, s := range prof.Samples().All() {
			events += s.TimestampsUnixNano().Len()
		}
	}
	x.events = slices.Grow(x.events, min(events, maxProfileEvents))

	b := eventBudget{left: maxProfileEvents, extra: &x.conv.extraEvents}
	base := 0
	for _, prof := range x.profs {
		x.collectProfileEvents(prof, base, threadIndex, &b)
		base += prof.Samples().Len()
	}
	x.malformed, x.malformedAt = b.malformed, len(x.conv.drops)
	if b.cut > 0 {
		// The chunks still go: only the events over the limits are lost.
		x.conv.drops = append(x.conv.drops, Drop{Reason: sentry.ReasonExceedSizeLimit, Samples: clampInt(b.cut),
			Partial: true, Err: errors.New(budgetError(x.where, b.cut))})
	}
}

// collectProfileEvents adds the events of one profile of the group, whose
// samples are numbered from base.
func (x *groupConverter) collectProfileEvents(prof pprofile.Profile, base int, threadIndex map[string]int32, b *eventBudget) {
	samples := prof.Samples()
	w := x.newEventWeigher(prof)
	var aggregated []int64 // events per sample without timestamps
	threadTotals := map[int32]int64{}
	for j, s := range samples.All() {
		i := base + j
		info := &x.samples[i]
		x.readSample(info, s, threadIndex)
		ok := x.conv.stackUsable(info.stack)
		if s.TimestampsUnixNano().Len() > 0 {
			x.timestampedEvents(s, int32(i), info, ok, &w, b)
			continue
		}
		if n := x.aggregatedEvents(s, info, ok, &w, b); n > 0 {
			if aggregated == nil {
				aggregated = make([]int64, samples.Len())
			}
			aggregated[j] = n
			threadTotals[info.thread] += n
		}
	}
	if aggregated != nil {
		x.spread(prof, base, aggregated, threadTotals, w.period)
	}
}

// eventWeigher turns a Sample's values into a number of Sentry sample
// events.
type eventWeigher struct {
	unitNanos float64 // of a time sample type; 0 for a count
	period    float64 // nanoseconds
	// carry, for an exact-time profile, is the time each (stack, thread)
	// has accumulated short of one period.
	carry map[[2]int32]float64
}

func (x *groupConverter) newEventWeigher(prof pprofile.Profile) eventWeigher {
	w := eventWeigher{
		unitNanos: timeUnitNanos(x.conv.Str(prof.SampleType().UnitStrindex())),
		period:    x.periodNanos(prof),
	}
	// An exact-time profile (a method trace: values are the time of each
	// slice, the period its clock's resolution) is resampled at Sentry's
	// rate: each (stack, thread) sends one event per sampling period of the
	// time it accumulates, the remainder carried to its next slice, so the
	// chunk shows every stack's time within one period.
	if w.unitNanos > 0 && w.period < minSampledPeriodNanos {
		w.period = 1e9 / x.conv.opts.DefaultSampleRateHz
		w.carry = map[[2]int32]float64{}
	}
	return w
}

// weight is the number of events value v of a sample stands for.
func (w *eventWeigher) weight(info *sampleInfo, v int64) int64 {
	if v <= 0 {
		return 0
	}
	if w.unitNanos == 0 {
		return v
	}
	if w.carry != nil {
		key := [2]int32{info.stack, info.thread}
		total := w.carry[key] + float64(v)*w.unitNanos
		n := math.Floor(total / w.period)
		w.carry[key] = total - n*w.period
		return int64(min(n, math.MaxInt64/2))
	}
	// Bounded before the conversion: a float beyond int64 converts to
	// anything. take cuts it to maxSampleEvents anyway.
	return max(1, int64(min(math.Round(float64(v)*w.unitNanos/w.period), math.MaxInt64/2)))
}

// timestampedEvents adds the events of sample i, which has timestamps.
// readSample reads what every event of a Sample shares: its stack (the
// empty one for a sample the SDK sent idle), thread, queue and state.
func (x *groupConverter) readSample(info *sampleInfo, s pprofile.Sample, threadIndex map[string]int32) {
	info.stack = s.StackIndex()
	if idleOfSample(s.AttributeIndices(), &x.conv.dictionaryView) { // thread.go
		info.stack = 0 // the SDK sent it idle: the empty (zero) stack
	}
	info.thread, info.queue, info.state = x.sampleAttrs(s, threadIndex)
}

func (x *groupConverter) timestampedEvents(s pprofile.Sample, i int32, info *sampleInfo, ok bool, w *eventWeigher, b *eventBudget) {
	ts, values := s.TimestampsUnixNano(), s.Values()
	perTS := values.Len() == ts.Len()
	// A time value beside a timestamp is the time that one observation
	// stands for (a Sentry sample's is the time to the next sample of its
	// thread, which the timestamps give back): one event. A count is that
	// many events; an exact-time profile's slices are resampled.
	oneEach := !perTS || w.timesOneEach()
	if ok && oneEach && int64(ts.Len()) <= b.left {
		// One event per timestamp, the shape of nearly every sample: what
		// the loop below does, without its cases.
		b.left -= int64(ts.Len())
		x.events = appendOneEach(x.events, ts, i, info.thread)
		return
	}
	for k := range ts.Len() {
		n := int64(1)
		if !oneEach {
			n = w.weight(info, values.At(k))
		}
		if !ok {
			b.addMalformed(n)
			continue
		}
		// What does not fit is counted, not sent.
		x.events = appendEvents(x.events, b.take(n), exportEvent{ts: ts.At(k), sample: i, thread: info.thread})
	}
}

// appendEvents appends n copies of ev.
func appendEvents(events []exportEvent, n int64, ev exportEvent) []exportEvent {
	for range n {
		events = append(events, ev)
	}
	return events
}

// aggregatedEvents is the number of events of a sample without timestamps
// that fit the budget (spread over the profile's time later).
func (x *groupConverter) aggregatedEvents(s pprofile.Sample, info *sampleInfo, ok bool, w *eventWeigher, b *eventBudget) int64 {
	n := w.observations(info, s.Values())
	if ok && n > b.left {
		// The events of this sample may not all fit, and its stack then
		// reaches no chunk to be checked on the way: check it now, since a
		// malformed sample is dropped as such.
		ok = x.conv.stackValid(info.stack)
	}
	if !ok {
		b.addMalformed(n)
		return 0
	}
	return b.take(n)
}

// appendOneEach appends one event per timestamp of sample i on thread.
func appendOneEach(events []exportEvent, ts pcommon.UInt64Slice, i, thread int32) []exportEvent {
	for k := range ts.Len() {
		events = append(events, exportEvent{ts: ts.At(k), sample: i, thread: thread})
	}
	return events
}

// observations is how many events an aggregated sample's values make;
// one for a sample with neither values nor timestamps (it was seen once).
func (w *eventWeigher) observations(info *sampleInfo, values pcommon.Int64Slice) int64 {
	if values.Len() == 0 {
		return 1
	}
	var n int64
	for k := range values.Len() {
		n = satAdd(n, w.weight(info, values.At(k)))
	}
	return n
}

// timesOneEach reports whether a time value beside each timestamp is one
// event: the values are times that are not resampled.
func (w *eventWeigher) timesOneEach() bool { return w.unitNanos > 0 && w.carry == nil }

// spreadStep is the time between the events spread over a profile of
// duration nanoseconds (0 when unknown) on a thread with total of them:
// the period, closer when they would not fit, at least 1 ns.
func spreadStep(period, duration, total float64) float64 {
	if duration > 0 && total*period > duration {
		return max(duration/total, 1)
	}
	return period
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func clampInt(v int64) int {
	return int(min(v, math.MaxInt32))
}

// periodNanos is the sampling interval in nanoseconds: the profile's period
// when its period type is a time, else 1/DefaultSampleRateHz.
func (x *groupConverter) periodNanos(prof pprofile.Profile) float64 {
	if u := timeUnitNanos(x.conv.Str(prof.PeriodType().UnitStrindex())); u > 0 && prof.Period() > 0 {
		return float64(prof.Period()) * u
	}
	return 1e9 / x.conv.opts.DefaultSampleRateHz
}

// minSampledPeriodNanos: no sampling profiler samples faster than 1 kHz; a
// shorter period is the resolution of an exact-time profile.
const minSampledPeriodNanos = 1e6

// spread gives the events of aggregated samples timestamps: each thread's
// events follow each other from the profile start at the period, sample by
// sample, or closer when that would run past the profile's duration.
func (x *groupConverter) spread(prof pprofile.Profile, base int, aggregated []int64, threadTotals map[int32]int64, period float64) {
	start := uint64(prof.Time())
	duration := float64(prof.DurationNano())
	next := make(map[int32]int64, len(threadTotals))
	for j, n := range aggregated {
		if n == 0 {
			continue
		}
		i := base + j
		thread := x.samples[i].thread
		step := spreadStep(period, duration, float64(threadTotals[thread]))
		for range n {
			k := next[thread]
			next[thread] = k + 1
			x.events = append(x.events, exportEvent{ts: start + uint64(float64(k)*step), sample: int32(i), thread: thread})
		}
	}
}

// stackUsable reports whether a stack may be sampled: in the table and not
// known to be invalid. Its locations are checked by the chunk builder as it
// walks them (chunkBuilder.stack), so that the stack table, its arrays
// spread over the heap, is walked once instead of twice (checking every
// stack up front costs FromProfiles about a quarter of its time on a large
// chunk; BENCHMARKS.md).
func (e *exportRun) stackUsable(stack int32) bool {
	return stack >= 0 && int(stack) < len(e.stackStates) && e.stackStates[stack] != stackInvalid
}

// stackValid reports whether a stack and everything it references are
// inside the dictionary, checking it now if no chunk has.
func (e *exportRun) stackValid(stack int32) bool {
	if !e.stackUsable(stack) {
		return false
	}
	if e.stackStates[stack] == stackUnchecked {
		e.stackStates[stack] = stackInvalid
		if st, _ := e.Stack(stack); e.locationsValid(st.LocationIndices()) {
			e.stackStates[stack] = stackValid
		}
	}
	return e.stackStates[stack] == stackValid
}

// locationsValid reports whether every location is inside the dictionary
// and reaches only functions inside it.
func (e *exportRun) locationsValid(locs pcommon.Int32Slice) bool {
	valid := e.validLocations()
	for i := range locs.Len() {
		if l := locs.At(i); uint32(l) >= uint32(len(valid)) || !valid[l] {
			return false
		}
	}
	return true
}

// validLocations tells, per dictionary location, whether the functions of
// its lines are inside the dictionary. The table is made once per call, on
// first use: stacks share most of their locations, and a stack check is
// then one lookup per location.
func (e *exportRun) validLocations() []bool {
	e.indexLocations()
	return e.locationValid
}

// dictionaryFrames is the number of Sentry frames the dictionary's locations
// make: one per line, one for a location without lines.
func (e *exportRun) dictionaryFrames() int {
	e.indexLocations()
	return e.frameCount
}

func (e *exportRun) indexLocations() {
	if e.locationValid != nil {
		return
	}
	functions := e.Len(pprofdict.Functions)
	locations := e.Dictionary().LocationTable()
	e.locationValid = make([]bool, locations.Len())
	for l, loc := range locations.All() {
		ok := true
		for _, line := range loc.Lines().All() {
			if f := line.FunctionIndex(); f < 0 || int(f) >= functions {
				ok = false
			}
		}
		e.locationValid[l] = ok
		e.frameCount += max(loc.Lines().Len(), 1)
	}
}
