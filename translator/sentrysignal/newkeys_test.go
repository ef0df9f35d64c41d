package sentrysignal

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestAppendKeys(t *testing.T) {
	for _, n := range []int{0, 1, minBulkKeys, 20_000} {
		keys := make([]string, n)
		for i := range keys {
			// long keys too: their lengths take several varint bytes
			keys[i] = fmt.Sprintf("k%d-%0*d", i, i%300, 0)
		}
		m := pcommon.NewMap()
		if err := appendKeys(m, keys); err != nil {
			t.Fatalf("%d keys: %v", n, err)
		}
		var got []string
		for k, v := range m.All() {
			if v.Type() != pcommon.ValueTypeEmpty {
				t.Fatalf("%d keys: %q holds %v", n, k, v.AsRaw())
			}
			got = append(got, k)
		}
		if len(got) != n || (n > 0 && !reflect.DeepEqual(got, keys)) {
			t.Errorf("%d keys: got %d, or out of order", n, len(got))
		}
	}
	m := pcommon.NewMap()
	m.PutStr("a", "b")
	if err := appendKeys(m, []string{"c"}); err == nil {
		t.Error("appendKeys into a map that has entries")
	}
}

// TestEntries: the bulk path (an empty map, many keys) and the scanning
// path give the same map: distinct keys in order of first appearance,
// the last write of a repeated key winning, at most MaxMapEntries.
func TestEntries(t *testing.T) {
	var keys []string
	for i := 0; i < 300; i++ {
		keys = append(keys, fmt.Sprintf("k%03d", i%200)) // 100 repeated
	}
	write := func(m pcommon.Map, max int) (map[string]any, []string, int) {
		l := NewLimiter(Options{MaxMapEntries: max})
		values, kept := l.Entries(m, keys)
		for i := range keys {
			if kept[i] {
				values[i].SetInt(int64(i))
			}
		}
		var order []string
		for k := range m.All() {
			order = append(order, k)
		}
		return m.AsRaw(), order, l.Dropped()
	}
	bulk, bulkOrder, _ := write(pcommon.NewMap(), 1000)
	pre := pcommon.NewMap()
	pre.PutStr("k000", "old") // not empty: the scanning path, and k000 updated in place
	scan, scanOrder, _ := write(pre, 1000)
	if len(bulk) != 200 || bulk["k000"] != int64(200) || bulk["k199"] != int64(199) || !reflect.DeepEqual(bulk, scan) {
		t.Errorf("bulk %d entries (k000 = %v), scan %d", len(bulk), bulk["k000"], len(scan))
	}
	if bulkOrder[0] != "k000" || bulkOrder[199] != "k199" || !reflect.DeepEqual(bulkOrder, scanOrder) {
		t.Errorf("orders differ: %v… / %v…", bulkOrder[:3], scanOrder[:3])
	}
	capped, _, dropped := write(pcommon.NewMap(), 150)
	// 150 distinct kept; the other 50 distinct keys' 50 occurrences dropped
	if len(capped) != 150 || dropped != 50 || capped["k000"] != int64(200) {
		t.Errorf("capped: %d kept, %d dropped, k000 = %v", len(capped), dropped, capped["k000"])
	}
}

func BenchmarkEntries(b *testing.B) {
	for _, n := range []int{16, minBulkKeys, 1000} {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%04d", i)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				NewLimiter(Options{}).Entries(pcommon.NewMap(), keys)
			}
		})
	}
}

// FuzzEntries: for any keys (repeated, empty, any bytes), the linear
// path into an empty map builds the map the scanning path builds.
func FuzzEntries(f *testing.F) {
	f.Add([]byte("a\x00b\x00a\x00\x00c"), uint8(200))
	f.Add([]byte("\xff\xfe\x00x"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, repeat uint8) {
		var keys []string
		for _, k := range strings.Split(string(data), "\x00") {
			for r := 0; r <= int(repeat)%4; r++ {
				keys = append(keys, k)
			}
		}
		// pad to the linear path's threshold with keys of their own
		for i := 0; len(keys) < minBulkKeys; i++ {
			keys = append(keys, fmt.Sprintf("\x01pad%d", i))
		}
		build := func(m pcommon.Map) (map[string]any, []string) {
			values, kept := NewLimiter(Options{MaxMapEntries: 100 + int(repeat)}).Entries(m, keys)
			for i := range keys {
				if kept[i] {
					values[i].SetInt(int64(i))
				}
			}
			var order []string
			for k := range m.All() {
				order = append(order, k)
			}
			return m.AsRaw(), order
		}
		linear, linearOrder := build(pcommon.NewMap())
		pre := pcommon.NewMap()
		pre.PutEmpty(keys[0]) // a map with an entry takes the scanning path
		scan, scanOrder := build(pre)
		if !reflect.DeepEqual(linear, scan) || !reflect.DeepEqual(linearOrder, scanOrder) {
			t.Fatalf("linear %v\nscan %v", linearOrder, scanOrder)
		}
	})
}
