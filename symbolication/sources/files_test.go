package sources

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, make([]byte, n), 0o644))
		return p
	}
	fifo := filepath.Join(dir, "fifo.map")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	linkToFIFO := filepath.Join(dir, "link.map")
	require.NoError(t, os.Symlink(fifo, linkToFIFO))
	sparse := filepath.Join(dir, "sparse.map")
	f, err := os.Create(sparse)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(10<<30))
	require.NoError(t, f.Close())
	tests := []struct {
		name     string
		path     string
		maxBytes int64
		wantLen  int
		wantErr  error
	}{
		{name: "within the bound", path: write("small", 10), maxBytes: 10, wantLen: 10},
		{name: "no bound", path: write("any", 100), maxBytes: 0, wantLen: 100},
		{name: "one byte over", path: write("over", 11), maxBytes: 10, wantErr: ErrTooLarge},
		{name: "10 GB refused by its size", path: sparse, maxBytes: 256 << 20, wantErr: ErrTooLarge},
		{name: "FIFO", path: fifo, maxBytes: 10, wantErr: ErrNotRegular},
		{name: "link to a FIFO", path: linkToFIFO, maxBytes: 10, wantErr: ErrNotRegular},
		{name: "directory", path: dir, maxBytes: 10, wantErr: ErrNotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			b, err := ReadRegular(tt.path, tt.maxBytes)
			assert.Less(t, time.Since(start), 2*time.Second, "never blocks, never reads past the bound")
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Len(t, b, tt.wantLen)
		})
	}
}

func TestRootsResolve(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "in"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "out"), nil, 0o644))
	require.NoError(t, os.Symlink(filepath.Join(root, "in"), filepath.Join(root, "link-in")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "out"), filepath.Join(root, "link-out")))
	require.NoError(t, os.Symlink("../"+filepath.Base(outside), filepath.Join(root, "rel-out")))
	// The configured directory itself may be a link.
	linkedRoot := filepath.Join(t.TempDir(), "symbols")
	require.NoError(t, os.Symlink(root, linkedRoot))
	roots, err := NewRoots([]string{linkedRoot})
	require.NoError(t, err)
	tests := []struct {
		name    string
		path    string
		wantErr error
	}{
		{name: "file", path: filepath.Join(linkedRoot, "in")},
		{name: "link within", path: filepath.Join(linkedRoot, "link-in")},
		{name: "link out", path: filepath.Join(linkedRoot, "link-out"), wantErr: ErrOutsideRoots},
		{name: "relative link out", path: filepath.Join(linkedRoot, "rel-out"), wantErr: ErrOutsideRoots},
		{name: "dot-dot", path: filepath.Join(root, "..", filepath.Base(outside)), wantErr: ErrOutsideRoots},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := roots.Resolve(tt.path)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
		})
	}
	_, err = NewRoots([]string{filepath.Join(root, "missing")})
	require.Error(t, err)
}
