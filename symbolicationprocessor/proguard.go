package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
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
type proguardResolver struct {
	dirs           []string
	maxBytes       int64
	rescanInterval time.Duration
	mappings       *symbolication.Cache[string, *proguard.Mapping]

	mu      sync.Mutex
	index   map[string]string // UUID → file
	scanned time.Time
}

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func newProguardResolver(dirs []string, cacheBytes, maxBytes int64, rescan time.Duration) (*proguardResolver, error) {
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("proguard directory %q is not a directory", d)
		}
	}
	return &proguardResolver{dirs: dirs, maxBytes: maxBytes, rescanInterval: rescan,
		mappings: symbolication.NewCache[string, *proguard.Mapping](cacheBytes).WithErrorTTL(max(rescan, time.Nanosecond))}, nil
}

// Resolve de-obfuscates one JVM frame: Frame.Module the obfuscated class,
// Frame.Function the method, Frame.Line the line; in.DebugID the mapping's
// UUID. The answer is innermost first when code was inlined.
func (r *proguardResolver) Resolve(_ context.Context, in symbolication.Lookup) ([]symbolication.Frame, error) {
	uuid := strings.ToLower(in.DebugID)
	if uuid == "" {
		return nil, fmt.Errorf("JVM frame %s.%s without a proguard uuid: %w", in.Frame.Module, in.Frame.Function, symbolication.ErrNoArtifact)
	}
	file, ok := r.lookup(uuid)
	if !ok {
		return nil, fmt.Errorf("proguard mapping %s: %w", uuid, symbolication.ErrNoArtifact)
	}
	m, err := r.mappings.Get(file, func() (*proguard.Mapping, int64, error) {
		f, err := os.Open(file)
		if err != nil {
			return nil, 0, err
		}
		defer f.Close()
		if st, err := f.Stat(); err != nil || st.Size() > r.maxBytes {
			return nil, 0, fmt.Errorf("%s: larger than the %d bytes allowed for an artifact, or unreadable (%v)", file, r.maxBytes, err)
		}
		m, err := proguard.Parse(f)
		if err != nil {
			return nil, 0, fmt.Errorf("parse %s: %w", file, err)
		}
		return m, m.Size(), nil
	})
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

// lookup finds the file of a UUID, scanning the directories again when it
// is unknown and the last scan is older than the rescan interval.
func (r *proguardResolver) lookup(uuid string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f, ok := r.index[uuid]; ok {
		return f, true
	}
	if r.index != nil && time.Since(r.scanned) < r.rescanInterval {
		return "", false
	}
	r.index, r.scanned = r.scan(), time.Now()
	f, ok := r.index[uuid]
	return f, ok
}

func (r *proguardResolver) scan() map[string]string {
	index := map[string]string{}
	for _, dir := range r.dirs {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			stem := strings.TrimSuffix(d.Name(), filepath.Ext(d.Name()))
			switch {
			case uuidPattern.MatchString(stem):
				index[strings.ToLower(stem)] = p
			case uuidPattern.MatchString(filepath.Base(filepath.Dir(p))):
				index[strings.ToLower(filepath.Base(filepath.Dir(p)))] = p
			}
			if strings.EqualFold(filepath.Ext(p), ".txt") {
				if b, err := readLimited(p, r.maxBytes); err == nil && bytes.Contains(b, []byte(" -> ")) {
					if _, taken := index[proguard.UUIDOf(b)]; !taken {
						index[proguard.UUIDOf(b)] = p
					}
				}
			}
			return nil
		})
	}
	return index
}

func readLimited(p string, maxBytes int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err == nil && int64(len(b)) > maxBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, maxBytes)
	}
	return b, err
}
