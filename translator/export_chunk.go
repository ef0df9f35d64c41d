package translator

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
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

func (x *profileExport) readProfileAttrs() profileAttrs {
	var a profileAttrs
	if len(x.profs) != 1 {
		// Only profiles from other sources merge, and they carry none.
		return a
	}
	x.eachAttr(x.profs[0].AttributeIndices(), func(key string, v pcommon.Value) {
		switch {
		case key == attrThreadMetadata && v.Type() == pcommon.ValueTypeMap:
			a.threadMetadata, a.hasThreads = v.Map(), true
		case key == attrQueueMetadata && v.Type() == pcommon.ValueTypeMap:
			a.queueMetadata, a.hasQueues = v.Map(), true
		case key == attrDebugImages && v.Type() == pcommon.ValueTypeSlice:
			a.images, a.hasImages = v.Slice(), true
		case key == attrMeasurements && v.Type() == pcommon.ValueTypeMap:
			a.measurements, a.hasMeasures = v.Map(), true
		}
	})
	return a
}

// chunkBuilder fills the frame and stack tables of one chunk.
type chunkBuilder struct {
	*profileExport
	p        *sentry.Profile
	platform string
	// The Sentry stack of each dictionary stack and the Sentry frames of
	// each dictionary location live in the exporter's chunkTables.
	mappings []int32 // dictionary mappings the frames use, in first-use order
	seenMap  map[int32]bool
	// frameMappings is the dictionary mapping of each frame (0 for none),
	// for placing frames in their images once the images are known.
	frameMappings []int32
}

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
// when false, it may or may not. The chunk is nil when an event's stack
// turned out to reference a location or function outside the dictionary.
func (x *profileExport) chunk(events []exportEvent, w int, next uint64, platform string) (p *sentry.Profile, valid bool) {
	p = &sentry.Profile{
		Version:     sentry.VersionV2,
		ChunkID:     x.chunkIDFor(w, events[0].ts),
		ProfilerID:  x.meta.profilerID,
		Platform:    platform,
		Release:     x.meta.release,
		Environment: x.meta.environment,
		Dist:        x.meta.dist,
		ClientSDK:   sentry.ClientSDK{Name: x.opts.SDKName, Version: x.opts.SDKVersion},
	}
	x.tables.next(x.dict)
	x.indexLocations()
	c := &chunkBuilder{
		profileExport: x,
		p:             p,
		platform:      platform,
		seenMap:       make(map[int32]bool),
	}
	c.reserve(events, w == 0 && next == 0)

	// Samples: timestamp, thread, stack.
	p.Samples = make([]sentry.Sample, len(events))
	usedThreads := make([]bool, len(x.threads))
	// Samples with a non-empty stack per thread: Relay drops the threads
	// with fewer than two.
	active := make([]int, len(x.threads))
	stacks := x.tables.stacks
	for i, ev := range events {
		info := &x.samples[ev.sample]
		slot := &stacks[info.stack] // reserved: in this chunk, id -1 until built
		if slot.id < 0 && !c.stack(info.stack) {
			return nil, false
		}
		// Field by field into the zeroed sample: a whole-struct store
		// copies through the write barrier while the GC runs, and most
		// samples have no queue or state.
		smp := &p.Samples[i]
		smp.StackID = int64(slot.id)
		smp.ThreadID = x.threads[ev.thread].id
		smp.Timestamp = int64(ev.ts)
		if info.queue != "" {
			smp.QueueAddress = info.queue
		}
		if info.state != "" {
			smp.State = info.state
		}
		usedThreads[ev.thread] = true
		if !slot.empty {
			active[ev.thread]++
		}
	}

	// Relay drops the threads with fewer than two samples with a non-empty
	// stack. Their samples are dropped here and counted, so that what is
	// sent is what Sentry keeps; when no thread is left, the chunk is left
	// whole for Validate to refuse.
	if slices.ContainsFunc(active, func(n int) bool { return n >= 2 }) && slices.ContainsFunc(active, func(n int) bool { return n < 2 }) {
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
		if lonely > 0 {
			x.drop(sentry.ReasonNotEnoughSamples, lonely,
				fmt.Errorf("%s chunk %d: %d samples of threads with fewer than two samples", x.where, w, lonely))
		}
	}

	// thread_metadata: as received, else from the samples' thread attributes.
	if x.attrs.hasThreads {
		for id, v := range x.attrs.threadMetadata.All() {
			tm := sentry.ThreadMetadata{ThreadID: id}
			if v.Type() == pcommon.ValueTypeMap {
				tm.Name = mapStr(v.Map(), keyName)
				if pr, ok := v.Map().Get(keyPriority); ok && pr.Type() == pcommon.ValueTypeInt {
					tm.Priority, tm.HasPriority = pr.Int(), true
				}
			}
			p.ThreadMetadata = append(p.ThreadMetadata, tm)
		}
	} else {
		for i, t := range x.threads {
			if usedThreads[i] && (t.name != "" || t.hasPriority) {
				p.ThreadMetadata = append(p.ThreadMetadata, sentry.ThreadMetadata{
					ThreadID: t.id, Name: t.name, Priority: t.priority, HasPriority: t.hasPriority,
				})
			}
		}
	}

	if x.attrs.hasQueues {
		for addr, v := range x.attrs.queueMetadata.All() {
			q := sentry.QueueMetadata{Address: addr}
			if v.Type() == pcommon.ValueTypeMap {
				q.Label = mapStr(v.Map(), keyLabel)
			}
			p.QueueMetadata = append(p.QueueMetadata, q)
		}
	}

	if x.attrs.hasImages {
		p.DebugMeta.Images = imagesFromAttr(x.attrs.images)
	} else {
		p.DebugMeta.Images = c.placeImages(c.imagesFromMappings())
	}

	if x.attrs.hasMeasures {
		var from, to int64 = math.MinInt64, math.MaxInt64
		if w > 0 {
			from = int64(events[0].ts)
		}
		if next > 0 {
			to = int64(next) - 1
		}
		p.Measurements = measurementsFromAttr(x.attrs.measurements, from, to)
	}
	return p, chunkValid(p, events, active)
}

