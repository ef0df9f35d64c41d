package sources

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Quality ranks the files that carry one build id: the most useful one is
// loaded.
type Quality int

// The qualities of a debug file, worst first.
const (
	// QualityDynsym: a stripped file, exported symbols only.
	QualityDynsym Quality = iota
	// QualitySymtab: a full symbol table.
	QualitySymtab
	// QualityDWARF: DWARF lines and inlining.
	QualityDWARF
)

// ImageID is one image of a debug file: its build id (lower-case hex) and
// what debug data it has.
type ImageID struct {
	ID      string
	Quality Quality
}

// Inspector reads the images of a file of at most maxBytes: the native
// kind's parser knows the formats (ELF, Mach-O).
type Inspector func(path string, maxBytes int64) ([]ImageID, error)

// MaxScannedDebugFiles bounds one scan of the debug directories: a
// directory configured by mistake (a whole file system) must not stall or
// grow the index without bound. The files past it are left out.
const MaxScannedDebugFiles = 200_000

// DebugFilesOptions configure DebugFiles.
type DebugFilesOptions struct {
	// Dirs are searched by build id: the `.build-id/xx/rest.debug` layout
	// by path, every other file by a scan.
	Dirs []string
	// MaxFileBytes bounds a file inspected (0: no bound).
	MaxFileBytes int64
	// RescanInterval is the least time between two scans, made when a
	// build id is in no file the last scan saw.
	RescanInterval time.Duration
	// Inspect reads a file's images.
	Inspect Inspector
}

// DebugFiles finds the local debug files of native images by build id:
// the `.build-id/xx/rest.debug` layout of gdb, debuginfod and Debian's
// -dbgsym packages, looked up by path on every call, and every other
// ELF or Mach-O file under the directories, indexed by a background scan
// that runs again when a build id is in neither (at most once per
// RescanInterval): a debug file deployed while the collector runs is
// found.
type DebugFiles struct {
	dirs         []string
	roots        Roots
	maxFileBytes int64
	inspect      Inspector
	scans        *Scans[map[string]indexedDebugFile]
}

type indexedDebugFile struct {
	path    string
	quality Quality
}

// NewDebugFiles checks that the directories exist and starts their first
// scan, without waiting for it.
func NewDebugFiles(opts DebugFilesOptions) (*DebugFiles, error) {
	if err := CheckDirectories("debug", opts.Dirs); err != nil {
		return nil, err
	}
	roots, err := NewRoots(opts.Dirs)
	if err != nil {
		return nil, fmt.Errorf("debug directories: %w", err)
	}
	d := &DebugFiles{dirs: opts.Dirs, roots: roots, maxFileBytes: opts.MaxFileBytes, inspect: opts.Inspect}
	d.scans = NewScans("debug directories", opts.RescanInterval, d.scan)
	d.scans.Start()
	return d, nil
}

// Close stops a scan under way.
func (d *DebugFiles) Close() { d.scans.Close() }

// scan indexes the files under the directories by the build ids of their
// images, keeping the best file per id. The .build-id trees are not
// walked: they are looked up by path.
func (d *DebugFiles) scan(ctx context.Context) map[string]indexedDebugFile {
	byID := map[string]indexedDebugFile{}
	left := MaxScannedDebugFiles
	for _, dir := range d.dirs {
		n := 0
		complete := d.roots.WalkSkipping(ctx, dir, left, ".build-id", func(real, _ string) {
			n++
			d.add(byID, real)
		})
		if !complete {
			break
		}
		left -= n
	}
	return byID
}

// add indexes one file if it has images with ids.
func (d *DebugFiles) add(byID map[string]indexedDebugFile, path string) {
	found, err := d.inspect(path, d.maxFileBytes)
	if err != nil {
		return
	}
	for _, f := range found {
		if cur, ok := byID[f.ID]; !ok || f.Quality > cur.quality {
			byID[f.ID] = indexedDebugFile{path: path, quality: f.Quality}
		}
	}
}

// Candidates lists the local files for id (lower-case hex), best first,
// and whether the best has more than exported symbols (when it has not, a
// debuginfod server is worth asking before settling for it). The scan is
// waited for while ctx allows; an error wraps symbolication.ErrPending
// when the first scan is not done by then.
//
// A `.build-id` entry is usually a link, and the layout's links lead out
// of the directory by design (Fedora's /usr/lib/debug/.build-id/xx/rest
// is a link to the binary in /usr/bin): they are followed wherever they
// lead, to a regular file only. That reaches no file an operator did not
// link: a frame names a build id, hex, never a path, and the kind uses a
// file only when it carries the build id asked for.
func (d *DebugFiles) Candidates(ctx context.Context, id string) (paths []string, good bool, err error) {
	layoutDebug, layoutBinary := d.layout(id, ".debug"), d.layout(id, "")
	scanned, err := d.scanned(ctx, id, len(layoutDebug)+len(layoutBinary) == 0)
	if err != nil {
		return nil, false, err
	}
	paths = layoutDebug
	if scanned.path != "" && scanned.quality > QualityDynsym {
		paths = append(paths, scanned.path)
	}
	good = len(paths) > 0
	paths = append(paths, layoutBinary...)
	if scanned.path != "" && scanned.quality == QualityDynsym {
		paths = append(paths, scanned.path)
	}
	return paths, good, nil
}

// HasGood reports whether a local file with more than exported symbols
// has id, from what is known now (no wait): no server needs asking.
func (d *DebugFiles) HasGood(id string) bool {
	if len(d.layout(id, ".debug")) > 0 {
		return true
	}
	idx, ok := d.scans.Current()
	return ok && idx[id].quality > QualityDynsym
}

// scanned is the indexed file of id; when rescan is set (the layout has
// nothing for id) a miss scans again, at most once per interval.
func (d *DebugFiles) scanned(ctx context.Context, id string, rescan bool) (indexedDebugFile, error) {
	lookup := func(idx map[string]indexedDebugFile) (indexedDebugFile, bool) {
		f, ok := idx[id]
		return f, ok
	}
	if rescan {
		f, _, err := Find(ctx, d.scans, lookup)
		return f, err
	}
	idx, err := d.scans.Get(ctx, false)
	return idx[id], err
}

// layout returns the files of id in the directories' .build-id trees:
// xx/rest.debug for suffix ".debug", the binary itself (xx/rest) for "".
func (d *DebugFiles) layout(id, suffix string) []string {
	var out []string
	for _, dir := range d.dirs {
		p := filepath.Join(dir, ".build-id", id[:2], id[2:]+suffix)
		if isFile(p) {
			out = append(out, p)
		}
	}
	return out
}

// isFile reports whether path is, or links to, a regular file.
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
