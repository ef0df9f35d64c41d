package translator

// The builder's per-item tables: each frame's Location (deduplicated across
// items) and each stack's Stack. What a frame maps to is frame.go's
// (locationOfFrame); here it goes into the dictionary.

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

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
	platform := f.Platform
	if platform == "" {
		platform = profilePlatform
	}
	k := locationKey{frame: *f, frameType: frameTypeOf(platform), mapping: b.imageOf(f.InstructionAddr)}
	hint := locationHint{function: f.Function, path: frameFunctionFile(f), addr: f.InstructionAddr, lineno: f.Lineno}
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
	loc.SetAddress(f.InstructionAddr)
	loc.SetMappingIndex(k.mapping)
	fields := locationOfFrame(f, k.frameType) // frame.go
	if fields.hasLine {
		line := loc.Lines().AppendEmpty()
		line.SetFunctionIndex(d.function(fields.function, fields.symbol, fields.filename, 0))
		line.SetLine(fields.lineno)
		line.SetColumn(fields.colno)
	}
	attrs := b.appendLocationAttrs(b.attrScratch[:0], &fields)
	if len(attrs) > 0 {
		loc.AttributeIndices().FromRaw(attrs)
	}
	b.attrScratch = attrs
	return i
}

// appendLocationAttrs appends the attributes of a Location, in
// locationAttr order.
func (b *ProfilesBuilder) appendLocationAttrs(attrs []int32, l *locationFields) []int32 {
	c := &b.frameKeys
	for a := range numLocationAttrs {
		switch v := l.attrs[a]; {
		case a == locAttrInApp:
			if !l.inApp.Set() {
				continue
			}
			n := 0
			if l.inApp.True() {
				n = 1
			}
			if c.inAppAttr[n] == 0 {
				c.inAppAttr[n] = b.dict.scalarAttr(attrKey{key: b.locationAttrKey(a), kind: pcommon.ValueTypeBool, num: uint64(n)})
			}
			attrs = append(attrs, c.inAppAttr[n])
		case v == "" && (a != locAttrFilename || !l.hasFilenameAttr):
		case a == locAttrFrameType:
			// Every frame of a platform has the same one.
			if v != c.lastFrameType || c.lastFrameTypeAttr == 0 {
				c.lastFrameType = v
				c.lastFrameTypeAttr = b.locationStrAttr(a, v)
			}
			attrs = append(attrs, c.lastFrameTypeAttr)
		default:
			attrs = append(attrs, b.locationStrAttr(a, v))
		}
	}
	return attrs
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
