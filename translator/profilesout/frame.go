package profilesout

// Frames: "frames"[] ⇄ Location, Function and Line. Here:
// frameOfLocation and putFrameLine, which chunkBuilder.frames
// (export_chunk.go) calls per Location; the way in is profilesin/frame.go. Each block is
// headed by the Sentry frame field it maps.

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/frametype"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/profileschema"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryid"
)

// frameFilename is sentry.frame.filename of a Location, when it has one.
type frameFilename struct {
	name string
	set  bool
}

// frameOfLocation is what the frames of a Location share: its address and
// its attributes. chunkPlatform is the platform of the chunk the frames go
// to.
func frameOfLocation(loc pprofile.Location, dv *dictionaryView, chunkPlatform string) (sentry.Frame, frameFilename) {
	roles, vals := dv.attrRoles, dv.attrs.Values
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
			base.SymbolAddr = sentryid.ParseHexAddr(v.AsString())
		case roleFrameImageAddr:
			base.ImageAddr = sentryid.ParseHexAddr(v.AsString())
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
	if base.Platform == "" && frameType != "" && frameType != frametype.Of(chunkPlatform) {
		base.Platform = frametype.Platform(frameType)
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
	if f.Function = name; f.Function == profileschema.AnonymousFunction {
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
