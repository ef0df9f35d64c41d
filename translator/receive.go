package translator

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/idindex"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
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
	// value per Sample (Grafana Pyroscope) then show counts, not time.
	// Off: one Sample per Sentry sample, its value the period in
	// nanoseconds (sample type wall/nanoseconds).
	GroupSamples bool
}

// Item is one validated profile item with what the envelope gives it.
type Item struct {
	Profile     *sentry.Profile          // decoded, normalized and validated
	Transaction *sentry.TransactionEvent // the envelope's `transaction` item (V1 links), or nil
	// Spans are the spans of the chunk's profiler (V2 links), or nil.
	Spans   SpanLookup
	Payload []byte // the item's JSON, for original_payload
}

// SpanLookup tells which span was the innermost one active on a thread at a
// time (Unix nanoseconds). A V2 chunk carries no trace information: its
// spans come in other envelopes, and the receiver's span index answers for
// them (spanindex.Timeline).
type SpanLookup interface {
	SpanAt(threadID string, unixNano uint64) (pcommon.TraceID, pcommon.SpanID, bool)
}

// ProfilesBuilder accumulates items into one pprofile.Profiles whose profiles
// share one dictionary. It is not safe for concurrent use.
type ProfilesBuilder struct {
	opts    ReceiveOptions
	pd      pprofile.Profiles
	dict    *dictionaryBuilder
	samples int
	// linked counts the samples that got a Link.
	linked int
	// period is the sampling interval of the last item added.
	period int64
	// intervals is scratch space for measuring it.
	intervals      []int64
	periodPairs    []threadTime
	serviceScratch []int32
	// weights and weightsSorted are the per-sample wall times of a method
	// trace, in event order and in Sample order; weighted says the last
	// item added was one.
	weights, weightsSorted []int64
	weighted               bool
	// cpuProf is the CPU-time view of the item being added, when it has
	// one; cpuWeights its values, in event and in Sample order.
	cpuProf                      pprofile.Profile
	cpuWeights, cpuWeightsSorted []int64

	// Locations are found through a hint of a few frame fields, and
	// confirmed by comparing the whole key: hashing every field of every
	// frame costs more than the rare hint collision.
	locationHeads map[locationHint]int32
	locationKeys  []locationEntry // by Location index
	mappings      map[sentry.Image]int32
	frameKeys     frameAttrKeys
	// The most frames and stacks of an item since the maps were made: the
	// maps have grown to hold them.
	frameRoom, stackRoom int

	// Scratch space reused from one item to the next.
	frameLocations []int32
	stackIndices   []int32 // Sentry stack → dictionary stack, -1 when invalid
	stackSlots     []int32 // Sentry stack → first Sentry stack with the same dictionary stack
	slotOfStack    map[int32]int32
	stackScratch   []int32
	attrScratch    []int32
	threadAttrBuf  []int32
	threads        idindex.Index // thread ids of the item → dense numbers
	threadAttrsOf  []threadAttrs // thread number → its attributes
	sampleThreads  []int32       // Sentry sample → index in threads
	images         []imageRange
	events         []event
	groups         []sampleGroup
	groupHeads     []int32
	groupStarts    []int32
	groupFill      []int32
	timestamps     []uint64
	// The item's earliest and latest sample times, set by addSamples.
	firstTS, lastTS uint64
}

// locationKey is a frame as it lands in the Location table: its content, the
// frame type it gets from the profile's platform and the mapping its address
// falls in.
type locationKey struct {
	frame     sentry.Frame
	frameType string
	mapping   int32
}

// locationHint is what most frames differ in.
type locationHint struct {
	function, path string
	addr           uint64
	lineno         uint32
}

// locationEntry is one Location's key, chained to the previous Location with
// the same hint (-1 at the end).
type locationEntry struct {
	key  locationKey
	next int32
}

