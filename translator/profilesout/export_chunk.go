package profilesout

import (
	"cmp"
	"fmt"
	"math"
	"path"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryid"
)

// profileAttrs are the structured profile attributes the receiver wrote;
// present only for profiles that came from Sentry.
type profileAttrs struct {
	threadMetadata pcommon.Map
	hasThreads     bool
	queueMetadata  pcommon.Map
	hasQueues      bool
	images         pcommon.Slice
	hasImages      bool
	measurements   pcommon.Map
	hasMeasures    bool
}

func (x *groupConverter) readProfileAttrs() profileAttrs {
	var a profileAttrs
	if len(x.profs) != 1 {
		// Only profiles from other sources merge, and they carry none.
		return a
	}
	x.conv.attrs.Each(x.profs[0].AttributeIndices(), a.put)
	return a
}

// put reads one profile attribute: sentry.thread_metadata,
// sentry.queue_metadata, sentry.measurements (maps) and
// sentry.debug_meta.images (an array); others, and these of another type,
// are left alone.
func (a *profileAttrs) put(key string, v pcommon.Value) {
	switch v.Type() {
	case pcommon.ValueTypeMap:
		a.putMap(key, v.Map())
	case pcommon.ValueTypeSlice:
		if key == sentryattr.DebugImages {
			a.images, a.hasImages = v.Slice(), true
		}
	}
}

func (a *profileAttrs) putMap(key string, m pcommon.Map) {
	switch key {
	case sentryattr.ThreadMetadata:
		a.threadMetadata, a.hasThreads = m, true
	case sentryattr.QueueMetadata:
		a.queueMetadata, a.hasQueues = m, true
	case sentryattr.Measurements:
		a.measurements, a.hasMeasures = m, true
	}
}

// chunkBuilder fills the frame and stack tables of one chunk.
type chunkBuilder struct {
	conv     *exportRun
	group    *groupConverter
	p        *sentry.Profile
	platform string
	// The Sentry stack of each dictionary stack and the Sentry frames of
	// each dictionary location live in the exportRun's chunkTables.
	mappings []int32 // dictionary mappings the frames use, in first-use order
	seenMap  map[int32]bool
	// frameMappings is the dictionary mapping of each frame (0 for none),
	// for placing frames in their images once the images are known.
	frameMappings []int32
	// bytes bounds the JSON of what is built so far (export_limits.go);
	// building stops once it passes limit.
	bytes, limit int64
}

// over reports that the chunk passed its byte limit.
func (c *chunkBuilder) over() bool { return c.bytes > c.limit }

// chunkTables map dictionary stacks and locations to the Sentry stacks and
// frames of the chunk being built: flat arrays indexed by dictionary index,
// allocated once per FromProfiles call and reused by every chunk. An entry
// belongs to the current chunk when its generation is gen, so starting a
// chunk costs one increment instead of clearing the arrays.
type chunkTables struct {
	gen       uint32
	stacks    []stackSlot
	locations []locationSlot
}

// stackSlot is the Sentry stack of a dictionary stack in the current chunk.
type stackSlot struct {
	gen   uint32
	id    int32 // Sentry stack index; -1 until built
	empty bool  // no frames: Relay calls the samples of such a stack idle
}

// locationSlot is the run of Sentry frames of a dictionary location in the
// current chunk: one per line.
type locationSlot struct {
	first int64
	n     uint32
	gen   uint32
}

// next starts a chunk.
func (t *chunkTables) next(d pprofile.ProfilesDictionary) {
	if t.stacks == nil {
		t.stacks = make([]stackSlot, d.StackTable().Len())
		t.locations = make([]locationSlot, d.LocationTable().Len())
	}
	t.gen++
}

