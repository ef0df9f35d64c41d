package native

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
)

// maxScannedFiles bounds the scan of the debug directories: a directory
// configured by mistake (a whole file system) must not stall start-up.
const maxScannedFiles = 200_000

// quality ranks files with one build id: the most useful one is loaded.
type quality int

const (
	qualityDynsym quality = iota // stripped: exported symbols only
	qualitySymtab                // full symbol table
	qualityDWARF                 // DWARF lines and inlining
)

type indexedFile struct {
	path    string
	quality quality
}

// debugIndex finds local files by build id: the `.build-id/xx/rest.debug`
// layout of gdb, debuginfod and Debian's -dbgsym packages, looked up by
// path on each miss, and every other ELF file under the directories,
// indexed by build id once at start.
type debugIndex struct {
	dirs []string
	// maxFileBytes bounds a file opened (0: no bound).
	maxFileBytes int64
	byID         map[string]indexedFile
}

// newDebugIndex scans dirs. Unreadable entries are skipped; a directory
// that does not exist is an error (a configuration mistake). Only regular
// files are opened: the scan follows no link, and a FIFO or device is
// never read.
func newDebugIndex(dirs []string, maxFileBytes int64) (*debugIndex, error) {
	idx := &debugIndex{dirs: dirs, maxFileBytes: maxFileBytes, byID: map[string]indexedFile{}}
	scanned := 0
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("debug directory: %w", err)
		} else if !st.IsDir() {
			return nil, fmt.Errorf("debug directory %s: not a directory", dir)
		}
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return nil //nolint:nilerr // an unreadable entry is skipped, not fatal
			case d.IsDir() && d.Name() == ".build-id":
				return fs.SkipDir // looked up by path
			case !d.Type().IsRegular():
				return nil
			}
			if scanned++; scanned > maxScannedFiles {
				return fmt.Errorf("more than %d files under the debug directories", maxScannedFiles)
			}
			idx.add(path)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("scanning %s: %w", dir, err)
		}
	}
	return idx, nil
}

// add indexes path if it is an ELF or Mach-O file with a build id or
// UUID, keeping the best file per id.
func (idx *debugIndex) add(path string) {
	found, err := inspectFile(path, idx.maxFileBytes)
	if err != nil {
		return
	}
	for _, f := range found {
		if cur, ok := idx.byID[f.id]; !ok || f.quality > cur.quality {
			idx.byID[f.id] = indexedFile{path: path, quality: f.quality}
		}
	}
}

// imageInfo is one image of a file: its id and how much debug data it has.
type imageInfo struct {
	id      string
	quality quality
}

// inspectFile reads the ids of a file's images (one for ELF, one per
// architecture for a universal Mach-O file) and their debug data.
func inspectFile(path string, maxBytes int64) ([]imageInfo, error) {
	f, _, err := symbolication.OpenRegular(path, maxBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var magic [4]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil {
		return nil, errNotELF
	}
	switch {
	case string(magic[:]) == elf.ELFMAG:
		id, q, err := inspectELF(f)
		if err != nil {
			return nil, err
		}
		return []imageInfo{{id: id, quality: q}}, nil
	case isMachO(magic):
		return inspectMachO(f)
	}
	return nil, errNotELF
}

func inspectELF(f *os.File) (id string, q quality, err error) {
	if id, err = buildIDOf(f); err != nil {
		return "", 0, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("malformed ELF: %v", p)
		}
	}()
	ef, err := elf.NewFile(f)
	if err != nil {
		return "", 0, err
	}
	switch {
	case hasDWARF(ef):
		q = qualityDWARF
	case ef.Section(".symtab") != nil:
		q = qualitySymtab
	}
	return id, q, nil
}

func inspectMachO(f *os.File) (out []imageInfo, err error) {
	files, err := machoFiles(f)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("malformed Mach-O: %v", p)
		}
	}()
	for _, mf := range files {
		id := machoUUID(mf)
		if id == "" {
			continue
		}
		q := qualityDynsym
		switch {
		case machoHasDWARF(mf):
			q = qualityDWARF
		case mf.Symtab != nil && len(mf.Symtab.Syms) > 0:
			q = qualitySymtab
		}
		out = append(out, imageInfo{id: id, quality: q})
	}
	if len(out) == 0 {
		return nil, errNoImageID
	}
	return out, nil
}

// candidates lists local files for id, best first, and whether the best
// has more than exported symbols (when it has not, a debuginfod server is
// worth asking before settling for it).
//
// A `.build-id` entry is usually a link, and the layout's links lead out
// of the directory by design (Fedora's /usr/lib/debug/.build-id/xx/rest
// is a link to the binary in /usr/bin): they are followed wherever they
// lead, to a regular file only. That reaches no file an operator did not
// link: a frame names a build id, hex, never a path, and a file is used
// only when it carries the build id asked for (checkBuildID).
func (idx *debugIndex) candidates(id string) (paths []string, good bool) {
	for _, dir := range idx.dirs {
		p := filepath.Join(dir, ".build-id", id[:2], id[2:]+".debug")
		if idx.isFile(p) {
			paths = append(paths, p)
		}
	}
	if f, ok := idx.byID[id]; ok && f.quality > qualityDynsym {
		paths = append(paths, f.path)
	}
	good = len(paths) > 0
	for _, dir := range idx.dirs {
		p := filepath.Join(dir, ".build-id", id[:2], id[2:]) // the binary itself
		if idx.isFile(p) {
			paths = append(paths, p)
		}
	}
	if f, ok := idx.byID[id]; ok && f.quality == qualityDynsym {
		paths = append(paths, f.path)
	}
	return paths, good
}

// hasGood reports whether a local file with more than exported symbols
// has id: no server needs asking.
func (idx *debugIndex) hasGood(id string) bool {
	_, good := idx.candidates(id)
	return good
}

// isFile reports whether path is, or links to, a regular file.
func (idx *debugIndex) isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// errBuildIDMismatch: a file found for a build id carries another one.
var errBuildIDMismatch = errors.New("build id mismatch")

// checkBuildID verifies that the file at path has an image with id.
func checkBuildID(path, id string, maxBytes int64) error {
	found, err := inspectFile(path, maxBytes)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var ids []string
	for _, f := range found {
		if f.id == id {
			return nil
		}
		ids = append(ids, f.id)
	}
	return fmt.Errorf("%s: %w: has %s, want %s", path, errBuildIDMismatch, strings.Join(ids, ", "), id)
}