// frameAttrKeys caches the string indices of the location attribute keys
// and the attributes every frame of a platform shares, for the current
// dictionary; 0 is "not looked up yet" (index 0 is the empty string).
type frameAttrKeys struct {
	frameType, platform, filename, rawFunction, module, pkg int32
	inApp, symbolAddr, imageAddr, addrMode, status, data    int32
	// The frame type attribute of the last frame type seen, and the two
	// in_app attributes.
	lastFrameType     string
	lastFrameTypeAttr int32
	inAppAttr         [2]int32
}

func (b *ProfilesBuilder) frameKey(cached *int32, key string) int32 {
	if *cached == 0 {
		*cached = b.dict.str(key)
	}
	return *cached
}

type imageRange struct {
	start, end uint64
	mapping    int32
}

// event is one Sentry sample on its way to a pprofile Sample.
type event struct {
	group int32
	ts    uint64
}

// sampleKey groups the events that become one pprofile Sample.
type sampleKey struct {
	stack, thread, queue, state, link int32
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
	if b.dict == nil || b.frameRoom > maxKeptFrames || b.stackRoom > maxKeptStacks || cap(b.events) > maxKeptSamples {
		*b = ProfilesBuilder{
			dict:          newDictionaryBuilder(pd.Dictionary(), dictionarySizes{}),
			locationHeads: make(map[locationHint]int32),
			mappings:      make(map[sentry.Image]int32),
		}
	} else {
		b.dict.reset(pd.Dictionary())
		clear(b.locationHeads)
		clear(b.mappings)
	}
	// Index 0 is the zero Location, which no frame maps to.
	b.locationKeys = append(b.locationKeys[:0], locationEntry{next: -1})
	b.frameKeys = frameAttrKeys{}
	b.opts, b.pd, b.samples, b.linked = opts, pd, 0, 0
}

// Bounds of what Reset keeps: the maps and scratch space of items up to
// this size (the dictionary maps hold about two entries per frame).
const (
	maxKeptFrames  = 1 << 14
	maxKeptStacks  = 1 << 15
	maxKeptSamples = 1 << 17
)

// ToProfiles converts items into one pprofile.Profiles.
func ToProfiles(items []Item, opts ReceiveOptions) pprofile.Profiles {
	b := NewProfilesBuilder(opts)
	for _, it := range items {
		b.Add(it)
	}
	return b.Profiles()
}