// chunk builds the V2 chunk of one window of time-sorted events.
// next is the time the following window starts at, 0 for the last window.
// valid reports that the chunk passes sentry.Validate by construction;
// when false, it may or may not. Events whose stack turns out to reach
// outside the dictionary are left out and counted as malformed. size
// bounds the chunk's JSON; it is -1, and the chunk unfinished, when that
// would pass the chunk limit or what is left of the request's.
func (x *groupConverter) chunk(events []exportEvent, w int, next uint64, platform string) (p *sentry.Profile, valid bool, size int64) {
	p = &sentry.Profile{
		Version:     sentry.VersionV2,                                                 // "version": always "2"
		ChunkID:     chunkIDFor(x.profs, x.meta.profilerID, x.where, w, events[0].ts), // resource.go
		ProfilerID:  x.meta.profilerID,
		Platform:    platform,
		Release:     x.meta.release,
		Environment: x.meta.environment,
		Dist:        x.meta.dist,
		ClientSDK:   sentry.ClientSDK{Name: x.conv.opts.SDKName, Version: x.conv.opts.SDKVersion},
	}
	x.conv.tables.next(x.conv.Dictionary())
	x.conv.indexLocations()
	c := &chunkBuilder{
		conv:     x.conv,
		group:    x,
		p:        p,
		platform: platform,
		seenMap:  make(map[int32]bool),
		limit:    min(x.conv.opts.MaxChunkBytes, x.conv.bytesLeft),
	}
	c.reserve(events, w == 0 && next == 0)

	windowStart := events[0].ts
	usedThreads := make([]bool, len(x.threads))
	// Samples with a non-empty stack per thread: Relay drops the threads
	// with fewer than two.
	active := make([]int, len(x.threads))
	events = x.chunkSamples(c, p, events, usedThreads, active)
	if c.over() {
		return nil, false, -1
	}
	if len(events) == 0 {
		return p, false, 0 // empty: see groupConverter.convert
	}
	x.dropLonelyThreads(p, events, usedThreads, active, w)

	p.ThreadMetadata = threadMetadataOf(&x.attrs, x.threads, usedThreads) // thread.go
	if x.attrs.hasQueues {
		p.QueueMetadata = queueMetadataFromAttr(x.attrs.queueMetadata) // thread.go
	}
	p.DebugMeta.Images = x.chunkImages(c, p.Frames) // image.go
	if x.attrs.hasMeasures {
		from, to := windowRange(w, windowStart, next)
		p.Measurements = measurementsFromAttr(x.attrs.measurements, from, to) // measurements.go
	}
	// Lonely threads' samples were counted and are gone: a bound still.
	c.bytes += chunkMetaBound(p)
	if c.over() {
		return nil, false, -1
	}
	return p, chunkValid(p, events, active), c.bytes
}

// chunkSamples writes the samples of a window's events into p, building
// their stacks, and returns the events kept (those whose stack reaches
// outside the dictionary are left out and counted as malformed). It marks
// the threads used and counts per thread the samples with a non-empty
// stack (active). It stops as soon as the chunk passes its byte limit
// (c.over).
func (x *groupConverter) chunkSamples(c *chunkBuilder, p *sentry.Profile, events []exportEvent, usedThreads []bool, active []int) []exportEvent {
	// Sample.stack_index → "stack_id" (the stack built in this chunk),
	// the thread (thread.go) → "thread_id", each timestamp →
	// "timestamp", sentry.queue.address → "queue_address",
	// sentry.thread.state → "state".
	p.Samples = make([]sentry.Sample, len(events))
	stacks := x.conv.tables.stacks
	idBytes := threadIDBytes(x.threads)
	var kept eventFilter
	for i, ev := range events {
		info := &x.samples[ev.sample]
		slot := &stacks[info.stack] // reserved: in this chunk, id -1 until built
		if slot.id < 0 {
			if !c.stack(info.stack) {
				kept.drop(events, i)
				continue
			}
			if c.over() {
				return nil
			}
		}
		if c.bytes += sampleBound(idBytes[ev.thread], info.queue, info.state); c.over() {
			return nil
		}
		kept.keep(ev)
		putSample(&p.Samples[i-kept.dropped], slot.id, x.threads[ev.thread].id, ev.ts, info)
		usedThreads[ev.thread] = true
		if !slot.empty {
			active[ev.thread]++
		}
	}
	if kept.filtered {
		p.Samples, events = p.Samples[:len(kept.events)], kept.events
		x.malformed += int64(kept.dropped)
	}
	return events
}

// eventFilter holds, once an event is left out, the events kept: the
// events of the chunk's samples.
type eventFilter struct {
	events   []exportEvent
	filtered bool
	dropped  int
}

// drop leaves out event i of events.
func (f *eventFilter) drop(events []exportEvent, i int) {
	if !f.filtered {
		f.filtered, f.events = true, slices.Clone(events[:i])
	}
	f.dropped++
}

// keep keeps ev.
func (f *eventFilter) keep(ev exportEvent) {
	if f.filtered {
		f.events = append(f.events, ev)
	}
}

// dropLonelyThreads drops the samples of the threads with fewer than two
// samples with a non-empty stack, as Relay does, and counts them, so that
// what is sent is what Sentry keeps; when no thread is left, the chunk is
// left whole for Validate to refuse.
func (x *groupConverter) dropLonelyThreads(p *sentry.Profile, events []exportEvent, usedThreads []bool, active []int, w int) {
	if !slices.ContainsFunc(active, func(n int) bool { return n >= 2 }) || !slices.ContainsFunc(active, func(n int) bool { return n < 2 }) {
		return
	}
	lonely := keepThreadsWithTwo(p, events, usedThreads, active)
	if lonely > 0 {
		x.conv.drop(sentry.ReasonNotEnoughSamples, lonely,
			fmt.Errorf("%s chunk %d: %d samples of threads with fewer than two samples", x.where, w, lonely))
	}
}

