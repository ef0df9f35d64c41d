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
	l := locationAttrs{frame: sentry.Frame{InstructionAddr: loc.Address()}}
	for _, idx := range loc.AttributeIndices().All() {
		if idx > 0 && int(idx) < len(roles) {
			l.put(roles[idx], vals[idx])
		}
	}
	// profile.frame.type → "platform", for a frame of another kind than
	// the chunk (native frames under Python).
	if l.frame.Platform == "" && l.frameType != "" && l.frameType != frametype.Of(chunkPlatform) {
		l.frame.Platform = frametype.Platform(l.frameType)
	}
	return l.frame, l.filename
}

// locationAttrs is what a Location's attributes say of its frames.
type locationAttrs struct {
	frame     sentry.Frame
	filename  frameFilename
	frameType string
}

// put maps one Location attribute: profile.frame.type (read by
// frameOfLocation), sentry.frame.filename → "filename" (with
// Function.filename as "abs_path"), sentry.frame.in_app → "in_app",
// sentry.frame.symbol_addr → "symbol_addr", sentry.frame.image_addr →
// "image_addr", and the plain strings of frameStringField.
func (l *locationAttrs) put(role attrRole, v pcommon.Value) {
	if field := frameStringField(&l.frame, role); field != nil {
		*field = v.AsString()
		return
	}
	switch role {
	case roleFrameType:
		l.frameType = v.AsString()
	case roleFrameFilename:
		l.filename = frameFilename{name: v.AsString(), set: true}
	case roleFrameInApp:
		if v.Type() == pcommon.ValueTypeBool {
			l.frame.InApp = sentry.BoolOf(v.Bool())
		}
	case roleFrameSymbolAddr:
		l.frame.SymbolAddr = sentryid.ParseHexAddr(v.AsString())
	case roleFrameImageAddr:
		l.frame.ImageAddr = sentryid.ParseHexAddr(v.AsString())
	}
}

// frameStringField is the field of f a string Location attribute fills:
// sentry.frame.platform → "platform", sentry.frame.raw_function →
// "raw_function", sentry.frame.module → "module", sentry.frame.package →
// "package", sentry.frame.addr_mode → "addr_mode", sentry.frame.status →
// "status", sentry.frame.data → "data"; nil for another role.
func frameStringField(f *sentry.Frame, role attrRole) *string {
	switch role {
	case roleFramePlatform:
		return &f.Platform
	case roleFrameRawFunction:
		return &f.RawFunction
	case roleFrameModule:
		return &f.Module
	case roleFramePackage:
		return &f.Package
	case roleFrameAddrMode:
		return &f.AddrMode
	case roleFrameStatus:
		return &f.Status
	case roleFrameData:
		return &f.Data
	}
	return nil
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
	f.Lineno, f.Colno = lineNumber(line), lineNumber(column)
}

// lineNumber is a line or column as Sentry writes it: 1 and up, 0 (none)
// for one that is not positive or does not fit.
func lineNumber(v int64) uint32 {
	if v > 0 && v <= math.MaxUint32 {
		return uint32(v)
	}
	return 0
}

// unknownFunction names a frame that has nothing Sentry could show.
const unknownFunction = "<unknown>"