// chunkValid reports whether a chunk built from time-sorted events passes
// sentry.Validate, checking only the rules the builder does not meet by
// construction. Indices are in range by construction: every stack_id is a
// stack the builder added and every frame index a frame it added.
func chunkValid(p *sentry.Profile, events []exportEvent, active []int) bool {
	// Metadata: the ids are ours (32 hex digits), the rest has defaults,
	// but an option or attribute may still have left something empty.
	if !isHexID(p.ProfilerID) || !isHexID(p.ChunkID) ||
		p.Platform == "" || p.ClientSDK.Name == "" || p.ClientSDK.Version == "" {
		return false
	}
	// Timestamps are positive (as int64), and the samples Relay keeps span
	// at most the chunk limit: the span of all of them bounds theirs.
	first, last := events[0].ts, events[len(events)-1].ts
	if first == 0 || last > math.MaxInt64 || last-first > uint64(sentry.DefaultLimits().MaxDurationV2) {
		return false
	}
	// Some thread has two samples with a non-empty stack.
	return slices.ContainsFunc(active, func(n int) bool { return n >= 2 })
}

// isHexID reports whether id is a UUID as 32 lower-case hex digits.
func isHexID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := range len(id) {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// reserve marks the stacks the events use in the chunk tables and sizes the
// chunk's stack and frame storage for them, instead of growing it through
// every power of two. For the only window of a profile the samples tell
// which stacks it uses, without a pass over every event.
func (c *chunkBuilder) reserve(events []exportEvent, only bool) {
	t := &c.tables
	table := c.dict.StackTable()
	stacks, locations := 0, 0
	use := func(st int32) {
		if slot := &t.stacks[st]; slot.gen != t.gen {
			n := table.At(int(st)).LocationIndices().Len()
			*slot = stackSlot{gen: t.gen, id: -1, empty: n == 0}
			stacks++
			locations += n
		}
	}
	if only {
		// Every sample with events has a stack in the table.
		for i := range c.samples {
			if st := c.samples[i].stack; st >= 0 && int(st) < len(t.stacks) {
				use(st)
			}
		}
	} else {
		for _, ev := range events {
			use(c.samples[ev.sample].stack)
		}
	}
	c.p.Stacks.Offsets = make([]int, 0, stacks)
	c.p.Stacks.FrameIndices = make([]int64, 0, locations)
	// A location makes a frame per line (at least one): the dictionary's
	// count of those bounds the chunk's frames, and since most locations
	// have one line, so does the number of locations the stacks visit.
	c.p.Frames = make([]sentry.Frame, 0, min(c.dictionaryFrames(), locations))
}

// stack adds the Sentry stack of a dictionary stack, leaf first like both
// formats, each location expanded into one frame per line (inlined
// functions first, as OTLP orders them), and records it in the chunk
// tables. It checks the locations on the way (see checkStacks) and returns
// false, leaving the chunk unfinished, for a stack that is not valid.
func (c *chunkBuilder) stack(stack int32) bool {
	t := &c.tables
	valid := c.locationValid
	st := &c.p.Stacks
	frames := st.FrameIndices
	id := len(st.Offsets)
	st.Offsets = append(st.Offsets, len(frames))
	locs := c.dict.StackTable().At(int(stack)).LocationIndices()
	for i := range locs.Len() {
		l := locs.At(i)
		if uint32(l) >= uint32(len(valid)) || !valid[l] {
			c.stackStates[stack] = stackInvalid
			return false
		}
		loc := &t.locations[l]
		if loc.gen != t.gen {
			c.frames(l)
		}
		if loc.n == 1 {
			frames = append(frames, loc.first)
			continue
		}
		for f := loc.first; f < loc.first+int64(loc.n); f++ {
			frames = append(frames, f)
		}
	}
	st.FrameIndices = frames
	t.stacks[stack].id = int32(id)
	c.stackStates[stack] = stackValid
	return true
}

// frames adds the Sentry frames of a location and records them in the chunk
// tables.
func (c *chunkBuilder) frames(l int32) {
	t := &c.tables
	loc := c.dict.LocationTable().At(int(l))
	base := sentry.Frame{InstructionAddr: loc.Address()}
	var filename string
	hasFilenameAttr := false
	var frameType string
	for _, idx := range loc.AttributeIndices().All() {
		if idx <= 0 || int(idx) >= len(c.attrRoles) {
			continue
		}
		v := c.attrVals[idx]
		switch c.attrRoles[idx] {
		case roleFrameType:
			frameType = v.AsString()
		case roleFramePlatform:
			base.Platform = v.AsString()
		case roleFrameFilename:
			filename, hasFilenameAttr = v.AsString(), true
		case roleFrameRawFunction:
			base.RawFunction = v.AsString()
		case roleFrameModule:
			base.Module = v.AsString()
		case roleFramePackage:
			base.Package = v.AsString()
		case roleFrameInApp:
			if v.Type() == pcommon.ValueTypeBool {
				base.InApp = sentry.BoolOf(v.Bool())
			}
		case roleFrameSymbolAddr:
			base.SymbolAddr, _ = parseHexAddr(v.AsString())
		case roleFrameImageAddr:
			base.ImageAddr, _ = parseHexAddr(v.AsString())
		case roleFrameAddrMode:
			base.AddrMode = v.AsString()
		case roleFrameStatus:
			base.Status = v.AsString()
		case roleFrameData:
			base.Data = v.AsString()
		}
	}
	// A frame of another kind than the chunk (native frames under Python)
	// names its platform.
	if base.Platform == "" && frameType != "" && frameType != frameTypeOf(c.platform) {
		base.Platform = platformOfFrameType(frameType)
	}
	m := loc.MappingIndex()
	if m <= 0 || int(m) >= c.dict.MappingTable().Len() {
		m = 0
	}
	if m != 0 && !c.seenMap[m] {
		c.seenMap[m] = true
		c.mappings = append(c.mappings, m)
	}
	if m != 0 && !c.attrs.hasImages {
		// The binary a frame is in: Sentry's `package` of a native frame.
		// A frame with an address only also gets it as its `module`,
		// which Relay keeps in profiles (it drops `package`), so that the
		// flame graph names the binary beside the address.
		if file := c.str(c.dict.MappingTable().At(int(m)).FilenameStrindex()); file != "" {
			base.Package = cmp.Or(base.Package, file)
			if loc.Lines().Len() == 0 && base.Module == "" {
				base.Module = path.Base(file)
			}
		}
	}

	first := int64(len(c.p.Frames))
	lines := loc.Lines()
	functions := c.dict.FunctionTable()
	for i := range max(lines.Len(), 1) {
		f := base
		if i < lines.Len() {
			line := lines.At(i)
			fn := functions.At(int(line.FunctionIndex()))
			if f.Function = c.str(fn.NameStrindex()); f.Function == anonymousFunction {
				f.Function = ""
			}
			f.Symbol = c.str(fn.SystemNameStrindex())
			if hasFilenameAttr {
				f.AbsPath, f.Filename = c.str(fn.FilenameStrindex()), filename
			} else {
				f.Filename = c.str(fn.FilenameStrindex())
			}
			if line.Line() > 0 && line.Line() <= math.MaxUint32 {
				f.Lineno = uint32(line.Line())
			}
			if line.Column() > 0 && line.Column() <= math.MaxUint32 {
				f.Colno = uint32(line.Column())
			}
		}
		// A frame with nothing at all in it (a location with neither lines
		// nor address) would be an empty object Sentry cannot show.
		if f == (sentry.Frame{}) {
			f.Function = unknownFunction
		}
		c.p.Frames = append(c.p.Frames, f)
		c.frameMappings = append(c.frameMappings, m)
	}
	t.locations[l] = locationSlot{first: first, n: uint32(int64(len(c.p.Frames)) - first), gen: t.gen}
}

// unknownFunction names a frame that has nothing Sentry could show.
const unknownFunction = "<unknown>"

// imagesFromMappings derives debug_meta images from the mappings the chunk's
// frames use, for profiles that did not come from Sentry: one image per
// binary, loaded at memory_start - file_offset.
//
// It also returns the image of each mapping that has one.
func (c *chunkBuilder) imagesFromMappings() ([]sentry.Image, map[int32]int) {
	type imageKey struct {
		file, buildID string
		base          uint64
	}
	var images []sentry.Image
	index := map[imageKey]int{}
	keyOf := map[int32]imageKey{}
	for _, mi := range c.mappings {
		m := c.dict.MappingTable().At(int(mi))
		if m.MemoryLimit() <= m.MemoryStart() {
			continue
		}
		img := sentry.Image{CodeFile: c.str(m.FilenameStrindex())}
		var gnuBuildID string
		c.eachAttr(m.AttributeIndices(), func(key string, v pcommon.Value) {
			switch key {
			case string(semconv.ProcessExecutableBuildIDGNUKey):
				gnuBuildID = v.AsString()
			case attrImageType:
				img.Type = v.AsString()
			case attrImageCodeID:
				img.CodeID = v.AsString()
			case attrImageDebugID:
				img.DebugID = v.AsString()
			case attrImageDebugFile:
				img.DebugFile = v.AsString()
			case attrImageUUID:
				img.UUID = v.AsString()
			case attrImageArch:
				img.Arch = v.AsString()
			case attrImageImageVMAddr:
				img.ImageVMAddr, _ = parseHexAddr(v.AsString())
			}
		})
		if gnuBuildID != "" {
			img.CodeID = cmp.Or(img.CodeID, gnuBuildID)
			img.DebugID = cmp.Or(img.DebugID, debugIDFromBuildID(gnuBuildID))
			img.Type = cmp.Or(img.Type, "elf")
		}
		if img.Type == "" {
			img.Type = imageTypeOfFile(img.CodeFile)
		}
		img.ImageAddr = m.MemoryStart()
		if m.FileOffset() <= m.MemoryStart() {
			img.ImageAddr = m.MemoryStart() - m.FileOffset()
		}
		k := imageKey{file: img.CodeFile, buildID: img.CodeID, base: img.ImageAddr}
		keyOf[mi] = k
		if i, ok := index[k]; ok {
			// Another segment of the same binary: widen the image.
			images[i].ImageSize = max(images[i].ImageSize, m.MemoryLimit()-img.ImageAddr)
			continue
		}
		img.ImageSize = m.MemoryLimit() - img.ImageAddr
		index[k] = len(images)
		images = append(images, img)
	}
	slices.SortStableFunc(images, func(a, b sentry.Image) int { return cmp.Compare(a.ImageAddr, b.ImageAddr) })
	for i, img := range images {
		index[imageKey{file: img.CodeFile, buildID: img.CodeID, base: img.ImageAddr}] = i
	}
	imageOf := make(map[int32]int, len(keyOf))
	for m, k := range keyOf {
		imageOf[m] = index[k]
	}
	return images, imageOf
}

// imageTypeOfFile guesses the debug file format of a binary from its name;
// Linux ELF when nothing tells.
func imageTypeOfFile(name string) string {
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, ".dll"), strings.HasSuffix(lower, ".exe"):
		return "pe"
	case strings.HasSuffix(lower, ".dylib"), strings.Contains(lower, ".framework/"), strings.Contains(lower, ".app/"):
		return "macho"
	}
	return "elf"
}