// chunkImages is "debug_meta"."images" of a chunk: as received (profile
// attribute sentry.debug_meta.images), else from the mappings its frames
// use, placed so that each frame resolves to one image.
func (x *groupConverter) chunkImages(c *chunkBuilder, frames []sentry.Frame) []sentry.Image {
	if x.attrs.hasImages {
		return imagesFromAttr(x.attrs.images)
	}
	images, imageOf := imagesFromMappings(&x.conv.dictionaryView, c.mappings)
	return placeImages(frames, c.frameMappings, images, imageOf)
}

// windowRange is the time range of window w, which starts at start (next
// is when the next window starts, 0 for none): a profile cut into several
// chunks sends each measurement value once, the window's, from its start
// to the next window's.
func windowRange(w int, start, next uint64) (from, to int64) {
	from, to = math.MinInt64, math.MaxInt64
	if w > 0 {
		from = int64(start)
	}
	if next > 0 {
		to = int64(next) - 1
	}
	return from, to
}

// putSample writes a sample field by field into the zeroed sample: a
// whole-struct store copies through the write barrier while the GC runs,
// and most samples have no queue or state.
func putSample(smp *sentry.Sample, stack int32, thread string, ts uint64, info *sampleInfo) {
	smp.StackID = int64(stack)
	smp.ThreadID = thread
	smp.Timestamp = int64(ts)
	if info.queue != "" {
		smp.QueueAddress = info.queue
	}
	if info.state != "" {
		smp.State = info.state
	}
}

// keepThreadsWithTwo keeps the samples of threads with two samples or more
// with a non-empty stack, marks the others' threads unused, and returns
// how many samples it left out.
func keepThreadsWithTwo(p *sentry.Profile, events []exportEvent, usedThreads []bool, active []int) int {
	lonely := 0
	kept := p.Samples[:0]
	for i, ev := range events {
		if active[ev.thread] < 2 {
			usedThreads[ev.thread] = false
			lonely++
			continue
		}
		kept = append(kept, p.Samples[i])
	}
	p.Samples = kept
	return lonely
}

// chunkValid reports whether a chunk built from time-sorted events passes
// sentry.Validate, checking only the rules the builder does not meet by
// construction. Indices are in range by construction: every stack_id is a
// stack the builder added and every frame index a frame it added.
func chunkValid(p *sentry.Profile, events []exportEvent, active []int) bool {
	// Some thread has two samples with a non-empty stack.
	return chunkMetaValid(p) && chunkTimesValid(events) && slices.ContainsFunc(active, func(n int) bool { return n >= 2 })
}

// chunkMetaValid: the ids are ours (32 hex digits), the rest has defaults,
// but an option or attribute may still have left something empty.
func chunkMetaValid(p *sentry.Profile) bool {
	return sentryid.IsCanonical(p.ProfilerID) && sentryid.IsCanonical(p.ChunkID) &&
		p.Platform != "" && p.ClientSDK.Name != "" && p.ClientSDK.Version != ""
}

// chunkTimesValid: timestamps are positive (as int64), and the samples
// Relay keeps span at most the chunk limit: the span of all of them
// (events sorted by time) bounds theirs.
func chunkTimesValid(events []exportEvent) bool {
	first, last := events[0].ts, events[len(events)-1].ts
	return first != 0 && last <= math.MaxInt64 && last-first <= uint64(sentry.DefaultLimits().MaxDurationV2)
}

// reserve marks the stacks the events use in the chunk tables and sizes the
// chunk's stack and frame storage for them, instead of growing it through
// every power of two. For the only window of a profile the samples tell
// which stacks it uses, without a pass over every event.
func (c *chunkBuilder) reserve(events []exportEvent, only bool) {
	t := &c.conv.tables
	var r stackReservation
	if only {
		// Every sample with events has a stack in the table.
		for i := range c.group.samples {
			if st := c.group.samples[i].stack; st >= 0 && int(st) < len(t.stacks) {
				r.use(c, st)
			}
		}
	} else {
		for _, ev := range events {
			r.use(c, c.group.samples[ev.sample].stack)
		}
	}
	stacks, locations := r.stacks, r.locations
	c.p.Stacks.Offsets = make([]int, 0, stacks)
	c.p.Stacks.FrameIndices = make([]int64, 0, locations)
	// A location makes a frame per line (at least one): the dictionary's
	// count of those bounds the chunk's frames, and since most locations
	// have one line, so does the number of locations the stacks visit.
	c.p.Frames = make([]sentry.Frame, 0, min(c.conv.dictionaryFrames(), locations))
}

// stackReservation counts the stacks a chunk uses and their locations.
type stackReservation struct{ stacks, locations int }

