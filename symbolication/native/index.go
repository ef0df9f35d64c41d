package native

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	byID map[string]indexedFile
}

// newDebugIndex scans dirs. Unreadable entries are skipped; a directory
// that does not exist is an error (a configuration mistake).
func newDebugIndex(dirs []string) (*debugIndex, error) {
	idx := &debugIndex{dirs: dirs, byID: map[string]indexedFile{}}
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

// add indexes path if it is an ELF file with a build id, keeping the best
// file per id.
func (idx *debugIndex) add(path string) {
	id, q, err := inspectFile(path)
	if err != nil {
		return
	}
	if cur, ok := idx.byID[id]; !ok || q > cur.quality {
		idx.byID[id] = indexedFile{path: path, quality: q}
	}
}

// inspectFile reads an ELF file's build id and how much debug data it has.
func inspectFile(path string) (id string, q quality, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	var magic [4]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil || string(magic[:]) != elf.ELFMAG {
		return "", 0, errNotELF
	}
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

// candidates lists local files for id, best first, and whether the best
// has more than exported symbols (when it has not, a debuginfod server is
// worth asking before settling for it).
func (idx *debugIndex) candidates(id string) (paths []string, good bool) {
	for _, dir := range idx.dirs {
		p := filepath.Join(dir, ".build-id", id[:2], id[2:]+".debug")
		if isFile(p) {
			paths = append(paths, p)
		}
	}
	if f, ok := idx.byID[id]; ok && f.quality > qualityDynsym {
		paths = append(paths, f.path)
	}
	good = len(paths) > 0
	for _, dir := range idx.dirs {
		p := filepath.Join(dir, ".build-id", id[:2], id[2:]) // the binary itself
		if isFile(p) {
			paths = append(paths, p)
		}
	}
	if f, ok := idx.byID[id]; ok && f.quality == qualityDynsym {
		paths = append(paths, f.path)
	}
	return paths, good
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// errBuildIDMismatch: a file found for a build id carries another one.
var errBuildIDMismatch = errors.New("build id mismatch")

// checkBuildID verifies that the file at path has build id id.
func checkBuildID(path, id string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	got, err := buildIDOf(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if got != id {
		return fmt.Errorf("%s: %w: has %s, want %s", path, errBuildIDMismatch, got, id)
	}
	return nil
}
