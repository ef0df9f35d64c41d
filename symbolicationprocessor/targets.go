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
}

// readImages reads the debug images of a batch out of its Mappings (and,
// when they name several ProGuard builds, out of each profile).
func readImages(d *dictionary, pd pprofile.Profiles) images {
	var im images
	proguardUUIDs := map[string]bool{}
	for _, m := range d.d.MappingTable().All() {
		var typ, debugID, uuid string
		d.attrsOf(m.AttributeIndices(), func(key string, v pcommon.Value) {
			switch key {
			case attrImageType:
				typ = v.AsString()
			case attrImageDebugID:
				debugID = v.AsString()
			case attrImageUUID:
				uuid = v.AsString()
			}
		})
		if typ == "proguard" && uuid != "" {
			proguardUUIDs[strings.ToLower(uuid)] = true
		}
		if typ == "sourcemap" && debugID != "" {
			if im.sourceMapDebugIDs == nil {
				im.sourceMapDebugIDs = map[string]string{}
			}
			im.sourceMapDebugIDs[d.str(m.FilenameStrindex())] = debugID
		}
	}
	switch {
	case len(proguardUUIDs) == 1:
		for u := range proguardUUIDs {
			im.proguardUUID = u
		}
	case len(proguardUUIDs) > 1:
		im.locationUUID = proguardUUIDsByLocation(d, pd)
	}
	return im
}

// proguardUUIDsByLocation assigns each location the ProGuard UUID of the
// profiles whose samples use it, from their sentry.debug_meta.images.
func proguardUUIDsByLocation(d *dictionary, pd pprofile.Profiles) map[int32]string {
	out := map[int32]string{}
	stacks := d.d.StackTable()
	for _, rp := range pd.ResourceProfiles().All() {
		for _, sp := range rp.ScopeProfiles().All() {
			for _, p := range sp.Profiles().All() {
				uuid := profileProguardUUID(d, p)
				if uuid == "" {
					continue
				}
				for _, sample := range p.Samples().All() {
					si := sample.StackIndex()
					if si <= 0 || int(si) >= stacks.Len() {
						continue
					}
					for _, li := range stacks.At(int(si)).LocationIndices().All() {
						if prev, seen := out[li]; seen && prev != uuid {
							out[li] = ""
							continue
						}
						out[li] = uuid
					}
				}
			}
		}
	}
	return out
}