// debugIDFromBuildID turns a GNU build id into the debug id Sentry's
// symbolicator derives from it: the first 16 bytes read as a little-endian
// GUID (zero-padded when shorter), formatted as a UUID.
func debugIDFromBuildID(buildID string) string {
	raw, err := hex.DecodeString(buildID)
	if err != nil || len(raw) == 0 {
		return ""
	}
	var g [16]byte
	copy(g[:], raw)
	g[0], g[1], g[2], g[3] = g[3], g[2], g[1], g[0]
	g[4], g[5] = g[5], g[4]
	g[6], g[7] = g[7], g[6]
	s := hex.EncodeToString(g[:])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

func imagesFromAttr(s pcommon.Slice) []sentry.Image {
	images := make([]sentry.Image, 0, s.Len())
	for _, v := range s.All() {
		if v.Type() != pcommon.ValueTypeMap {
			continue
		}
		m := v.Map()
		img := sentry.Image{
			Type:      mapStr(m, keyType),
			CodeFile:  mapStr(m, keyCodeFile),
			CodeID:    mapStr(m, keyCodeID),
			DebugID:   mapStr(m, keyDebugID),
			DebugFile: mapStr(m, keyDebugFile),
			UUID:      mapStr(m, keyUUID),
			Arch:      mapStr(m, keyArch),
		}
		img.ImageAddr, _ = parseHexAddr(mapStr(m, keyImageAddr))
		img.ImageVMAddr, _ = parseHexAddr(mapStr(m, keyImageVMAddr))
		if size, ok := m.Get(keyImageSize); ok && size.Type() == pcommon.ValueTypeInt {
			img.ImageSize = uint64(size.Int())
		}
		images = append(images, img)
	}
	return images
}

// measurementsFromAttr reads sentry.measurements, keeping the values timed in
// [from, to]: a profile cut into several chunks sends each value once.
func measurementsFromAttr(m pcommon.Map, from, to int64) []sentry.Measurement {
	var out []sentry.Measurement
	for name, v := range m.All() {
		if v.Type() != pcommon.ValueTypeMap {
			continue
		}
		ms := sentry.Measurement{Name: name, Unit: mapStr(v.Map(), keyUnit)}
		if values, ok := v.Map().Get(keyValues); ok && values.Type() == pcommon.ValueTypeSlice {
			for _, pt := range values.Slice().All() {
				if pt.Type() != pcommon.ValueTypeMap {
					continue
				}
				var mv sentry.MeasurementValue
				if ts, ok := pt.Map().Get(keyTimestampNano); ok && ts.Type() == pcommon.ValueTypeInt {
					mv.Timestamp = ts.Int()
				}
				if val, ok := pt.Map().Get(keyValue); ok && val.Type() == pcommon.ValueTypeDouble {
					mv.Value = val.Double()
				}
				if mv.Timestamp < from || mv.Timestamp > to {
					continue
				}
				ms.Values = append(ms.Values, mv)
			}
		}
		out = append(out, ms)
	}
	return out
}