// use marks dictionary stack st used in c's chunk, counted once.
func (r *stackReservation) use(c *chunkBuilder, st int32) {
	t := &c.conv.tables
	if slot := &t.stacks[st]; slot.gen != t.gen {
		stack, _ := c.conv.Stack(st) // in the table: t.stacks has its slot
		n := stack.LocationIndices().Len()
		*slot = stackSlot{gen: t.gen, id: -1, empty: n == 0}
		r.stacks++
		r.locations += n
	}
}

// appendFrameRange appends the chunk's frames first, first+1, … of one
// location (n of them).
func appendFrameRange(frames []int64, first int64, n uint32) []int64 {
	if n == 1 {
		return append(frames, first)
	}
	for f := first; f < first+int64(n); f++ {
		frames = append(frames, f)
	}
	return frames
}

// stack: Stack.location_indices → "stacks"[stack_id], leaf first like both
// formats, each location expanded into one frame per line (inlined
// functions first, as OTLP orders them); it records the stack in the chunk
// tables. The locations are checked on the way (see stackUsable): a stack
// that reaches outside the dictionary is not added, and false says so.
func (c *chunkBuilder) stack(stack int32) bool {
	if c.conv.stackStates[stack] == stackInvalid {
		return false
	}
	t := &c.conv.tables
	valid := c.conv.validLocations()
	st := &c.p.Stacks
	frames := st.FrameIndices
	dictStack, _ := c.conv.Stack(stack) // in the table: stackUsable
	locs := dictStack.LocationIndices()
	for i := range locs.Len() {
		l := locs.At(i)
		if uint32(l) >= uint32(len(valid)) || !valid[l] {
			// The frames of the valid locations before it stay: other
			// stacks may use them.
			c.conv.stackStates[stack] = stackInvalid
			return false
		}
		loc := &t.locations[l]
		if loc.gen != t.gen {
			c.frames(l)
		}
		frames = appendFrameRange(frames, loc.first, loc.n)
	}
	t.stacks[stack].id = int32(len(st.Offsets))
	c.bytes += int64(stackFrameBytes*(len(frames)-len(st.FrameIndices)) + 3)
	st.Offsets = append(st.Offsets, len(st.FrameIndices))
	st.FrameIndices = frames
	c.conv.stackStates[stack] = stackValid
	return true
}

// frames adds the Sentry frames of a location and records them in the chunk
// tables.
func (c *chunkBuilder) frames(l int32) {
	t := &c.conv.tables
	loc, _ := c.conv.Location(l)                                               // valid: chunkBuilder.stack checked it
	base, filename := frameOfLocation(loc, &c.conv.dictionaryView, c.platform) // frame.go
	m := c.frameMapping(loc, &base)

	first := int64(len(c.p.Frames))
	lines := loc.Lines()
	for i := range max(lines.Len(), 1) {
		f := base
		if i < lines.Len() {
			line := lines.At(i)
			fn, _ := c.conv.Function(line.FunctionIndex()) // valid: validLocations
			putFrameLine(&f, c.conv.Str(fn.NameStrindex()), c.conv.Str(fn.SystemNameStrindex()), c.conv.Str(fn.FilenameStrindex()),
				line.Line(), line.Column(), filename) // frame.go
		}
		// A frame with nothing at all in it (a location with neither lines
		// nor address) would be an empty object Sentry cannot show.
		if f == (sentry.Frame{}) {
			f.Function = unknownFunction
		}
		limitFrame(&f) // export_limits.go
		c.bytes += frameBound(&f)
		c.p.Frames = append(c.p.Frames, f)
		c.frameMappings = append(c.frameMappings, m)
	}
	t.locations[l] = locationSlot{first: first, n: uint32(int64(len(c.p.Frames)) - first), gen: t.gen}
}

// frameMapping is the dictionary mapping of a Location (0 for none),
// recorded for the chunk's images; without sentry.images, its file names
// the frame's binary.
func (c *chunkBuilder) frameMapping(loc pprofile.Location, base *sentry.Frame) int32 {
	m := loc.MappingIndex()
	mapping, ok := c.conv.Mapping(m)
	if m <= 0 || !ok {
		return 0
	}
	if !c.seenMap[m] {
		c.seenMap[m] = true
		c.mappings = append(c.mappings, m)
	}
	if !c.group.attrs.hasImages {
		putBinary(base, c.conv.Str(mapping.FilenameStrindex()), loc.Lines().Len() == 0)
	}
	return m
}

// putBinary: the binary a frame is in (its mapping's file) → Sentry's
// `package` of a native frame. A frame with an address only also gets it
// as its `module`, which Relay keeps in profiles (it drops `package`), so
// that the flame graph names the binary beside the address.
func putBinary(f *sentry.Frame, file string, addressOnly bool) {
	if file == "" {
		return
	}
	f.Package = cmp.Or(f.Package, file)
	if addressOnly && f.Module == "" {
		f.Module = path.Base(file)
	}
}
