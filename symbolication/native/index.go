package native

import (
	"debug/elf"
	"debug/macho"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sources"
)

// imageInfo is one image of a file: its id and how much debug data it has.
type imageInfo struct {
	id      string
	quality sources.Quality
}

// inspectImages is the sources.Inspector of native debug files.
func inspectImages(path string, maxBytes int64) ([]sources.ImageID, error) {
	found, err := inspectFile(path, maxBytes)
	if err != nil {
		return nil, err
	}
	out := make([]sources.ImageID, len(found))
	for i, f := range found {
		out[i] = sources.ImageID{ID: f.id, Quality: f.quality}
	}
	return out, nil
}

// inspectFile reads the ids of a file's images (one for ELF, one per
// architecture for a universal Mach-O file) and their debug data.
func inspectFile(path string, maxBytes int64) ([]imageInfo, error) {
	f, _, err := sources.OpenRegular(path, maxBytes)
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
		return inspectELF(f)
	case isMachO(magic):
		return inspectMachO(f)
	}
	return nil, errNotELF
}

func inspectELF(f *os.File) (out []imageInfo, err error) {
	id, err := buildIDOf(f)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("malformed ELF: %v", p)
		}
	}()
	ef, err := elf.NewFile(f)
	if err != nil {
		return nil, err
	}
	return []imageInfo{{id: id, quality: elfQuality(ef)}}, nil
}

// elfQuality is what debug data an ELF file has.
func elfQuality(ef *elf.File) sources.Quality {
	switch {
	case hasDWARF(ef):
		return sources.QualityDWARF
	case ef.Section(".symtab") != nil:
		return sources.QualitySymtab
	}
	return sources.QualityDynsym
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
		if id := machoUUID(mf); id != "" {
			out = append(out, imageInfo{id: id, quality: machoQuality(mf)})
		}
	}
	if len(out) == 0 {
		return nil, errNoImageID
	}
	return out, nil
}

// machoQuality is what debug data a Mach-O image has.
func machoQuality(mf *macho.File) sources.Quality {
	switch {
	case machoHasDWARF(mf):
		return sources.QualityDWARF
	case mf.Symtab != nil && len(mf.Symtab.Syms) > 0:
		return sources.QualitySymtab
	}
	return sources.QualityDynsym
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