// SampleCount is the number of Sentry sample events added so far.
func (b *ProfilesBuilder) SampleCount() int { return b.samples }

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
func (b *ProfilesBuilder) Add(item Item) int {
	p := item.Profile
	if p == nil {
		return 0
	}
	b.grow(p)

	rp := b.pd.ResourceProfiles().AppendEmpty()
	putResource(rp.Resource().Attributes(), p, b.opts)
	sp := rp.ScopeProfiles().AppendEmpty()
	sp.Scope().SetName(scopeName)
	prof := sp.Profiles().AppendEmpty()
	// A method trace that measured thread CPU time gets a second view of
	// the same samples: cpu/nanoseconds, beside wall time.
	var cpuProf pprofile.Profile
	if hasCPUDurations(p) {
		cpuProf = sp.Profiles().AppendEmpty()
	}
	b.cpuProf = cpuProf

	// samples[].thread_id, thread_metadata → the threads' attributes.
	b.resolveThreads(p)

	// profile.frames → Location table; profile.stacks → Stack table.
	b.indexImages(p)
	b.frameLocations = b.frameLocations[:0]
	for i := range p.Frames {
		b.frameLocations = append(b.frameLocations, b.location(&p.Frames[i], p.Platform))
	}
	b.stackIndices = b.stackIndices[:0]
	b.stackSlots = b.stackSlots[:0]
	if b.slotOfStack == nil {
		b.slotOfStack = make(map[int32]int32, p.Stacks.Len())
	}
	clear(b.slotOfStack)
	for i := range p.Stacks.Len() {
		stack := b.stack(p.Stacks.At(i))
		b.stackIndices = append(b.stackIndices, stack)
		// Sentry stacks that are the same dictionary stack (duplicates, or
		// frames that are duplicates) share one slot, so that their samples
		// merge into one pprofile Sample per thread.
		slot, ok := b.slotOfStack[stack]
		if !ok {
			slot = int32(i)
			b.slotOfStack[stack] = slot
		}
		b.stackSlots = append(b.stackSlots, slot)
	}

	start := profileStart(p)
	n := b.addSamples(prof, p, item, start)

	// timestamp (V1) or the first sample (V2) → Profile.time; the samples'
	// span → duration_nano, half-open so that the last sample is inside.
	prof.SetTime(pcommon.Timestamp(start))
	if n > 0 {
		first, last := b.firstTS, b.lastTS
		if !isV2(p) {
			first = min(first, start)
		}
		prof.SetTime(pcommon.Timestamp(first))
		prof.SetDurationNano(last - first + 1)
	}

	dict := b.dict
	// Wall time: each sample stands for one sampling period of its thread.
	if b.opts.GroupSamples && !b.weighted {
		prof.SampleType().SetTypeStrindex(dict.str(sampleTypeSamples))
		prof.SampleType().SetUnitStrindex(dict.str(sampleUnitCount))
	} else {
		prof.SampleType().SetTypeStrindex(dict.str(sampleTypeWall))
		prof.SampleType().SetUnitStrindex(dict.str(periodUnitNanos))
	}
	prof.PeriodType().SetTypeStrindex(dict.str(periodTypeWall))
	prof.PeriodType().SetUnitStrindex(dict.str(periodUnitNanos))
	prof.SetPeriod(b.period)

	// chunk_id (V2) or event_id (V1) → profile_id.
	if isV2(p) {
		prof.SetProfileID(pprofile.ProfileID(parseID16(p.ChunkID)))
	} else {
		prof.SetProfileID(pprofile.ProfileID(parseID16(p.EventID)))
	}

	b.putProfileAttributes(prof, p, start)
	if cpuProf != (pprofile.Profile{}) {
		// The same profile seen through its CPU times: same id, time range
		// and attributes (a backend or the exporter takes the two as views
		// of one profile).
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

	if b.opts.KeepOriginalPayload && len(item.Payload) > 0 {
		if isV2(p) {
			prof.SetOriginalPayloadFormat(OriginalPayloadFormatV2)
		} else {
			prof.SetOriginalPayloadFormat(OriginalPayloadFormatV1)
		}
		prof.OriginalPayload().FromRaw(item.Payload)
	}
	b.samples += n
	return n
}

// scopeName is the instrumentation scope of every produced profile.
const scopeName = "github.com/sentryprofile/otelcol-sentryprofile/translator"

func isV2(p *sentry.Profile) bool { return p.Version == sentry.VersionV2 }

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
		b.locationHeads = presized(b.locationHeads, frames)
		b.locationKeys = slices.Grow(b.locationKeys, frames)
		d.functions = presized(d.functions, frames)
		d.strings = presized(d.strings, 2*frames)
		// A frame's module, filename and in_app become attributes; most
		// are shared, a few per frame are new.
		d.attrs = presized(d.attrs, 2*frames)
	}
	if stacks > b.stackRoom {
		b.stackRoom = stacks
		d.stackHeads = presized(d.stackHeads, stacks)
	}
	tables := d.dict
	tables.LocationTable().EnsureCapacity(tables.LocationTable().Len() + frames)
	tables.FunctionTable().EnsureCapacity(tables.FunctionTable().Len() + frames)
	tables.StringTable().EnsureCapacity(tables.StringTable().Len() + 2*frames)
	tables.AttributeTable().EnsureCapacity(tables.AttributeTable().Len() + 2*frames)
	tables.StackTable().EnsureCapacity(tables.StackTable().Len() + stacks)
	d.stackNext = slices.Grow(d.stackNext, stacks)
	b.frameLocations = slices.Grow(b.frameLocations[:0], frames)
	b.stackIndices = slices.Grow(b.stackIndices[:0], stacks)
	b.events = slices.Grow(b.events[:0], len(p.Samples))
}

