package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"path"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
)

// Where the sentryprofile receiver puts what identifies an artifact
// (translator/README.md): debug_meta images become Mappings whose filename
// is the image's code_file, with these attributes.
const (
	attrImageType    = sentryattr.ImageType
	attrImageDebugID = sentryattr.ImageDebugID
	attrImageUUID    = sentryattr.ImageUUID
	// attrFrameModule holds a Sentry frame's module: the class of a JVM
	// method.
	attrFrameModule = sentryattr.FrameModule
	// attrDebugImages is the profile attribute in which the receiver keeps
	// every debug_meta image of a Sentry profile.
	attrDebugImages = sentryattr.DebugImages
)

// images are the artifact identifiers the batch's Mappings carry.
type images struct {
	// sourceMapDebugIDs maps a bundle's URL or path (a `sourcemap` debug
	// image's code_file, which is the abs_path of its frames) to the debug
	// id of its source map.
	sourceMapDebugIDs map[string]string
	// proguardUUID is the UUID of the batch's ProGuard mapping when it
	// names exactly one.
	proguardUUID string
	// locationUUID is the ProGuard UUID of each location's profile, when
	// the batch names several (profiles of different builds); a location
	// that profiles of two builds share is left out.
	locationUUID map[int32]string
	// callers marks the locations whose addresses are return addresses
	// (callers.go).
	callers []bool
}

// readImages reads the debug images of a batch out of its Mappings (and,
// when they name several ProGuard builds, out of each profile).
func readImages(d *dictionary, pd pprofile.Profiles) images {
	var im images
	proguardUUIDs := map[string]bool{}
	for _, m := range d.d.MappingTable().All() {
		img := readImage(d, m)
		switch {
		case img.typ == "proguard" && img.uuid != "":
			proguardUUIDs[strings.ToLower(img.uuid)] = true
		case img.typ == "sourcemap" && img.debugID != "":
			im.addSourceMap(d.str(m.FilenameStrindex()), img.debugID)
		}
	}
	im.setProguardUUIDs(proguardUUIDs, d, pd)
	im.callers = callerLocations(d.d)
	return im
}

// setProguardUUIDs keeps the batch's one ProGuard UUID, or, when it names
// several (profiles of different builds), each location's.
func (im *images) setProguardUUIDs(uuids map[string]bool, d *dictionary, pd pprofile.Profiles) {
	if len(uuids) > 1 {
		im.locationUUID = proguardUUIDsByLocation(d, pd)
		return
	}
	for u := range uuids {
		im.proguardUUID = u
	}
}

// debugImage is what a Mapping says of the debug image it stands for.
type debugImage struct {
	typ, debugID, uuid string
}

// readImage reads a Mapping's debug image attributes.
func readImage(d *dictionary, m pprofile.Mapping) debugImage {
	var img debugImage
	d.attrsOf(m.AttributeIndices(), func(key string, v pcommon.Value) {
		switch key {
		case attrImageType:
			img.typ = v.AsString()
		case attrImageDebugID:
			img.debugID = v.AsString()
		case attrImageUUID:
			img.uuid = v.AsString()
		}
	})
	return img
}

// addSourceMap records the debug id of a bundle's source map.
func (im *images) addSourceMap(file, debugID string) {
	if im.sourceMapDebugIDs == nil {
		im.sourceMapDebugIDs = map[string]string{}
	}
	im.sourceMapDebugIDs[file] = debugID
}

// proguardUUIDOf is the ProGuard UUID of a location.
func (im *images) proguardUUIDOf(li int32) string {
	if im.locationUUID != nil {
		return im.locationUUID[li]
	}
	return im.proguardUUID
}

// proguardUUIDsByLocation assigns each location the ProGuard UUID of the
// profiles whose samples use it, from their sentry.debug_meta.images; a
// location that profiles of two builds share gets none.
func proguardUUIDsByLocation(d *dictionary, pd pprofile.Profiles) map[int32]string {
	out := map[int32]string{}
	for _, rp := range pd.ResourceProfiles().All() {
		for _, sp := range rp.ScopeProfiles().All() {
			for _, p := range sp.Profiles().All() {
				if uuid := profileProguardUUID(d, p); uuid != "" {
					assignUUID(out, d.d.StackTable(), p, uuid)
				}
			}
		}
	}
	return out
}

