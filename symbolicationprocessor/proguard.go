package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/proguard"
)

// proguardResolver serves ProGuard/R8 mappings from directories, by the
// UUID a profile names them with (Sentry's Android SDK sends it as the uuid
// of its `proguard` debug image; the Gradle plugin stores the mapping
// under it). A mapping is found as <dir>/<uuid>.txt, <dir>/<uuid>/
// mapping.txt, or any .txt file whose content UUID (sentry-cli's UUID of an
// upload without --uuid) is the one asked for.
//
// The directories are indexed by background scans (symbolication.Scans):
// regular files only, links followed only within the directories, each
// file read at most maxBytes, and a file's content UUID read again only
// when its size or modification time changed.
type proguardResolver struct {
	roots    symbolication.Roots
	dirs     []string
	maxBytes int64
	mappings *symbolication.Cache[string, *proguard.Mapping]
	scans    *symbolication.Scans[map[string]string] // UUID → real path
	// contentUUIDs is what the last scan read; only a scan (one at a
	// time) uses it.
	contentUUIDs map[fileStamp]string
}

// fileStamp identifies one version of a file.
type fileStamp struct {
	path  string
	size  int64
	mtime time.Time
}

// maxScannedMappings bounds the files of one scan of the proguard
// directories.
const maxScannedMappings = 200_000

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func newProguardResolver(dirs []string, cacheBytes, maxBytes int64, rescan time.Duration) (*proguardResolver, error) {
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("proguard directory %q is not a directory", d)
		}
	}
	roots, err := symbolication.NewRoots(dirs)
	if err != nil {
		return nil, fmt.Errorf("proguard directories: %w", err)
	}
	r := &proguardResolver{roots: roots, dirs: dirs, maxBytes: maxBytes, contentUUIDs: map[fileStamp]string{},
		mappings: symbolication.NewCache[string, *proguard.Mapping](cacheBytes).WithErrorTTL(max(rescan, time.Nanosecond))}
	r.scans = symbolication.NewScans("proguard directories", rescan, r.scan)
	r.scans.Start()
	return r, nil
}

func (r *proguardResolver) close() { r.scans.Close() }

// Resolve de-obfuscates one JVM frame: Frame.Module the obfuscated class,
// Frame.Function the method, Frame.Line the line; in.DebugID the mapping's
// UUID. The answer is innermost first when code was inlined.
func (r *proguardResolver) Resolve(ctx context.Context, in symbolication.Lookup) ([]symbolication.Frame, error) {
	uuid := strings.ToLower(in.DebugID)
	if uuid == "" {
		return nil, fmt.Errorf("JVM frame %s.%s without a proguard uuid: %w", in.Frame.Module, in.Frame.Function, symbolication.ErrNoArtifact)
	}
	file, err := r.lookup(ctx, uuid)
	if err != nil {
		return nil, err
	}
	m, err := r.mappings.Get(file, func() (*proguard.Mapping, int64, error) { return r.load(file) })
	if err != nil {
		return nil, err
	}
	remapped := m.Remap(in.Frame.Module, in.Frame.Function, in.Frame.Line)
	if len(remapped) == 0 {
		return nil, fmt.Errorf("class %s in mapping %s: %w", in.Frame.Module, uuid, symbolication.ErrNoMatch)
	}
	out := make([]symbolication.Frame, len(remapped))
	for i, f := range remapped {
		out[i] = symbolication.Frame{Function: f.Method, Module: f.Class, File: f.File, Line: f.Line, Inlined: i < len(remapped)-1}
	}
	return out, nil
}

// load parses a mapping file, a regular file of at most maxBytes (checked
// before reading, and the read stops there should it grow).
func (r *proguardResolver) load(file string) (*proguard.Mapping, int64, error) {
	f, _, err := symbolication.OpenRegular(file, r.maxBytes)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	m, err := proguard.Parse(io.LimitReader(f, r.maxBytes))
	if err != nil {
		return nil, 0, fmt.Errorf("parse %s: %w", file, err)
	}
	return m, m.Size(), nil
}

// lookup finds the file of a UUID, scanning the directories again when it
// is unknown and the last scan is older than the rescan interval.
func (r *proguardResolver) lookup(ctx context.Context, uuid string) (string, error) {
	index, err := r.scans.Get(ctx, false)
	if err != nil {
		return "", err
	}
	if f, ok := index[uuid]; ok {
		return f, nil
	}
	if index, err = r.scans.Get(ctx, true); err == nil {
		if f, ok := index[uuid]; ok {
			return f, nil
		}
	}
	return "", fmt.Errorf("proguard mapping %s: %w", uuid, symbolication.ErrNoArtifact)
}

// scan indexes the directories: files named by a UUID (or in a directory
// named by one) and .txt mappings by their content UUID.
func (r *proguardResolver) scan(ctx context.Context) map[string]string {
	index := map[string]string{}
	seen := map[fileStamp]string{}
	left := maxScannedMappings
	for _, dir := range r.dirs {
		n := 0
		complete := r.roots.Walk(ctx, dir, left, func(real, rel string) {
			n++
			r.indexFile(index, seen, real, rel)
		})
		if !complete {
			break
		}
		left -= n
	}
	r.contentUUIDs = seen
	return index
}

// indexFile adds one regular file to the index.
func (r *proguardResolver) indexFile(index map[string]string, seen map[fileStamp]string, real, rel string) {
	name := path.Base(rel)
	stem := strings.TrimSuffix(name, path.Ext(name))
	switch parent := path.Base(path.Dir(rel)); {
	case uuidPattern.MatchString(stem):
		index[strings.ToLower(stem)] = real
	case uuidPattern.MatchString(parent):
		index[strings.ToLower(parent)] = real
	}
	if !strings.EqualFold(path.Ext(name), ".txt") {
		return
	}
	st, err := os.Stat(real)
	if err != nil {
		return
	}
	stamp := fileStamp{path: real, size: st.Size(), mtime: st.ModTime()}
	id, ok := r.contentUUIDs[stamp]
	if !ok {
		b, err := symbolication.ReadRegular(real, r.maxBytes)
		if err != nil {
			return
		}
		if bytes.Contains(b, []byte(" -> ")) {
			id = proguard.UUIDOf(b)
		}
	}
	seen[stamp] = id
	if _, taken := index[id]; id != "" && !taken {
		index[id] = real
	}
}