// presized returns m with room for extra more keys: a copy made at the
// right size while m is still small, m itself once it is in use (Go grows
// it from there at amortized cost).
func presized[K comparable, V any](m map[K]V, extra int) map[K]V {
	if len(m) > 64 || extra <= 64 {
		return m
	}
	n := make(map[K]V, len(m)+extra)
	maps.Copy(n, m)
	return n
}

// indexImages makes a Mapping of every debug_meta image and sorts their
// address ranges for frame lookups.
func (b *ProfilesBuilder) indexImages(p *sentry.Profile) {
	b.images = b.images[:0]
	for i := range p.DebugMeta.Images {
		img := &p.DebugMeta.Images[i]
		m := b.mapping(img)
		if img.ImageSize > 0 && img.ImageAddr+img.ImageSize > img.ImageAddr {
			b.images = append(b.images, imageRange{start: img.ImageAddr, end: img.ImageAddr + img.ImageSize, mapping: m})
		}
	}
	slices.SortFunc(b.images, func(x, y imageRange) int { return cmp.Compare(x.start, y.start) })
}

// imageOf returns the mapping whose address range holds addr, or 0.
func (b *ProfilesBuilder) imageOf(addr uint64) int32 {
	if addr == 0 {
		return 0
	}
	i, _ := slices.BinarySearchFunc(b.images, addr, func(r imageRange, a uint64) int {
		return cmp.Compare(r.start, a+1)
	})
	// images[i-1] is the last range starting at or below addr.
	if i > 0 && addr < b.images[i-1].end {
		return b.images[i-1].mapping
	}
	return 0
}

// mapping returns the Mapping of a debug_meta image.
func (b *ProfilesBuilder) mapping(img *sentry.Image) int32 {
	if i, ok := b.mappings[*img]; ok {
		return i
	}
	d := b.dict
	table := d.dict.MappingTable()
	i := int32(table.Len())
	m := table.AppendEmpty()
	// image_addr, image_size → memory_start, memory_limit.
	m.SetMemoryStart(img.ImageAddr)
	if img.ImageAddr+img.ImageSize >= img.ImageAddr {
		m.SetMemoryLimit(img.ImageAddr + img.ImageSize)
	}
	// code_file → filename (debug_file when there is no code file).
	if img.CodeFile != "" {
		m.SetFilenameStrindex(d.str(img.CodeFile))
	} else {
		m.SetFilenameStrindex(d.str(img.DebugFile))
	}
	attrs := b.attrScratch[:0]
	if img.Type != "" {
		attrs = append(attrs, d.attrStr(attrImageType, img.Type))
	}
	if img.CodeID != "" {
		// An ELF code_id is the GNU build id, which semconv names.
		if img.Type == "elf" {
			attrs = append(attrs, d.attrStr(string(semconv.ProcessExecutableBuildIDGNUKey), img.CodeID))
		} else {
			attrs = append(attrs, d.attrStr(attrImageCodeID, img.CodeID))
		}
	}
	if img.DebugID != "" {
		attrs = append(attrs, d.attrStr(attrImageDebugID, img.DebugID))
	}
	if img.DebugFile != "" && img.CodeFile != "" {
		attrs = append(attrs, d.attrStr(attrImageDebugFile, img.DebugFile))
	}
	if img.UUID != "" {
		attrs = append(attrs, d.attrStr(attrImageUUID, img.UUID))
	}
	if img.Arch != "" {
		attrs = append(attrs, d.attrStr(attrImageArch, img.Arch))
	}
	if img.ImageVMAddr != 0 {
		attrs = append(attrs, d.attrStr(attrImageImageVMAddr, hexAddr(img.ImageVMAddr)))
	}
	if len(attrs) > 0 {
		m.AttributeIndices().FromRaw(attrs)
	}
	b.attrScratch = attrs
	b.mappings[*img] = i
	return i
}

