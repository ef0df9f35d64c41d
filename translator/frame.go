package translator

// Frames and stacks: "frames"[] ⇄ Location, Function and Line; "stacks"[]
// ⇄ Stack. The receive side is ProfilesBuilder.location and .stack, the
// export side chunkBuilder.frames and .stack; each block is headed by the
// Sentry frame field it maps.

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

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

// location returns the Location of a frame, creating it and its Function on
// first sight. Identical frames (node sends one per call-tree node) share one.
func (b *ProfilesBuilder) location(f *sentry.Frame, profilePlatform string) int32 {
	platform := f.Platform
	if platform == "" {
		platform = profilePlatform
	}
	k := locationKey{frame: *f, frameType: frameTypeOf(platform), mapping: b.imageOf(f.InstructionAddr)}
	// "abs_path", else "filename" → Function.filename.
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
	// "instruction_addr" → Location.address; the image holding it →
	// Location.mapping_index.
	loc.SetAddress(f.InstructionAddr)
	loc.SetMappingIndex(k.mapping)

	// "function" → Function.name, "symbol" → Function.system_name,
	// "lineno" → Line.line, "colno" → Line.column.
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
	attrs := b.appendFrameAttrs(b.attrScratch[:0], f, k.frameType)
	if len(attrs) > 0 {
		loc.AttributeIndices().FromRaw(attrs)
	}
	b.attrScratch = attrs
	return i
}

// frameStrAttr is the index of the string attribute key=value, the key's
// string index cached in *cached.
func (b *ProfilesBuilder) frameStrAttr(cached *int32, key, value string) int32 {
	return b.dict.scalarAttr(attrKey{key: b.frameKey(cached, key), kind: pcommon.ValueTypeStr, str: value})
}

// appendFrameAttrs appends the attributes of a frame's Location.
func (b *ProfilesBuilder) appendFrameAttrs(attrs []int32, f *sentry.Frame, frameType string) []int32 {
	keys := &b.frameKeys
	// "platform" (of the frame, else of the profile) → profile.frame.type.
	if frameType != "" {
		if frameType != keys.lastFrameType || keys.lastFrameTypeAttr == 0 {
			keys.lastFrameType = frameType
			keys.lastFrameTypeAttr = b.frameStrAttr(&keys.frameType, string(semconv.ProfileFrameTypeKey), frameType)
		}
		attrs = append(attrs, keys.lastFrameTypeAttr)
	}
	// "platform" → sentry.frame.platform.
	if f.Platform != "" {
		attrs = append(attrs, b.frameStrAttr(&keys.platform, attrFramePlatform, f.Platform))
	}
	// "filename", when "abs_path" took Function.filename →
	// sentry.frame.filename.
	if f.AbsPath != "" {
		attrs = append(attrs, b.frameStrAttr(&keys.filename, attrFrameFilename, f.Filename))
	}
	// "raw_function" → sentry.frame.raw_function.
	if f.RawFunction != "" {
		attrs = append(attrs, b.frameStrAttr(&keys.rawFunction, attrFrameRawFunction, f.RawFunction))
	}
	// "module" → sentry.frame.module.
	if f.Module != "" {
		attrs = append(attrs, b.frameStrAttr(&keys.module, attrFrameModule, f.Module))
	}
	// "package" → sentry.frame.package.
	if f.Package != "" {
		attrs = append(attrs, b.frameStrAttr(&keys.pkg, attrFramePackage, f.Package))
	}
	// "in_app" → sentry.frame.in_app (bool).
	if f.InApp.Set() {
		v := 0
		if f.InApp.True() {
			v = 1
		}
		if keys.inAppAttr[v] == 0 {
			keys.inAppAttr[v] = b.dict.scalarAttr(attrKey{key: b.frameKey(&keys.inApp, attrFrameInApp), kind: pcommon.ValueTypeBool, num: uint64(v)})
		}
		attrs = append(attrs, keys.inAppAttr[v])
	}
	return b.appendFrameAddrAttrs(attrs, f)
}

