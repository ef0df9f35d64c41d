package proguard

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSizeMatchesHeap: Size, which a byte-bounded cache charges, is within
// a factor of two of the heap the mapping really keeps.
func TestSizeMatchesHeap(t *testing.T) {
	data := syntheticMapping(2000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := Parse(bytes.NewReader(data))
	require.NoError(t, err)
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("Size %d bytes, heap kept %d bytes, input %d bytes", m.Size(), held, len(data))
	assert.InDelta(t, 1, float64(m.Size())/float64(held), 0.5)
	runtime.KeepAlive(m)
	runtime.KeepAlive(data) // alive before, so alive after: not counted
}
