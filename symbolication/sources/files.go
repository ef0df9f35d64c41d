package sources

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrNotRegular is returned (wrapped) for a path that is not a regular
// file: a directory, a device, a socket or a FIFO, which would block a
// reader until some writer opens it.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned (wrapped) for a file above the size bound of its
// reader.
var ErrTooLarge = errors.New("larger than allowed")

// ErrOutsideRoots is returned (wrapped) for a path whose real location,
// symbolic links followed, is outside the configured directories.
var ErrOutsideRoots = errors.New("outside the configured directories")

// OpenRegular opens a file for reading only when it is a regular file of
// at most maxBytes (no bound when maxBytes <= 0). The open does not block
// on a FIFO (O_NONBLOCK, which changes nothing for reads of regular
// files), and the type and size are checked on the opened file, so that a
// file swapped after a directory walk is caught too.
func OpenRegular(path string, maxBytes int64) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err == nil {
		err = checkRegular(path, st, maxBytes)
	}
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// checkRegular checks an opened file's type and size.
func checkRegular(path string, st os.FileInfo, maxBytes int64) error {
	switch {
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, st.Mode().Type())
	case maxBytes > 0 && st.Size() > maxBytes:
		return fmt.Errorf("%s: %d bytes, %w (%d bytes)", path, st.Size(), ErrTooLarge, maxBytes)
	}
	return nil
}

// ReadRegular reads a whole regular file of at most maxBytes. The size is
// checked before reading, and the read stops at the bound when the file
// grows meanwhile.
func ReadRegular(path string, maxBytes int64) ([]byte, error) {
	f, size, err := OpenRegular(path, maxBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limit := maxBytes
	if limit <= 0 {
		limit = size
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(size, limit)+1))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(buf.Len()) > limit {
		return nil, fmt.Errorf("%s: grew while read, %w (%d bytes)", path, ErrTooLarge, limit)
	}
	return buf.Bytes(), nil
}

// CheckDirectories checks that each configured directory of a kind (what
// names it in the error) exists and is a directory: a missing one is a
// configuration mistake, reported at start.
func CheckDirectories(what string, dirs []string) error {
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return fmt.Errorf("%s directory %q is not a directory", what, d)
		}
	}
	return nil
}

// Roots are configured directories by their real paths (symbolic links
// resolved), so that a file can be checked to stay below one of them
// whatever links lead to it.
type Roots struct {
	real []string
}

// NewRoots resolves dirs. A directory that cannot be resolved is an error.
func NewRoots(dirs []string) (Roots, error) {
	r := Roots{real: make([]string, 0, len(dirs))}
	for _, d := range dirs {
		p, err := filepath.EvalSymlinks(d)
		if err != nil {
			return Roots{}, fmt.Errorf("directory %q: %w", d, err)
		}
		if p, err = filepath.Abs(p); err != nil {
			return Roots{}, fmt.Errorf("directory %q: %w", d, err)
		}
		r.real = append(r.real, p)
	}
	return r, nil
}

// Resolve returns the real path of p, and an error wrapping
// ErrOutsideRoots when that is not below one of the roots (a link that
// leads out of them), or the error of resolving it.
func (r Roots) Resolve(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if real, err = filepath.Abs(real); err != nil {
		return "", err
	}
	if !r.Contains(real) {
		return "", fmt.Errorf("%s resolves to %s: %w", p, real, ErrOutsideRoots)
	}
	return real, nil
}

// Contains reports whether the real path p is one of the roots or below
// one.
func (r Roots) Contains(p string) bool {
	for _, root := range r.real {
		if Within(root, p) {
			return true
		}
	}
	return false
}

// Within reports whether p is root or below it, lexically: both must
// already be cleaned real paths for this to mean anything on disk.
func Within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Walk calls fn with the real path and the slash path relative to dir of
// every regular file under dir, a configured directory. Symbolic links,
// to files or directories, are followed when their real path is within
// the roots, and a directory is not entered again below itself (a link
// loop). FIFOs, sockets and devices are skipped, never opened. The walk
// stops when ctx ends or after maxFiles files, and then returns false.
func (r Roots) Walk(ctx context.Context, dir string, maxFiles int, fn func(real, rel string)) bool {
	return r.WalkSkipping(ctx, dir, maxFiles, "", fn)
}

// WalkSkipping is Walk without entering the directories named skipDir
// (a layout looked up by path, such as .build-id).
func (r Roots) WalkSkipping(ctx context.Context, dir string, maxFiles int, skipDir string, fn func(real, rel string)) bool {
	real, err := r.Resolve(dir)
	if err != nil {
		return true // gone since the start: nothing in it
	}
	w := rootsWalk{roots: r, ctx: ctx, left: maxFiles, skipDir: skipDir, fn: fn}
	w.dir(real, "", map[string]bool{real: true})
	return w.left >= 0 && ctx.Err() == nil
}

type rootsWalk struct {
	roots   Roots
	ctx     context.Context
	left    int
	skipDir string
	fn      func(real, rel string)
}

// dir walks the directory at real path dir, whose files are rel/… to the
// caller. chain holds the real directories from the root down to dir.
func (w *rootsWalk) dir(dir, rel string, chain map[string]bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // an unreadable directory is skipped
	}
	for _, e := range entries {
		if w.ctx.Err() != nil || w.left < 0 {
			return
		}
		w.entry(filepath.Join(dir, e.Name()), path.Join(rel, e.Name()), e, chain)
	}
}

// entry visits one directory entry: a file is handed to fn, a directory
// walked unless it is on the chain (a link loop) or skipped.
func (w *rootsWalk) entry(p, name string, e os.DirEntry, chain map[string]bool) {
	p, typ, ok := w.target(p, e.Type())
	switch {
	case !ok:
	case typ.IsDir():
		w.subdir(p, name, e.Name(), chain)
	case typ.IsRegular():
		if w.left--; w.left >= 0 {
			w.fn(p, name)
		}
	}
}

// subdir walks a directory unless it is already on the chain (a link
// loop) or is skipped.
func (w *rootsWalk) subdir(p, name, base string, chain map[string]bool) {
	if chain[p] || base == w.skipDir {
		return
	}
	chain[p] = true
	w.dir(p, name, chain)
	delete(chain, p)
}

// target follows a symbolic link to its real path and type when it stays
// within the roots; false for a dangling link or one leading out.
func (w *rootsWalk) target(p string, typ os.FileMode) (string, os.FileMode, bool) {
	if typ&os.ModeSymlink == 0 {
		return p, typ, true
	}
	real, err := w.roots.Resolve(p)
	if err != nil {
		return "", 0, false
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", 0, false
	}
	return real, st.Mode().Type(), true
}