// appendFrameAddrAttrs appends the attributes of a native frame's
// addresses and of its symbolication.
func (b *ProfilesBuilder) appendFrameAddrAttrs(attrs []int32, f *sentry.Frame) []int32 {
	keys := &b.frameKeys
	// "symbol_addr" (alias "sym_addr"), "image_addr" →
	// sentry.frame.symbol_addr, sentry.frame.image_addr (hex).
	if f.SymbolAddr != 0 {
		attrs = append(attrs, b.frameStrAttr(&keys.symbolAddr, attrFrameSymbolAddr, hexAddr(f.SymbolAddr)))
	}
	if f.ImageAddr != 0 {
		attrs = append(attrs, b.frameStrAttr(&keys.imageAddr, attrFrameImageAddr, hexAddr(f.ImageAddr)))
	}
	// "addr_mode", "status", "data" → sentry.frame.addr_mode, .status,
	// .data.
	if f.AddrMode != "" {
		attrs = append(attrs, b.frameStrAttr(&keys.addrMode, attrFrameAddrMode, f.AddrMode))
	}
	if f.Status != "" {
		attrs = append(attrs, b.frameStrAttr(&keys.status, attrFrameStatus, f.Status))
	}
	if f.Data != "" {
		attrs = append(attrs, b.frameStrAttr(&keys.data, attrFrameData, f.Data))
	}
	return attrs
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

// frameFilename is sentry.frame.filename of a Location, when it has one.
type frameFilename struct {
	name string
	set  bool
}

// frameOfLocation is what the frames of a Location share: its address and
// its attributes (by the role and value of each attribute table entry).
// chunkPlatform is the platform of the chunk the frames go to.
func frameOfLocation(loc pprofile.Location, roles []attrRole, vals []pcommon.Value, chunkPlatform string) (sentry.Frame, frameFilename) {
	base := sentry.Frame{InstructionAddr: loc.Address()}
	var filename frameFilename
	var frameType string
	for _, idx := range loc.AttributeIndices().All() {
		if idx <= 0 || int(idx) >= len(roles) {
			continue
		}
		v := vals[idx]
		switch roles[idx] {
		// Location attributes → the frame's fields: sentry.frame.platform
		// → "platform", sentry.frame.filename → "filename" (with
		// Function.filename as "abs_path"), sentry.frame.raw_function →
		// "raw_function", sentry.frame.module → "module",
		// sentry.frame.package → "package", sentry.frame.in_app →
		// "in_app", sentry.frame.symbol_addr → "symbol_addr",
		// sentry.frame.image_addr → "image_addr", sentry.frame.addr_mode →
		// "addr_mode", sentry.frame.status → "status", sentry.frame.data →
		// "data".
		case roleFrameType:
			frameType = v.AsString()
		case roleFramePlatform:
			base.Platform = v.AsString()
		case roleFrameFilename:
			filename = frameFilename{name: v.AsString(), set: true}
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
	// profile.frame.type → "platform", for a frame of another kind than
	// the chunk (native frames under Python).
	if base.Platform == "" && frameType != "" && frameType != frameTypeOf(chunkPlatform) {
		base.Platform = platformOfFrameType(frameType)
	}
	return base, filename
}

// putFrameLine writes one Line of a Location into its frame: its
// Function's name, system name and file name, its line and column.
func putFrameLine(f *sentry.Frame, name, systemName, file string, line, column int64, filename frameFilename) {
	// Function.name → "function", Function.system_name → "symbol",
	// Function.filename → "abs_path" or "filename", Line.line → "lineno",
	// Line.column → "colno"; Location.address → "instruction_addr"
	// (frameOfLocation).
	if f.Function = name; f.Function == anonymousFunction {
		f.Function = ""
	}
	f.Symbol = systemName
	if filename.set {
		f.AbsPath, f.Filename = file, filename.name
	} else {
		f.Filename = file
	}
	if line > 0 && line <= math.MaxUint32 {
		f.Lineno = uint32(line)
	}
	if column > 0 && column <= math.MaxUint32 {
		f.Colno = uint32(column)
	}
}

// unknownFunction names a frame that has nothing Sentry could show.
const unknownFunction = "<unknown>"
