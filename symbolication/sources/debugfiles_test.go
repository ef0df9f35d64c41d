package sources

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// textInspector reads test "debug files" whose content is
// "<build id> <quality>": the sources layer only needs the ids.
func textInspector(path string, maxBytes int64) ([]ImageID, error) {
	b, err := ReadRegular(path, maxBytes)
	if err != nil {
		return nil, err
	}
	id, q, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
	if !ok {
		return nil, errors.New("not a debug file")
	}
	n, err := strconv.Atoi(q)
	if err != nil {
		return nil, err
	}
	return []ImageID{{ID: id, Quality: Quality(n)}}, nil
}

func writeDebugFile(t *testing.T, path, id string, q Quality) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(id+" "+strconv.Itoa(int(q))), 0o644))
	return path
}

const testID = "abcdef0123456789"

func TestDebugFilesCandidates(t *testing.T) {
	tests := []struct {
		name     string
		files    func(t *testing.T, dir string) []string // the wanted candidates, best first
		wantGood bool
	}{
		{name: "nothing", files: func(*testing.T, string) []string { return nil }},
		{name: "layout debug file", wantGood: true, files: func(t *testing.T, dir string) []string {
			return []string{writeDebugFile(t, filepath.Join(dir, ".build-id", "ab", "cdef0123456789.debug"), testID, QualityDWARF)}
		}},
		{name: "scanned file with symbols", wantGood: true, files: func(t *testing.T, dir string) []string {
			return []string{writeDebugFile(t, filepath.Join(dir, "lib", "libapp.so.debug"), testID, QualitySymtab)}
		}},
		{name: "stripped binaries last, layout before scanned", files: func(t *testing.T, dir string) []string {
			return []string{
				writeDebugFile(t, filepath.Join(dir, ".build-id", "ab", "cdef0123456789"), testID, QualityDynsym),
				writeDebugFile(t, filepath.Join(dir, "bin", "app"), testID, QualityDynsym),
			}
		}},
		{name: "layout debug file, then the scanned one, then the binary", wantGood: true, files: func(t *testing.T, dir string) []string {
			binary := writeDebugFile(t, filepath.Join(dir, ".build-id", "ab", "cdef0123456789"), testID, QualityDynsym)
			return []string{
				writeDebugFile(t, filepath.Join(dir, ".build-id", "ab", "cdef0123456789.debug"), testID, QualityDWARF),
				writeDebugFile(t, filepath.Join(dir, "usr", "lib", "debug", "app.debug"), testID, QualityDWARF),
				binary,
			}
		}},
		{name: "another build id is not a candidate", files: func(t *testing.T, dir string) []string {
			writeDebugFile(t, filepath.Join(dir, "other.debug"), "0123456789abcdef", QualityDWARF)
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			want := tt.files(t, dir)
			d, err := NewDebugFiles(DebugFilesOptions{Dirs: []string{dir}, RescanInterval: time.Hour, Inspect: textInspector})
			require.NoError(t, err)
			defer d.Close()
			got, good, err := d.Candidates(context.Background(), testID)
			require.NoError(t, err)
			assert.Equal(t, want, realPaths(t, got))
			assert.Equal(t, tt.wantGood, good)
			assert.Equal(t, tt.wantGood, d.HasGood(testID))
		})
	}
}

// realPaths resolves the paths a scan reports by their real path, as the
// test wrote them.
func realPaths(t *testing.T, paths []string) []string {
	t.Helper()
	var out []string
	for _, p := range paths {
		real, err := filepath.EvalSymlinks(p)
		require.NoError(t, err)
		out = append(out, real)
	}
	if out == nil {
		return nil
	}
	return out
}

// TestDebugFilesRescanOnAMiss: a build id in no file is looked for again
// by a scan, at most once per interval, and the .build-id tree is never
// walked (it is looked up by path).
func TestDebugFilesRescanOnAMiss(t *testing.T) {
	dir := t.TempDir()
	inspected := map[string]int{}
	inspect := func(path string, maxBytes int64) ([]ImageID, error) {
		inspected[filepath.Base(path)]++
		return textInspector(path, maxBytes)
	}
	writeDebugFile(t, filepath.Join(dir, ".build-id", "01", "23456789abcdef.debug"), "0123456789abcdef", QualityDWARF)
	d, err := NewDebugFiles(DebugFilesOptions{Dirs: []string{dir}, RescanInterval: 40 * time.Millisecond, Inspect: inspect})
	require.NoError(t, err)
	defer d.Close()
	ctx := context.Background()
	paths, _, err := d.Candidates(ctx, testID)
	require.NoError(t, err)
	require.Empty(t, paths)

	deployed := writeDebugFile(t, filepath.Join(dir, "release-2", "app.debug"), testID, QualityDWARF)
	paths, _, err = d.Candidates(ctx, testID)
	require.NoError(t, err)
	assert.Empty(t, paths, "within the interval no rescan")

	time.Sleep(50 * time.Millisecond)
	paths, good, err := d.Candidates(ctx, testID)
	require.NoError(t, err)
	assert.Equal(t, []string{deployed}, realPaths(t, paths))
	assert.True(t, good)
	assert.Zero(t, inspected["23456789abcdef.debug"], "the .build-id tree is looked up by path, not scanned")
	assert.Equal(t, 1, inspected["app.debug"])
}

func TestDebugFilesRefusesMissingDirectories(t *testing.T) {
	_, err := NewDebugFiles(DebugFilesOptions{Dirs: []string{filepath.Join(t.TempDir(), "missing")}, Inspect: textInspector})
	require.ErrorContains(t, err, "is not a directory")
}
