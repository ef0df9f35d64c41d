package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"path"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
)

// Where the sentryprofile receiver puts what identifies an artifact
// (translator/README.md): debug_meta images become Mappings whose filename
// is the image's code_file, with these attributes.
const (
	attrImageType    = "sentry.image.type"
	attrImageDebugID = "sentry.image.debug_id"
)

// images are the artifact identifiers the batch's Mappings carry.
type images struct {
	// sourceMapDebugIDs maps a bundle's URL or path (a `sourcemap` debug
	// image's code_file, which is the abs_path of its frames) to the debug
	// id of its source map.
	sourceMapDebugIDs map[string]string
}

func readImages(d *dictionary) images {
	var im images
	for _, m := range d.d.MappingTable().All() {
		var typ, debugID string
		d.attrsOf(m.AttributeIndices(), func(key string, v pcommon.Value) {
			switch key {
			case attrImageType:
				typ = v.AsString()
			case attrImageDebugID:
				debugID = v.AsString()
			}
		})
		if typ == "sourcemap" && debugID != "" {
			if im.sourceMapDebugIDs == nil {
				im.sourceMapDebugIDs = map[string]string{}
			}
			im.sourceMapDebugIDs[d.str(m.FilenameStrindex())] = debugID
		}
	}
	return im
}

// target is one frame of a location to resolve: a line of it, or its
// address (line -1).
type target struct {
	line int
	in   symbolication.Lookup
}

// targetsOf returns the kind of a location and what in it to resolve;
// nothing when no configured kind recognises it.
func (s *symbolicator) targetsOf(d *dictionary, im images, loc pprofile.Location) (symbolication.Kind, []target) {
	frameType, resolved := "", false
	d.attrsOf(loc.AttributeIndices(), func(key string, v pcommon.Value) {
		switch key {
		case string(semconv.ProfileFrameTypeKey):
			frameType = v.AsString()
		case attrGeneratedFunction, attrGeneratedFile:
			// Resolved by an earlier symbolication: pass untouched.
			resolved = true
		}
	})
	if resolved {
		return "", nil
	}
	if _, ok := s.resolvers[symbolication.KindSourceMap]; ok && (frameType == "" || frameType == semconv.ProfileFrameTypeV8JS.Value.AsString()) {
		if t := jsTargets(d, im, loc, frameType != ""); len(t) > 0 {
			return symbolication.KindSourceMap, t
		}
	}
	return "", nil
}

// jsTargets: the lines of a JavaScript location that have a file, a line
// and a column, the position a source map resolves. Without a frame type,
// only files named like JavaScript count.
func jsTargets(d *dictionary, im images, loc pprofile.Location, isJS bool) []target {
	var out []target
	for j, line := range loc.Lines().All() {
		fn, ok := d.function(line.FunctionIndex())
		if !ok || line.Line() <= 0 || line.Column() <= 0 || line.Line() > 1<<31 || line.Column() > 1<<31 {
			continue
		}
		file := d.str(fn.FilenameStrindex())
		if !bundleFile(file, isJS) {
			continue
		}
		out = append(out, target{line: j, in: symbolication.Lookup{
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