// assignUUID gives the locations of a profile's samples its UUID.
func assignUUID(out map[int32]string, stacks pprofile.StackSlice, p pprofile.Profile, uuid string) {
	for _, sample := range p.Samples().All() {
		si := sample.StackIndex()
		if si <= 0 || int(si) >= stacks.Len() {
			continue
		}
		for _, li := range stacks.At(int(si)).LocationIndices().All() {
			out[li] = sharedUUID(out, li, uuid)
		}
	}
}

// sharedUUID is the UUID of a location that a profile of build uuid uses:
// that one, or none once profiles of two builds use it.
func sharedUUID(out map[int32]string, li int32, uuid string) string {
	if prev, seen := out[li]; seen && prev != uuid {
		return ""
	}
	return uuid
}

// profileProguardUUID is the uuid of a profile's `proguard` debug image.
func profileProguardUUID(d *dictionary, p pprofile.Profile) string {
	uuid := ""
	d.attrsOf(p.AttributeIndices(), func(key string, v pcommon.Value) {
		if key != attrDebugImages || v.Type() != pcommon.ValueTypeSlice {
			return
		}
		for _, img := range v.Slice().All() {
			if id := proguardImageUUID(img); id != "" {
				uuid = id
			}
		}
	})
	return uuid
}

// proguardImageUUID is the uuid of a debug image when it is a `proguard`
// one, lower case.
func proguardImageUUID(img pcommon.Value) string {
	if img.Type() != pcommon.ValueTypeMap {
		return ""
	}
	typ, _ := img.Map().Get("type")
	id, _ := img.Map().Get("uuid")
	if typ.AsString() != "proguard" {
		return ""
	}
	return strings.ToLower(id.AsString())
}

// target is one frame of a location to resolve: a line of it, or its
// address (line -1).
type target struct {
	line int
	in   symbolication.Lookup
	// name is the function name as the location had it, which a JVM
	// lookup splits into class and method.
	name string
}

// locationFacts are the attributes of a location that say how it is
// resolved.
type locationFacts struct {
	frameType, module string
	// resolved: an earlier symbolication resolved it.
	resolved bool
}

func readLocationFacts(d *dictionary, loc pprofile.Location) locationFacts {
	var f locationFacts
	d.attrsOf(loc.AttributeIndices(), func(key string, v pcommon.Value) {
		switch key {
		case string(semconv.ProfileFrameTypeKey):
			f.frameType = v.AsString()
		case attrFrameModule:
			f.module = v.AsString()
		case attrGeneratedFunction, attrGeneratedFile:
			f.resolved = true
		}
	})
	return f
}

// kindsInOrder is the order in which kinds are tried on a location: the
// frame type decides between JavaScript and JVM, an address needs native.
var kindsInOrder = [...]symbolication.Kind{symbolication.KindSourceMap, symbolication.KindProGuard, symbolication.KindNative}

// targetsOf returns the kind of a location and what in it to resolve;
// nothing when no configured kind recognises it.
func (s *frameProcessor) targetsOf(dst []target, d *dictionary, im images, li int32, loc pprofile.Location) (symbolication.Kind, []target) {
	facts := readLocationFacts(d, loc)
	if facts.resolved {
		return "", dst[:0] // resolved by an earlier symbolication: pass untouched
	}
	for _, kind := range kindsInOrder {
		if _, ok := s.resolvers[kind]; !ok {
			continue
		}
		if t := kindTargets(kind, dst, d, im, li, loc, facts); len(t) > 0 {
			return kind, t
		}
	}
	return "", dst[:0]
}

var (
	frameTypeJS  = semconv.ProfileFrameTypeV8JS.Value.AsString()
	frameTypeJVM = semconv.ProfileFrameTypeJVM.Value.AsString()
)

// kindTargets are the targets of a location for one kind.
func kindTargets(kind symbolication.Kind, dst []target, d *dictionary, im images, li int32, loc pprofile.Location, facts locationFacts) []target {
	switch {
	case kind == symbolication.KindSourceMap && (facts.frameType == "" || facts.frameType == frameTypeJS):
		return jsTargets(dst, d, im, loc, facts.frameType != "")
	case kind == symbolication.KindProGuard && facts.frameType == frameTypeJVM:
		return jvmTargets(dst, d, im.proguardUUIDOf(li), loc, facts.module)
	case kind == symbolication.KindNative:
		return nativeTargets(dst, d, loc, im.isCaller(li))
	}
	return nil
}