// location returns the Location of a frame, creating it and its Function on
// first sight. Identical frames (node sends one per call-tree node) share one.
func (b *ProfilesBuilder) location(f *sentry.Frame, profilePlatform string) int32 {
	platform := f.Platform
	if platform == "" {
		platform = profilePlatform
	}
	k := locationKey{frame: *f, frameType: frameTypeOf(platform), mapping: b.imageOf(f.InstructionAddr)}
	// function, symbol, abs_path or filename → Function; lineno, colno → Line.
	filename := f.Filename
	if f.AbsPath != "" {
		filename = f.AbsPath
	}
	hint := locationHint{function: f.Function, path: filename, addr: f.InstructionAddr, lineno: f.Lineno}
	head, ok := b.locationHeads[hint]
	if !ok {
		head = -1
	}
	for i := head; i >= 0; i = b.locationKeys[i].next {
		if b.locationKeys[i].key == k {
			return i
		}
	}
	d := b.dict
	table := d.dict.LocationTable()
	i := int32(table.Len())
	b.locationKeys = append(b.locationKeys, locationEntry{key: k, next: head})
	b.locationHeads[hint] = i
	loc := table.AppendEmpty()
	// instruction_addr → address; the image holding it → mapping_index.
	loc.SetAddress(f.InstructionAddr)
	loc.SetMappingIndex(k.mapping)

	if f.Function != "" || f.Symbol != "" || filename != "" || f.Lineno != 0 || f.Colno != 0 {
		// A frame with a place but no name is an anonymous function, as
		// Sentry's UI names it: a blank name would merge every anonymous
		// function into one node in a flame graph (their file, line and
		// column keep them distinct locations).
		name := f.Function
		if name == "" && f.Symbol == "" {
			name = anonymousFunction
		}
		line := loc.Lines().AppendEmpty()
		line.SetFunctionIndex(d.function(name, f.Symbol, filename, 0))
		line.SetLine(int64(f.Lineno))
		line.SetColumn(int64(f.Colno))
	}

	keys := &b.frameKeys
	str := func(cached *int32, key, value string) int32 {
		return d.scalarAttr(attrKey{key: b.frameKey(cached, key), kind: pcommon.ValueTypeStr, str: value})
	}
	attrs := b.attrScratch[:0]
	if k.frameType != "" {
		if k.frameType != keys.lastFrameType || keys.lastFrameTypeAttr == 0 {
			keys.lastFrameType = k.frameType
			keys.lastFrameTypeAttr = str(&keys.frameType, string(semconv.ProfileFrameTypeKey), k.frameType)
		}
		attrs = append(attrs, keys.lastFrameTypeAttr)
	}
	if f.Platform != "" {
		attrs = append(attrs, str(&keys.platform, attrFramePlatform, f.Platform))
	}
	if f.AbsPath != "" {
		attrs = append(attrs, str(&keys.filename, attrFrameFilename, f.Filename))
	}
	if f.RawFunction != "" {
		attrs = append(attrs, str(&keys.rawFunction, attrFrameRawFunction, f.RawFunction))
	}
	if f.Module != "" {
		attrs = append(attrs, str(&keys.module, attrFrameModule, f.Module))
	}
	if f.Package != "" {
		attrs = append(attrs, str(&keys.pkg, attrFramePackage, f.Package))
	}
	if f.InApp.Set() {
		v := 0
		if f.InApp.True() {
			v = 1
		}
		if keys.inAppAttr[v] == 0 {
			keys.inAppAttr[v] = d.scalarAttr(attrKey{key: b.frameKey(&keys.inApp, attrFrameInApp), kind: pcommon.ValueTypeBool, num: uint64(v)})
		}
		attrs = append(attrs, keys.inAppAttr[v])
	}
	if f.SymbolAddr != 0 {
		attrs = append(attrs, str(&keys.symbolAddr, attrFrameSymbolAddr, hexAddr(f.SymbolAddr)))
	}
	if f.ImageAddr != 0 {
		attrs = append(attrs, str(&keys.imageAddr, attrFrameImageAddr, hexAddr(f.ImageAddr)))
	}
	if f.AddrMode != "" {
		attrs = append(attrs, str(&keys.addrMode, attrFrameAddrMode, f.AddrMode))
	}
	if f.Status != "" {
		attrs = append(attrs, str(&keys.status, attrFrameStatus, f.Status))
	}
	if f.Data != "" {
		attrs = append(attrs, str(&keys.data, attrFrameData, f.Data))
	}
	if len(attrs) > 0 {
		loc.AttributeIndices().FromRaw(attrs)
	}
	b.attrScratch = attrs
	return i
}

