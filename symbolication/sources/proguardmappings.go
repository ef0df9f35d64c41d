package sources

import (
	"context"
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
)

// ProGuardMappings finds ProGuard/R8 mapping files in directories by the
// UUID a profile or an event names them with (Sentry's Android SDK sends
// it as the uuid of its `proguard` debug image; the Gradle plugin stores
// the mapping under it): <dir>/<uuid>.txt, <dir>/<uuid>/mapping.txt, or
// any .txt file whose content UUID (sentry-cli's UUID of an upload
// without --uuid) is the one asked for.
//
// The directories are indexed by background scans (Scans, rescanned on a
// miss by Find): regular files only, links followed only within the
// directories, each file read at most maxBytes, and a file's content UUID
// read again only when its size or modification time changed.
type ProGuardMappings struct {
	roots    Roots
	dirs     []string
	maxBytes int64
	// contentUUID is the kind's content UUID of a file, "" for one that
	// is not a mapping.
	contentUUID func(content []byte) string
	scans       *Scans[map[string]string] // UUID → real path
	// contentUUIDs is what the last scan read; only a scan (one at a
	// time) uses it.
	contentUUIDs map[mappingStamp]string
}

// mappingStamp identifies one version of a file.
type mappingStamp struct {
	path  string
	size  int64
	mtime time.Time
}

// maxScannedMappings bounds the files of one scan of the directories.
const maxScannedMappings = 200_000

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// NewProGuardMappings checks the directories and starts their first scan,
// without waiting for it. contentUUID gives a file's content UUID ("" for
// a file that is not a mapping).
func NewProGuardMappings(dirs []string, maxBytes int64, rescan time.Duration, contentUUID func([]byte) string) (*ProGuardMappings, error) {
	if err := CheckDirectories("proguard", dirs); err != nil {
		return nil, err
	}
	roots, err := NewRoots(dirs)
	if err != nil {
		return nil, fmt.Errorf("proguard directories: %w", err)
	}
	p := &ProGuardMappings{roots: roots, dirs: dirs, maxBytes: maxBytes, contentUUID: contentUUID, contentUUIDs: map[mappingStamp]string{}}
	p.scans = NewScans("proguard directories", rescan, p.scan)
	p.scans.Start()
	return p, nil
}

// Close stops a scan under way; no scan starts afterwards.
func (p *ProGuardMappings) Close() { p.scans.Close() }

// Locate finds the file of a mapping by its UUID (lower case), scanning
// the directories again when it is unknown and the last scan is older
// than the rescan interval. The error wraps symbolication.ErrNoArtifact
// when no file has it, ErrPending when the first scan did not end while
// ctx allowed.
func (p *ProGuardMappings) Locate(ctx context.Context, uuid string) (string, error) {
	file, ok, err := Find(ctx, p.scans, func(index map[string]string) (string, bool) {
		f, ok := index[uuid]
		return f, ok
	})
	switch {
	case err != nil:
		return "", err
	case !ok:
		return "", fmt.Errorf("proguard mapping %s: %w", uuid, symbolication.ErrNoArtifact)
	}
	return file, nil
}

// scan indexes the directories: files named by a UUID (or in a directory
// named by one) and .txt mappings by their content UUID.
func (p *ProGuardMappings) scan(ctx context.Context) map[string]string {
	index := map[string]string{}
	seen := map[mappingStamp]string{}
	left := maxScannedMappings
	for _, dir := range p.dirs {
		n := 0
		complete := p.roots.Walk(ctx, dir, left, func(real, rel string) {
			n++
			p.indexFile(index, seen, real, rel)
		})
		if !complete {
			break
		}
		left -= n
	}
	p.contentUUIDs = seen
	return index
}

// indexFile adds one regular file to the index: by the UUID its name (or
// its directory's) is, and by its content UUID when it is a .txt mapping.
func (p *ProGuardMappings) indexFile(index map[string]string, seen map[mappingStamp]string, real, rel string) {
	if id := nameUUID(rel); id != "" {
		index[id] = real
	}
	if !strings.EqualFold(path.Ext(rel), ".txt") {
		return
	}
	id, ok := p.readContentUUID(seen, real)
	if _, taken := index[id]; ok && id != "" && !taken {
		index[id] = real
	}
}

// nameUUID is the UUID a file is named by: <uuid>.txt, <uuid>/mapping.txt;
// "" for another name.
func nameUUID(rel string) string {
	name := path.Base(rel)
	stem := strings.TrimSuffix(name, path.Ext(name))
	switch parent := path.Base(path.Dir(rel)); {
	case uuidPattern.MatchString(stem):
		return strings.ToLower(stem)
	case uuidPattern.MatchString(parent):
		return strings.ToLower(parent)
	}
	return ""
}

// readContentUUID is the content UUID of a mapping file ("" for a file
// that is not a mapping), read again only when the file changed since the
// last scan; seen records it for the next. False when it cannot be read.
func (p *ProGuardMappings) readContentUUID(seen map[mappingStamp]string, real string) (string, bool) {
	st, err := os.Stat(real)
	if err != nil {
		return "", false
	}
	stamp := mappingStamp{path: real, size: st.Size(), mtime: st.ModTime()}
	id, ok := p.contentUUIDs[stamp]
	if !ok {
		b, err := ReadRegular(real, p.maxBytes)
		if err != nil {
			return "", false
		}
		id = p.contentUUID(b)
	}
	seen[stamp] = id
	return id, true
}
