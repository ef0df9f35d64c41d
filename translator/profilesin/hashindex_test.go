package profilesin

import (
	"fmt"
	"hash/maphash"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// indexOf looks key up in x over the entries table, adding it when absent,
// as the dictionary's callers do; hash gives each key its hash.
func indexOf(x *hashIndex, entries *[]string, key string, hash func(string) uint64) int32 {
	h := hash(key)
	i, p, ok := x.find(h, func(i int32) bool { return (*entries)[i] == key })
	if ok {
		return i
	}
	i = int32(len(*entries))
	*entries = append(*entries, key)
	x.put(p, h, i)
	return i
}

func TestHashIndexFindsEveryEntry(t *testing.T) {
	seed := maphash.MakeSeed()
	for _, tc := range []struct {
		name string
		keys int
		hash func(string) uint64
	}{
		{"distinct hashes, grown past the first array", 1000, func(s string) uint64 { return maphash.String(seed, s) }},
		{"every key the same hash", 100, func(string) uint64 { return 42 }},
		{"hashes equal in their low bits", 300, func(s string) uint64 { return uint64(len(s)) << 40 }},
		{"every key at the array's last slot, wrapping around", 40, func(string) uint64 { return ^uint64(0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var x hashIndex
			x.reset()
			var entries []string
			for i := range tc.keys {
				key := fmt.Sprintf("key-%d", i)
				require.Equal(t, int32(i), indexOf(&x, &entries, key, tc.hash), "new key %s", key)
			}
			for i := range tc.keys {
				key := fmt.Sprintf("key-%d", i)
				require.Equal(t, int32(i), indexOf(&x, &entries, key, tc.hash), "key %s again", key)
			}
			assert.Len(t, entries, tc.keys, "no key added twice")
			assert.Equal(t, tc.keys, x.used)
			assert.LessOrEqual(t, 2*x.used, len(x.slots), "at most half full")
		})
	}
}

func TestHashIndexResetAndReserve(t *testing.T) {
	hash := func(s string) uint64 { return uint64(len(s)) * 0x9e3779b97f4a7c15 }
	var x hashIndex
	x.reset()
	x.reserve(1000)
	slots := len(x.slots)
	require.GreaterOrEqual(t, slots, 2000, "reserve makes room for 1000 entries")
	var entries []string
	for i := range 1000 {
		indexOf(&x, &entries, fmt.Sprint(i), hash)
	}
	assert.Len(t, x.slots, slots, "no rehash within the reserved room")

	x.reset()
	assert.Len(t, x.slots, slots, "reset keeps the memory")
	entries = entries[:0]
	assert.Equal(t, int32(0), indexOf(&x, &entries, "999", hash), "reset forgets every entry")
}

func TestMixHashSpreadsItsInputs(t *testing.T) {
	const key = 0x243f6a8885a308d3
	seen := make(map[uint64]string)
	for a := range uint64(64) {
		for b := range uint64(64) {
			h := mixHash(a, b, key)
			name := fmt.Sprintf("mixHash(%d, %d)", a, b)
			if other, ok := seen[h]; ok {
				t.Fatalf("%s collides with %s", name, other)
			}
			seen[h] = name
		}
	}
	// No b known without the key drops a: the wyhash constant that b was
	// once folded with is just another value.
	for _, b := range []uint64{0, 0xe7037ed1a0b428db, ^uint64(0)} {
		assert.NotEqual(t, mixHash(1, b, key), mixHash(2, b, key), "b = %#x", b)
	}
}