// stack returns the Stack of a Sentry stack, or -1 when a frame index is out
// of range.
func (b *ProfilesBuilder) stack(frames []int64) int32 {
	locs := b.stackScratch[:0]
	for _, f := range frames {
		if f < 0 || f >= int64(len(b.frameLocations)) {
			return -1
		}
		locs = append(locs, b.frameLocations[f])
	}
	b.stackScratch = locs
	return b.dict.stack(locs)
}

// threadAttrs are the attribute indices every sample of one thread carries.
type threadAttrs struct {
	first, n int32 // range in ProfilesBuilder.threadAttrBuf
}

// largeItemSamples is the sample count above which an item's scratch space
// is released as soon as it is used rather than kept for the next item.
const largeItemSamples = 1 << 18

// sampleGroup is one future pprofile Sample: the events sharing a key.
type sampleGroup struct {
	key  sampleKey
	next int32
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

// addSamples groups profile.samples by (stack, thread, queue, state, link)
// into pprofile Samples with sorted timestamps, and returns the number of
// Sentry samples kept.
func (b *ProfilesBuilder) addSamples(prof pprofile.Profile, p *sentry.Profile, item Item, start uint64) int {
	d := b.dict
	lk := newLinker(d, p, item.Transaction, item.Spans, start)
	v2 := isV2(p)

	// A group is found through its (stack, thread) cell: a dense table when
	// it is not much larger than the samples, else a map. Groups of one
	// cell that differ in queue, state or link are chained through next.
	nThreads := uint64(b.threads.Len())
	cells := uint64(len(b.stackSlots)) * nThreads
	dense := cells <= 2*uint64(len(p.Samples))+1024
	var heads []int32
	var headMap map[uint64]int32
	if dense {
		heads = slices.Grow(b.groupHeads[:0], int(cells))[:cells]
		for i := range heads {
			heads[i] = -1
		}
		b.groupHeads = heads
	} else {
		headMap = make(map[uint64]int32, len(b.stackSlots))
	}
	groups := b.groups[:0]
	events := b.events[:0]
	// A method trace's samples carry their own wall time.
	weighted := hasDurations(p)
	b.weighted = weighted
	weights, cpuWeights := b.weights[:0], b.cpuWeights[:0]
	for i := range p.Samples {
		s := &p.Samples[i]
		if s.StackID < 0 || s.StackID >= int64(len(b.stackIndices)) {
			continue
		}
		stack := b.stackIndices[s.StackID]
		if stack < 0 {
			continue
		}
		// V2 timestamp, or V1 timestamp + elapsed_since_start_ns.
		var ts uint64
		if v2 {
			if s.Timestamp < 0 {
				continue
			}
			ts = uint64(s.Timestamp)
		} else {
			ts = start + s.ElapsedSinceStartNS
			if ts < start {
				continue
			}
		}
		k := sampleKey{stack: stack, thread: b.sampleThreads[i], link: lk.linkFor(s.ThreadID, ts)}
		if k.link != 0 {
			b.linked++
		}
		// queue_address and state → sample attributes.
		if s.QueueAddress != "" {
			k.queue = d.attrStr(attrQueueAddress, s.QueueAddress)
		}
		if s.State != "" {
			k.state = d.attrStr(attrThreadState, s.State)
		}
		cell := uint64(b.stackSlots[s.StackID])*nThreads + uint64(k.thread)
		head := int32(-1)
		if dense {
			head = heads[cell]
		} else if h, ok := headMap[cell]; ok {
			head = h
		}
		g := head
		for g >= 0 && groups[g].key != k {
			g = groups[g].next
		}
		if g < 0 {
			g = int32(len(groups))
			groups = append(groups, sampleGroup{key: k, next: head})
			if dense {
				heads[cell] = g
			} else {
				headMap[cell] = g
			}
		}
		events = append(events, event{group: g, ts: ts})
		if weighted {
			weights = append(weights, int64(p.SampleWallNS[i]))
			var cpu int64
			if p.SampleCPUNS != nil {
				cpu = int64(p.SampleCPUNS[i])
			}
			cpuWeights = append(cpuWeights, cpu)
		}
	}
	b.groups, b.events = groups, events
	if len(events) == 0 {
		return 0
	}
	b.firstTS, b.lastTS = events[0].ts, events[0].ts
	for _, e := range events {
		b.firstTS, b.lastTS = min(b.firstTS, e.ts), max(b.lastTS, e.ts)
	}

	// Counting sort of the events by group: one backing array for every
	// Sample's timestamps instead of one growing slice per Sample.
	starts := slices.Grow(b.groupStarts[:0], len(groups)+1)[:len(groups)+1]
	clear(starts)
	for _, e := range events {
		starts[e.group+1]++
	}
	for g := 1; g < len(starts); g++ {
		starts[g] += starts[g-1]
	}
	ts := slices.Grow(b.timestamps[:0], len(events))[:len(events)]
	fill := slices.Grow(b.groupFill[:0], len(groups))[:len(groups)]
	copy(fill, starts[:len(groups)])
	var values, cpuValues []int64
	if weighted {
		values = slices.Grow(b.weightsSorted[:0], len(events))[:len(events)]
		cpuValues = slices.Grow(b.cpuWeightsSorted[:0], len(events))[:len(events)]
	}
	for i, e := range events {
		ts[fill[e.group]] = e.ts
		if weighted {
			values[fill[e.group]] = weights[i]
			cpuValues[fill[e.group]] = cpuWeights[i]
		}
		fill[e.group]++
	}
	b.groupStarts, b.timestamps, b.groupFill = starts, ts, fill
	b.weights, b.weightsSorted = weights, values
	b.cpuWeights, b.cpuWeightsSorted = cpuWeights, cpuValues
	if len(events) > largeItemSamples {
		// The pdata Samples built next are the peak of a large item's
		// translation: let the scratch space that is no longer needed go
		// rather than keep it for the next item.
		b.events, b.sampleThreads, b.groupHeads = nil, nil, nil
	}

	b.period = b.measurePeriod(groups, events)
	if weighted {
		b.period = methodTracePeriodNanos
	}
	service := b.serviceAttrs(p)

	// One Sample per Sentry sample, its value the period in nanoseconds:
	// OTLP asks that timestamps and values be as many, and backends that
	// read one value per Sample (Grafana Pyroscope) then show wall time
	// rather than a count. The group's attributes are built once.
	queueLabels := queueLabelIndex(d, p)
	samples := prof.Samples()
	if b.opts.GroupSamples {
		samples.EnsureCapacity(samples.Len() + len(groups))
	} else {
		samples.EnsureCapacity(samples.Len() + len(events))
	}
	attrs := b.attrScratch[:0]
	for g := range groups {
		k := &groups[g].key
		t := b.threadAttrsOf[k.thread]
		attrs = append(attrs[:0], b.threadAttrBuf[t.first:t.first+t.n]...)
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
		group := ts[starts[g]:starts[g+1]]
		var groupValues, groupCPU []int64
		if weighted {
			groupValues, groupCPU = values[starts[g]:starts[g+1]], cpuValues[starts[g]:starts[g+1]]
			sortByTime(group, groupValues, groupCPU)
		} else if !slices.IsSorted(group) {
			slices.Sort(group)
		}
		if b.opts.GroupSamples {
			s := appendSample(samples, k, attrs)
			s.TimestampsUnixNano().FromRaw(group)
			if weighted {
				s.Values().FromRaw(groupValues)
			}
			if b.cpuProf != (pprofile.Profile{}) {
				c := appendSample(b.cpuProf.Samples(), k, attrs)
				c.TimestampsUnixNano().FromRaw(group)
				c.Values().FromRaw(groupCPU)
			}
			continue
		}
		for i, at := range group {
			s := appendSample(samples, k, attrs)
			s.TimestampsUnixNano().Append(at)
			if weighted {
				s.Values().Append(groupValues[i])
			} else {
				s.Values().Append(b.period)
			}
			if b.cpuProf != (pprofile.Profile{}) && groupCPU[i] > 0 {
				c := appendSample(b.cpuProf.Samples(), k, attrs)
				c.TimestampsUnixNano().Append(at)
				c.Values().Append(groupCPU[i])
			}
		}
	}
	b.attrScratch = attrs
	return len(events)
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
	s.SetStackIndex(k.stack)
	s.SetLinkIndex(k.link)
	if len(attrs) > 0 {
		s.AttributeIndices().FromRaw(attrs)
	}
	return s
}

// maxPeriodIntervals bounds the intervals a period is measured from.
const maxPeriodIntervals = 4096

// measurePeriod is the median interval between consecutive samples of one
// thread: the SDK's real sampling period (Sentry's spec says 101 Hz; SDKs
// differ, and a busy process samples late), so that samples × period is
// the wall time the SDK observed. Without two samples on a thread, or when
// the median is no plausible sampling interval, it is the spec's 1/101 s.
func (b *ProfilesBuilder) measurePeriod(groups []sampleGroup, events []event) int64 {
	// The first samples suffice; sorted by thread and time, as SDKs need
	// not send them in order.
	pairs := b.periodPairs[:0]
	for _, e := range events[:min(len(events), maxPeriodIntervals)] {
		pairs = append(pairs, threadTime{thread: groups[e.group].key.thread, ts: e.ts})
	}
	slices.SortFunc(pairs, func(a, b threadTime) int {
		if a.thread != b.thread {
			return cmp.Compare(a.thread, b.thread)
		}
		return cmp.Compare(a.ts, b.ts)
	})
	intervals := b.intervals[:0]
	for i := 1; i < len(pairs); i++ {
		if pairs[i].thread == pairs[i-1].thread && pairs[i].ts > pairs[i-1].ts {
			intervals = append(intervals, int64(pairs[i].ts-pairs[i-1].ts))
		}
	}
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

// No Sentry SDK samples faster than 10 kHz or slower than 1 Hz.
const (
	minPeriodNanos = 100_000
	maxPeriodNanos = 1_000_000_000
)

type threadTime struct {
	thread int32
	ts     uint64
}

// serviceAttrs are service.name, service.version and
// deployment.environment.name as sample attributes too: consumers built on
// the OTLP profiles protocol before resource attributes became string-table
// references (Grafana Pyroscope among them) read the resource's plain keys
// only, and pdata writes references; a sample attribute they read.
func (b *ProfilesBuilder) serviceAttrs(p *sentry.Profile) []int32 {
	d := b.dict
	out := b.serviceScratch[:0]
	out = append(out, d.attrStr(string(semconv.ServiceNameKey), serviceName(p, b.opts)))
	if p.Release != "" {
		out = append(out, d.attrStr(string(semconv.ServiceVersionKey), p.Release))
	}
	if p.Environment != "" {
		out = append(out, d.attrStr(string(semconv.DeploymentEnvironmentNameKey), p.Environment))
	}
	b.serviceScratch = out
	return out
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
