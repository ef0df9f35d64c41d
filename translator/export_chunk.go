package translator

import (
	"cmp"
	"encoding/hex"
	"math"
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
	x.eachAttr(x.prof.AttributeIndices(), func(key string, v pcommon.Value) {
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
}

type frameSpan struct{ first, n int64 }

// chunkTables map dictionary stacks and locations to the Sentry stacks and
// frames of the chunk being built: flat arrays indexed by dictionary index,
// allocated once per FromProfiles call and reused by every chunk. An entry
// belongs to the current chunk when its generation is gen, so starting a
// chunk costs one increment instead of clearing the arrays.
type chunkTables struct {
	gen         uint32
	stackGen    []uint32
	stackIDs    []int64
	locationGen []uint32
	frameSpans  []frameSpan
}

// next starts a chunk.
func (t *chunkTables) next(d pprofile.ProfilesDictionary) {
	if t.stackGen == nil {
		t.stackGen = make([]uint32, d.StackTable().Len())
		t.stackIDs = make([]int64, d.StackTable().Len())
		t.locationGen = make([]uint32, d.LocationTable().Len())
		t.frameSpans = make([]frameSpan, d.LocationTable().Len())
	}
	t.gen++
}

// chunk builds the V2 chunk of one window of time-sorted events.
// next is the time the following window starts at, 0 for the last window.
func (x *profileExport) chunk(events []exportEvent, w int, next uint64, platform string) *sentry.Profile {
	p := &sentry.Profile{
		Version:     sentry.VersionV2,
		ChunkID:     x.chunkIDFor(w),
		ProfilerID:  x.meta.profilerID,
		Platform:    platform,
		Release:     x.meta.release,
		Environment: x.meta.environment,
		Dist:        x.meta.dist,
		ClientSDK:   sentry.ClientSDK{Name: x.opts.SDKName, Version: x.opts.SDKVersion},
	}
	x.tables.next(x.dict)
	c := &chunkBuilder{
		profileExport: x,
		p:             p,
		platform:      platform,
		seenMap:       make(map[int32]bool),
	}

	// Samples: timestamp, thread, stack. A pprofile Sample's events share
	// their Sentry stack, looked up once per Sample.
	p.Samples = make([]sentry.Sample, len(events))
	usedThreads := make([]bool, len(x.threads))
	sampleStacks := make([]int64, len(x.samples))
	for i := range sampleStacks {
		sampleStacks[i] = -1
	}
	if w == 0 && next == 0 {
		// The only window: size the stack storage for every stack the
		// samples use, instead of growing it through every power of two.
		n, stacks := 0, c.dict.StackTable()
		for i := range x.samples {
			if st := x.samples[i].stack; x.stackValid(st) && c.tables.stackGen[st] != c.tables.gen {
				c.tables.stackGen[st] = c.tables.gen
				c.tables.stackIDs[st] = -1
				n += stacks.At(int(st)).LocationIndices().Len()
			}
		}
		c.p.Stacks.FrameIndices = make([]int64, 0, n)
	}
	for i, ev := range events {
		info := &x.samples[ev.sample]
		usedThreads[info.thread] = true
		stack := sampleStacks[ev.sample]
		if stack < 0 {
			stack = c.stack(info.stack)
			sampleStacks[ev.sample] = stack
		}
		p.Samples[i] = sentry.Sample{
			StackID:      stack,
			ThreadID:     x.threads[info.thread].id,
			Timestamp:    int64(ev.ts),
			QueueAddress: info.queue,
			State:        info.state,
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
		p.DebugMeta.Images = c.imagesFromMappings()
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
	return p
}

// stack returns the Sentry stack of a dictionary stack, leaf first like both
// formats, each location expanded into one frame per line (inlined functions
// first, as OTLP orders them).
func (c *chunkBuilder) stack(stack int32) int64 {
	t := &c.tables
	if t.stackGen[stack] == t.gen && t.stackIDs[stack] >= 0 {
		return t.stackIDs[stack]
	}
	locs := c.dict.StackTable().At(int(stack)).LocationIndices()
	id := int64(c.p.Stacks.Len())
	st := &c.p.Stacks
	st.Offsets = append(st.Offsets, len(st.FrameIndices))
	st.FrameIndices = slices.Grow(st.FrameIndices, locs.Len())
	for i := range locs.Len() {
		l := locs.At(i)
		span := t.frameSpans[l]
		if t.locationGen[l] != t.gen {
			span = c.frames(l)
		}
		if span.n == 1 {
			st.FrameIndices = append(st.FrameIndices, span.first)
			continue
		}
		for f := span.first; f < span.first+span.n; f++ {
			st.FrameIndices = append(st.FrameIndices, f)
		}
	}
	t.stackGen[stack], t.stackIDs[stack] = t.gen, id
	return id
}

// frames returns the Sentry frames of a location, adding them on first use.
func (c *chunkBuilder) frames(l int32) frameSpan {
	t := &c.tables
	if t.locationGen[l] == t.gen {
		return t.frameSpans[l]
	}
	loc := c.dict.LocationTable().At(int(l))
	base := sentry.Frame{InstructionAddr: loc.Address()}
	var filename string
	hasFilenameAttr := false
	var frameType string
	c.eachAttr(loc.AttributeIndices(), func(key string, v pcommon.Value) {
		switch key {
		case string(semconv.ProfileFrameTypeKey):
			frameType = v.AsString()
		case attrFramePlatform:
			base.Platform = v.AsString()
		case attrFrameFilename:
			filename, hasFilenameAttr = v.AsString(), true
		case attrFrameRawFunction:
			base.RawFunction = v.AsString()
		case attrFrameModule:
			base.Module = v.AsString()
		case attrFramePackage:
			base.Package = v.AsString()
		case attrFrameInApp:
			if v.Type() == pcommon.ValueTypeBool {
				base.InApp = sentry.BoolOf(v.Bool())
			}
		case attrFrameSymbolAddr:
			base.SymbolAddr, _ = parseHexAddr(v.AsString())
		case attrFrameImageAddr:
			base.ImageAddr, _ = parseHexAddr(v.AsString())
		case attrFrameAddrMode:
			base.AddrMode = v.AsString()
		case attrFrameStatus:
			base.Status = v.AsString()
		case attrFrameData:
			base.Data = v.AsString()
		}
	})
	// A frame of another kind than the chunk (native frames under Python)
	// names its platform.
	if base.Platform == "" && frameType != "" && frameType != frameTypeOf(c.platform) {
		base.Platform = platformOfFrameType(frameType)
	}
	if m := loc.MappingIndex(); m > 0 && int(m) < c.dict.MappingTable().Len() && !c.seenMap[m] {
		c.seenMap[m] = true
		c.mappings = append(c.mappings, m)
	}

	span := frameSpan{first: int64(len(c.p.Frames))}
	lines := loc.Lines()
	for i := range max(lines.Len(), 1) {
		f := base
		if i < lines.Len() {
			line := lines.At(i)
			fn := c.dict.FunctionTable().At(int(line.FunctionIndex()))
			f.Function = c.str(fn.NameStrindex())
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
	}
	span.n = int64(len(c.p.Frames)) - span.first
	t.locationGen[l], t.frameSpans[l] = t.gen, span
	return span
}

// unknownFunction names a frame that has nothing Sentry could show.
const unknownFunction = "<unknown>"

// imagesFromMappings derives debug_meta images from the mappings the chunk's
// frames use, for profiles that did not come from Sentry: one image per
// binary, loaded at memory_start - file_offset.
func (c *chunkBuilder) imagesFromMappings() []sentry.Image {
	type imageKey struct {
		file, buildID string
		base          uint64
	}
	var images []sentry.Image
	index := map[imageKey]int{}
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
	return images
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