// jvmTargets: the lines of a JVM location, each method with its class.
func jvmTargets(out []target, d *dictionary, uuid string, loc pprofile.Location, module string) []target {
	for j, line := range loc.Lines().All() {
		fn, ok := d.function(line.FunctionIndex())
		if !ok || line.Line() < 0 || line.Line() > 1<<31 {
			continue
		}
		name := d.str(fn.NameStrindex())
		class, method, ok := splitJVMName(name, module)
		if !ok {
			continue
		}
		out = append(out, target{line: j, name: name, in: symbolication.Lookup{
			DebugID: uuid,
			Frame:   symbolication.Frame{Function: method, Module: class, File: d.str(fn.FilenameStrindex()), Line: int(line.Line())},
		}})
	}
	return out
}

// splitJVMName is the class and method of a JVM frame: the frame's module
// (Sentry's Android frames) and its name, else the name's parts around its
// last dot (ART method traces name methods Class.method).
func splitJVMName(name, module string) (class, method string, ok bool) {
	if module != "" {
		return module, name, name != ""
	}
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || i == len(name)-1 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

// nativeTargets: the address of a location that has no lines yet, in a
// mapping with a GNU build id (the eBPF profiler's, and the receiver's for
// Sentry's ELF images); a caller's is looked up one byte back.
func nativeTargets(out []target, d *dictionary, loc pprofile.Location, caller bool) []target {
	mi := loc.MappingIndex()
	if loc.Lines().Len() > 0 || loc.Address() == 0 || mi <= 0 || int(mi) >= d.d.MappingTable().Len() {
		return nil
	}
	m := d.d.MappingTable().At(int(mi))
	buildID := mappingBuildID(d, m)
	if buildID == "" {
		return nil
	}
	return append(out, target{line: -1, in: symbolication.Lookup{
		BuildID:   strings.ToLower(buildID),
		ImageAddr: imageBase(m),
		Frame:     symbolication.Frame{Address: lookupAddress(loc.Address(), caller), File: d.str(m.FilenameStrindex())},
	}})
}

// mappingBuildID is the GNU build id of a mapping.
func mappingBuildID(d *dictionary, m pprofile.Mapping) string {
	buildID := ""
	d.attrsOf(m.AttributeIndices(), func(key string, v pcommon.Value) {
		if key == string(semconv.ProcessExecutableBuildIDGNUKey) {
			buildID = v.AsString()
		}
	})
	return buildID
}

// imageBase is where a mapping's image was loaded: memory_start −
// file_offset, which makes the eBPF profiler's ELF file addresses and
// Sentry's absolute ones both offsets into the file.
func imageBase(m pprofile.Mapping) uint64 {
	base := m.MemoryStart()
	if m.FileOffset() <= base {
		base -= m.FileOffset()
	}
	return base
}

// jsTargets: the lines of a JavaScript location that have a file, a line
// and a column, the position a source map resolves. Without a frame type,
// only files named like JavaScript count.
func jsTargets(out []target, d *dictionary, im images, loc pprofile.Location, isJS bool) []target {
	for j, line := range loc.Lines().All() {
		fn, ok := d.function(line.FunctionIndex())
		if !ok || !hasPosition(line) {
			continue
		}
		file := d.str(fn.FilenameStrindex())
		if !bundleFile(file, isJS) {
			continue
		}
		out = append(out, target{line: j, name: d.str(fn.NameStrindex()), in: symbolication.Lookup{
			DebugID: im.sourceMapDebugIDs[file],
			Frame: symbolication.Frame{
				Function: d.str(fn.NameStrindex()),
				File:     file,
				Line:     int(line.Line()),
				Column:   int(line.Column()),
			},
		}})
	}
	return out
}

// hasPosition reports whether a line has a line and a column, 1-based and
// within what a frame can hold.
func hasPosition(line pprofile.Line) bool {
	return line.Line() > 0 && line.Column() > 0 && line.Line() <= 1<<31 && line.Column() <= 1<<31
}

// bundleFile says whether a frame's file can be a bundle with a source map:
// not V8's own scripts, and, when the frame type does not say JavaScript,
// a .js, .mjs or .cjs file.
func bundleFile(file string, isJS bool) bool {
	switch {
	case isV8Internal(file):
		return false
	case isJS:
		return true
	}
	switch path.Ext(strings.SplitN(file, "?", 2)[0]) {
	case ".js", ".mjs", ".cjs":
		return true
	}
	return false
}

// isV8Internal: V8's own scripts and placeholders (node:internal/…,
// <anonymous>, native), and no file at all.
func isV8Internal(file string) bool {
	return file == "" || strings.HasPrefix(file, "node:") || strings.HasPrefix(file, "<") || file == "native"
}