// profileProguardUUID is the uuid of a profile's `proguard` debug image.
func profileProguardUUID(d *dictionary, p pprofile.Profile) string {
	uuid := ""
	d.attrsOf(p.AttributeIndices(), func(key string, v pcommon.Value) {
		if key != attrDebugImages || v.Type() != pcommon.ValueTypeSlice {
			return
		}
		for _, img := range v.Slice().All() {
			if img.Type() != pcommon.ValueTypeMap {
				continue
			}
			typ, _ := img.Map().Get("type")
			id, _ := img.Map().Get("uuid")
			if typ.AsString() == "proguard" && id.AsString() != "" {
				uuid = strings.ToLower(id.AsString())
			}
		}
	})
	return uuid
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

// targetsOf returns the kind of a location and what in it to resolve;
// nothing when no configured kind recognises it.
func (s *frameProcessor) targetsOf(dst []target, d *dictionary, im images, li int32, loc pprofile.Location) (symbolication.Kind, []target) {
	frameType, module, resolved := "", "", false
	d.attrsOf(loc.AttributeIndices(), func(key string, v pcommon.Value) {
		switch key {
		case string(semconv.ProfileFrameTypeKey):
			frameType = v.AsString()
		case attrFrameModule:
			module = v.AsString()
		case attrGeneratedFunction, attrGeneratedFile:
			// Resolved by an earlier symbolication: pass untouched.
			resolved = true
		}
	})
	if resolved {
		return "", dst[:0]
	}
	if _, ok := s.resolvers[symbolication.KindSourceMap]; ok && (frameType == "" || frameType == semconv.ProfileFrameTypeV8JS.Value.AsString()) {
		if t := jsTargets(dst, d, im, loc, frameType != ""); len(t) > 0 {
			return symbolication.KindSourceMap, t
		}
	}
	if _, ok := s.resolvers[symbolication.KindProGuard]; ok && frameType == semconv.ProfileFrameTypeJVM.Value.AsString() {
		uuid := im.proguardUUID
		if im.locationUUID != nil {
			uuid = im.locationUUID[li]
		}
		if t := jvmTargets(dst, d, uuid, loc, module); len(t) > 0 {
			return symbolication.KindProGuard, t
		}
	}
	if _, ok := s.resolvers[symbolication.KindNative]; ok {
		if t := nativeTargets(dst, d, loc); len(t) > 0 {
			return symbolication.KindNative, t
		}
	}
	return "", dst[:0]
}

// jvmTargets: the lines of a JVM location, each method with its class: the
// frame's module (Sentry's Android frames), else the name's part before
// its last dot (ART method traces name methods Class.method).
func jvmTargets(out []target, d *dictionary, uuid string, loc pprofile.Location, module string) []target {
	for j, line := range loc.Lines().All() {
		fn, ok := d.function(line.FunctionIndex())
		if !ok {
			continue
		}
		name := d.str(fn.NameStrindex())
		class, method := module, name
		if class == "" {
			i := strings.LastIndexByte(name, '.')
			if i <= 0 {
				continue
			}
			class, method = name[:i], name[i+1:]
		}
		if method == "" || line.Line() < 0 || line.Line() > 1<<31 {
			continue
		}
		out = append(out, target{line: j, name: name, in: symbolication.Lookup{
			DebugID: uuid,
			Frame:   symbolication.Frame{Function: method, Module: class, File: d.str(fn.FilenameStrindex()), Line: int(line.Line())},
		}})
	}
	return out
}

// nativeTargets: the address of a location that has no lines yet, in a
// mapping with a GNU build id (the eBPF profiler's, and the receiver's for
// Sentry's ELF images). The image's load address is the mapping's
// memory_start − file_offset, which makes the eBPF profiler's ELF file
// addresses and Sentry's absolute ones both offsets into the file.
func nativeTargets(out []target, d *dictionary, loc pprofile.Location) []target {
	mi := loc.MappingIndex()
	if loc.Lines().Len() > 0 || loc.Address() == 0 || mi <= 0 || int(mi) >= d.d.MappingTable().Len() {
		return nil
	}
	m := d.d.MappingTable().At(int(mi))
	buildID := ""
	d.attrsOf(m.AttributeIndices(), func(key string, v pcommon.Value) {
		if key == string(semconv.ProcessExecutableBuildIDGNUKey) {
			buildID = v.AsString()
		}
	})
	if buildID == "" {
		return nil
	}
	base := m.MemoryStart()
	if m.FileOffset() <= base {
		base -= m.FileOffset()
	}
	return append(out, target{line: -1, in: symbolication.Lookup{
		BuildID:   strings.ToLower(buildID),
		ImageAddr: base,
		Frame:     symbolication.Frame{Address: loc.Address(), File: d.str(m.FilenameStrindex())},
	}})
}

// jsTargets: the lines of a JavaScript location that have a file, a line
// and a column, the position a source map resolves. Without a frame type,
// only files named like JavaScript count.
func jsTargets(out []target, d *dictionary, im images, loc pprofile.Location, isJS bool) []target {
	for j, line := range loc.Lines().All() {
		fn, ok := d.function(line.FunctionIndex())
		if !ok || line.Line() <= 0 || line.Column() <= 0 || line.Line() > 1<<31 || line.Column() > 1<<31 {
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

// bundleFile says whether a frame's file can be a bundle with a source map:
// not V8's own scripts (node:internal/…, native), and, when the frame type
// does not say JavaScript, a .js, .mjs or .cjs file.
func bundleFile(file string, isJS bool) bool {
	if file == "" || strings.HasPrefix(file, "node:") || strings.HasPrefix(file, "<") || file == "native" {
		return false
	}
	if isJS {
		return true
	}
	switch path.Ext(strings.SplitN(file, "?", 2)[0]) {
	case ".js", ".mjs", ".cjs":
		return true
	}
	return false
}
