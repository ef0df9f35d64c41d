package profilesin

// Frames: "frames"[] ⇄ Location, Function and Line. Here:
// locationOfFrame, which ProfilesBuilder.location (receive_tables.go) puts in
// the dictionary; the way back is profilesout/frame.go. Each block is
// headed by the Sentry frame field it maps.

import (
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/profileschema"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryid"
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
	locAttrPlatform:    sentryattr.FramePlatform,
	locAttrFilename:    sentryattr.FrameFilename,
	locAttrRawFunction: sentryattr.FrameRawFunction,
	locAttrModule:      sentryattr.FrameModule,
	locAttrPackage:     sentryattr.FramePackage,
	locAttrInApp:       sentryattr.FrameInApp,
	locAttrSymbolAddr:  sentryattr.FrameSymbolAddr,
	locAttrImageAddr:   sentryattr.FrameImageAddr,
	locAttrAddrMode:    sentryattr.FrameAddrMode,
	locAttrStatus:      sentryattr.FrameStatus,
	locAttrData:        sentryattr.FrameData,
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
	if hasLine(f, filename) {
		l.hasLine = true
		l.function, l.symbol, l.filename = functionName(f), f.Symbol, filename
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
	l.attrs[locAttrSymbolAddr] = addrAttr(f.SymbolAddr)
	l.attrs[locAttrImageAddr] = addrAttr(f.ImageAddr)
	// "addr_mode", "status", "data" → sentry.frame.addr_mode, .status,
	// .data.
	l.attrs[locAttrAddrMode] = f.AddrMode
	l.attrs[locAttrStatus] = f.Status
	l.attrs[locAttrData] = f.Data
	return l
}

// hasLine reports whether a frame names a function or a place (its file
// being filename): it then has a Line and a Function.
func hasLine(f *sentry.Frame, filename string) bool {
	return f.Function != "" || f.Symbol != "" || filename != "" || f.Lineno != 0 || f.Colno != 0
}

// functionName is Function.name of a frame with a Line. A frame with a
// place but no name is an anonymous function, as Sentry's UI names it: a
// blank name would merge every anonymous function into one node in a
// flame graph (their file, line and column keep them distinct locations).
func functionName(f *sentry.Frame) string {
	if f.Function == "" && f.Symbol == "" {
		return profileschema.AnonymousFunction
	}
	return f.Function
}

// addrAttr is an address attribute's value: hex, "" (none) for 0.
func addrAttr(addr uint64) string {
	if addr == 0 {
		return ""
	}
	return sentryid.HexAddr(addr)
}
