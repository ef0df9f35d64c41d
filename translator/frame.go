package translator

// Frames: "frames"[] ⇄ Location, Function and Line. Receive:
// locationOfFrame, which ProfilesBuilder.location (receive_tables.go) puts in
// the dictionary; export: frameOfLocation and putFrameLine, which
// chunkBuilder.frames (export_chunk.go) calls per Location. Each block is
// headed by the Sentry frame field it maps.

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// frameFunctionFile: "abs_path", else "filename" → Function.filename.
func frameFunctionFile(f *sentry.Frame) string {
	if f.AbsPath != "" {
		return f.AbsPath
	}
	return f.Filename
}

// locationAttr is one of the attributes of a frame's Location, in the order
// they are written.
type locationAttr uint8

const (
	locAttrFrameType locationAttr = iota
	locAttrPlatform
	locAttrFilename
	locAttrRawFunction
	locAttrModule
	locAttrPackage
	locAttrInApp
	locAttrSymbolAddr
	locAttrImageAddr
	locAttrAddrMode
	locAttrStatus
	locAttrData
	numLocationAttrs
)

// locationAttrKeys are the keys of the Location attributes.
var locationAttrKeys = [numLocationAttrs]string{
	locAttrFrameType:   string(semconv.ProfileFrameTypeKey),
	locAttrPlatform:    attrFramePlatform,
	locAttrFilename:    attrFrameFilename,
	locAttrRawFunction: attrFrameRawFunction,
	locAttrModule:      attrFrameModule,
	locAttrPackage:     attrFramePackage,
	locAttrInApp:       attrFrameInApp,
	locAttrSymbolAddr:  attrFrameSymbolAddr,
	locAttrImageAddr:   attrFrameImageAddr,
	locAttrAddrMode:    attrFrameAddrMode,
	locAttrStatus:      attrFrameStatus,
	locAttrData:        attrFrameData,
}

// locationFields is what a frame maps to: its Location's Line and Function
// and its attributes.
type locationFields struct {
	hasLine                    bool
	function, symbol, filename string
	lineno, colno              int64
	// attrs are the string attributes by their locationAttr; "" for none,
	// except sentry.frame.filename, present (even empty) when
	// hasFilenameAttr. in_app is inApp instead.
	attrs           [numLocationAttrs]string
	hasFilenameAttr bool
	inApp           sentry.OptionalBool
}

// locationOfFrame maps a frame whose Location has frame type frameType.
// "instruction_addr" → Location.address and the image holding it →
// Location.mapping_index are written by the walk, which knows the images.
func locationOfFrame(f *sentry.Frame, frameType string) locationFields {
	var l locationFields
	filename := frameFunctionFile(f)
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
		l.hasLine = true
		l.function, l.symbol, l.filename = name, f.Symbol, filename
		l.lineno, l.colno = int64(f.Lineno), int64(f.Colno)
	}
	// "platform" (of the frame, else of the profile) → profile.frame.type.
	l.attrs[locAttrFrameType] = frameType
	// "platform" → sentry.frame.platform.
	l.attrs[locAttrPlatform] = f.Platform
	// "filename", when "abs_path" took Function.filename →
	// sentry.frame.filename.
	if f.AbsPath != "" {
		l.attrs[locAttrFilename], l.hasFilenameAttr = f.Filename, true
	}
	// "raw_function" → sentry.frame.raw_function.
	l.attrs[locAttrRawFunction] = f.RawFunction
	// "module" → sentry.frame.module.
	l.attrs[locAttrModule] = f.Module
	// "package" → sentry.frame.package.
	l.attrs[locAttrPackage] = f.Package
	// "in_app" → sentry.frame.in_app (bool).
	l.inApp = f.InApp
	// "symbol_addr" (alias "sym_addr"), "image_addr" →
	// sentry.frame.symbol_addr, sentry.frame.image_addr (hex).
	if f.SymbolAddr != 0 {
		l.attrs[locAttrSymbolAddr] = hexAddr(f.SymbolAddr)
	}
	if f.ImageAddr != 0 {
		l.attrs[locAttrImageAddr] = hexAddr(f.ImageAddr)
	}
	// "addr_mode", "status", "data" → sentry.frame.addr_mode, .status,
	// .data.
	l.attrs[locAttrAddrMode] = f.AddrMode
	l.attrs[locAttrStatus] = f.Status
	l.attrs[locAttrData] = f.Data
	return l
}

// frameFilename is sentry.frame.filename of a Location, when it has one.
type frameFilename struct {
	name string
	set  bool
}

// frameOfLocation is what the frames of a Location share: its address and
// its attributes. chunkPlatform is the platform of the chunk the frames go
// to.
func frameOfLocation(loc pprofile.Location, dv *dictionaryView, chunkPlatform string) (sentry.Frame, frameFilename) {
	roles, vals := dv.attrRoles, dv.attrVals
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
			base.SymbolAddr = parseHexAddr(v.AsString())
		case roleFrameImageAddr:
			base.ImageAddr = parseHexAddr(v.AsString())
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
