package native

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImageSizeMatchesHeap: the size the memory LRU charges for a parsed
// file is within a factor of two of the heap it really keeps.
func TestImageSizeMatchesHeap(t *testing.T) {
	requireTools(t, "go")
	bin := filepath.Join(t.TempDir(), "gofmt")
	if out, err := exec.Command("go", "build", "-o", bin, "cmd/gofmt").CombinedOutput(); err != nil {
		t.Skipf("building gofmt: %v: %s", err, out)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	img, err := loadImageFile(bin)
	require.NoError(t, err)
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("size %d bytes, heap kept %d bytes", img.size, held)
	assert.InDelta(t, 1, float64(img.size)/float64(held), 0.5)
	runtime.KeepAlive(img)
}
