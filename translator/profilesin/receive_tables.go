package profilesin

// The builder's per-item tables: each frame's Location (deduplicated across
// items), each stack's Stack, each thread's attributes, each image's
// Mapping. What a frame, a thread or an image maps to is frame.go's
// (locationOfFrame), thread.go's (threadOfProfile) and image.go's
// (mappingOfImage); here it goes into the dictionary.

import (
	"cmp"
	"math"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/frametype"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// locationKey is a frame as it lands in the Location table: its content, the
// frame type it gets from the profile's platform and the mapping its address
// falls in.
type locationKey struct {
	frame     sentry.Frame
	frameType string
	mapping   int32
}

// frameAttrKeys caches the string indices of the location attribute keys
// and the attributes every frame of a platform shares, for the current
// dictionary; 0 is "not looked up yet" (index 0 is the empty string).
type frameAttrKeys struct {
	keys [numLocationAttrs]int32
	// The frame type attribute of the last frame type seen, and the two
	// in_app attributes.
	lastFrameType     string
	lastFrameTypeAttr int32
	inAppAttr         [2]int32
}

// location returns the Location of a frame, creating it and its Function on
// first sight. Identical frames (node sends one per call-tree node) share one.
func (b *ProfilesBuilder) location(f *sentry.Frame, profilePlatform string) int32 {
	k := locationKey{frame: *f, frameType: frametype.Of(cmp.Or(f.Platform, profilePlatform)), mapping: b.imageOf(f.InstructionAddr)}
	d := b.dict
	h := d.frameHash(f, k.mapping)
	i, p, ok := b.locations.find(h, func(i int32) bool { return b.locationKeys[i] == k })
	if ok {
		return i
	}
	table := d.dict.LocationTable()
	i = int32(table.Len())
	b.locationKeys = append(b.locationKeys, k)
	b.locations.put(p, h, i)
	loc := table.AppendEmpty()
	loc.SetAddress(f.InstructionAddr)
	loc.SetMappingIndex(k.mapping)
	fields := locationOfFrame(f, k.frameType) // frame.go
	if fields.hasLine {
		putLine(loc.Lines().AppendEmpty(), d, &fields)
	}
	attrs := b.appendLocationAttrs(b.attrScratch[:0], &fields)
	if len(attrs) > 0 {
		loc.AttributeIndices().FromRaw(attrs)
	}
	b.attrScratch = attrs
	return i
}

// putLine writes a frame's Line and its Function.
func putLine(line pprofile.Line, d *dictionaryBuilder, l *locationFields) {
	line.SetFunctionIndex(d.function(l.function, l.symbol, l.filename, 0))
	line.SetLine(l.lineno)
	line.SetColumn(l.colno)
}

// appendLocationAttrs appends the attributes of a Location, in
// locationAttr order.
func (b *ProfilesBuilder) appendLocationAttrs(attrs []int32, l *locationFields) []int32 {
	for a := range numLocationAttrs {
		switch v := l.attrs[a]; {
		case a == locAttrInApp:
			if l.inApp.Set() {
				attrs = append(attrs, b.inAppAttr(l.inApp.True()))
			}
		case v == "" && (a != locAttrFilename || !l.hasFilenameAttr):
		case a == locAttrFrameType:
			attrs = append(attrs, b.frameTypeAttr(v))
		default:
			attrs = append(attrs, b.locationStrAttr(a, v))
		}
	}
	return attrs
}

// inAppAttr is sentry.frame.in_app = inApp, made once per builder.
func (b *ProfilesBuilder) inAppAttr(inApp bool) int32 {
	c := &b.frameKeys
	n := 0
	if inApp {
		n = 1
	}
	if c.inAppAttr[n] == 0 {
		c.inAppAttr[n] = b.dict.scalarAttr(attrKey{key: b.locationAttrKey(locAttrInApp), kind: pcommon.ValueTypeBool, num: uint64(n)})
	}
	return c.inAppAttr[n]
}

// frameTypeAttr is profile.frame.type = frameType: every frame of a
// platform has the same one, so the last one is kept at hand.
func (b *ProfilesBuilder) frameTypeAttr(frameType string) int32 {
	c := &b.frameKeys
	if frameType != c.lastFrameType || c.lastFrameTypeAttr == 0 {
		c.lastFrameType = frameType
		c.lastFrameTypeAttr = b.locationStrAttr(locAttrFrameType, frameType)
	}
	return c.lastFrameTypeAttr
}

// locationAttrKey is the string index of a Location attribute's key.
func (b *ProfilesBuilder) locationAttrKey(a locationAttr) int32 {
	k := &b.frameKeys.keys[a]
	if *k == 0 {
		*k = b.dict.str(locationAttrKeys[a])
	}
	return *k
}

// locationStrAttr is the index of the string attribute a=value.
func (b *ProfilesBuilder) locationStrAttr(a locationAttr, value string) int32 {
	return b.dict.scalarAttr(attrKey{key: b.locationAttrKey(a), kind: pcommon.ValueTypeStr, str: value})
}

// stack: "stacks"[i] (frame indices, leaf first) → a Stack of the frames'
// Locations; -1 when a frame index is out of range.
func (b *ProfilesBuilder) stack(frames []int64) int32 {
	// Sized once and filled by index: this loop runs once per frame
	// index of the payload (250,000 in a busy minute's chunk).
	locs := slices.Grow(b.stackScratch[:0], len(frames))[:len(frames)]
	b.stackScratch = locs
	frameLocations := b.frameLocations
	for j, f := range frames {
		if uint64(f) >= uint64(len(frameLocations)) { // negative too
			return -1
		}
		locs[j] = frameLocations[f]
	}
	return b.dict.stack(locs)
}

// threadAttrs are the attribute indices every sample of one thread carries.
type threadAttrs struct {
	first, n int32 // range in ProfilesBuilder.threadAttrBuf
}

// resolveThreads gives every sample its thread index in sampleThreads and
// writes the threads' attributes. It runs before frames and stacks are
// walked so that the thread attributes, which every pprofile Sample
// references, get the smallest attribute indices: one-byte varints in the
// protobuf encoding.
//
// In the same pass it reads what the grouping needs of each sample into
// arrays of their own (sampleStacks, sampleTimes; ordinarySamples when no
// sample has a queue or a state), so that the grouping reads 16 bytes a
// sample instead of every Sample again.
func (b *ProfilesBuilder) resolveThreads(p *sentry.Profile, start uint64) {
	b.threads.Reset()
	b.threadAttrsOf = b.threadAttrsOf[:0]
	b.threadAttrBuf = b.threadAttrBuf[:0]
	active := activeThreads(p)
	n := len(p.Samples)
	threads := slices.Grow(b.sampleThreads[:0], n)[:n]
	stacks := slices.Grow(b.sampleStacks[:0], n)[:n]
	times := slices.Grow(b.sampleTimes[:0], n)[:n]
	v2, ordinary := isV2(p), true
	for i := range p.Samples {
		s := &p.Samples[i]
		t, ok := b.threads.Next(s.ThreadID)
		if !ok {
			var added bool
			if t, added = b.threads.Lookup(s.ThreadID); added {
				b.threadAttrsOf = append(b.threadAttrsOf, b.threadAttributes(p, s.ThreadID, active))
			}
		}
		threads[i] = t
		// A sample without a time is left out as one without a stack, as
		// is a stack id beyond any stack table.
		ts, ok := sampleTime(s, v2, start)
		stacks[i], times[i] = int32(s.StackID), ts
		if !ok || s.StackID < 0 || s.StackID > math.MaxInt32 {
			stacks[i] = -1
		}
		ordinary = ordinary && s.QueueAddress == "" && s.State == ""
	}
	b.sampleThreads, b.sampleStacks, b.sampleTimes, b.ordinarySamples = threads, stacks, times, ordinary
}

// threadAttributes appends the attributes of one thread (threadOfProfile)
// to threadAttrBuf: thread.id, sentry.thread.id, thread.name,
// sentry.thread.priority, sentry.thread.active.
func (b *ProfilesBuilder) threadAttributes(p *sentry.Profile, id string, active []string) threadAttrs {
	d := b.dict
	t := threadOfProfile(p, id, active) // thread.go
	first := int32(len(b.threadAttrBuf))
	if t.hasNumber {
		b.threadAttrBuf = append(b.threadAttrBuf, d.attrInt(string(semconv.ThreadIDKey), t.number))
	}
	if t.verbatim != "" {
		b.threadAttrBuf = append(b.threadAttrBuf, d.attrStr(sentryattr.ThreadID, t.verbatim))
	}
	if t.name != "" {
		b.threadAttrBuf = append(b.threadAttrBuf, d.attrStr(string(semconv.ThreadNameKey), t.name))
	}
	if t.hasPriority {
		b.threadAttrBuf = append(b.threadAttrBuf, d.attrInt(sentryattr.ThreadPriority, t.priority))
	}
	if t.active {
		b.threadAttrBuf = append(b.threadAttrBuf, d.attrBool(sentryattr.ThreadActive, true))
	}
	return threadAttrs{first: first, n: int32(len(b.threadAttrBuf)) - first}
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
			m[d.attrStr(sentryattr.QueueAddress, q.Address)] = d.attrStr(sentryattr.QueueLabel, q.Label)
		}
	}
	return m
}

type imageRange struct {
	start, end uint64
	mapping    int32
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

// mapping returns the Mapping of a debug_meta image (mappingOfImage).
func (b *ProfilesBuilder) mapping(img *sentry.Image) int32 {
	if i, ok := b.mappings[*img]; ok {
		return i
	}
	d := b.dict
	table := d.dict.MappingTable()
	i := int32(table.Len())
	m := table.AppendEmpty()
	fields := mappingOfImage(img) // image.go
	m.SetMemoryStart(fields.memoryStart)
	if fields.hasLimit {
		m.SetMemoryLimit(fields.memoryLimit)
	}
	m.SetFilenameStrindex(d.str(fields.filename))
	attrs := b.attrScratch[:0]
	for _, a := range fields.attrs {
		attrs = d.appendStr(attrs, a.key, a.value)
	}
	if len(attrs) > 0 {
		m.AttributeIndices().FromRaw(attrs)
	}
	b.attrScratch = attrs
	b.mappings[*img] = i
	return i
}
