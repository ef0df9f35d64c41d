package idindex

import (
	"strconv"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		name string
		ids  []string
		want []int32
	}{
		{"empty id", []string{"", "", "1"}, []int32{0, 0, 1}},
		{"cycling threads", []string{"1", "2", "3", "1", "2", "3"}, []int32{0, 1, 2, 0, 1, 2}},
		{"cycling, then out of turn", []string{"1", "2", "3", "1", "3", "3", "2", "1", "2"}, []int32{0, 1, 2, 0, 2, 2, 1, 0, 1}},
		// Copies defeat the pointer comparison, so the contents decide.
		{"equal ids in different memory", []string{"259", strings.Clone("259"), "25" + strconv.Itoa(9)}, []int32{0, 0, 0}},
		{"same length, different ids", []string{"ab", "ba", "ab"}, []int32{0, 1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var x Index
			for i, id := range tt.ids {
				got, _ := x.Lookup(id)
				if got != tt.want[i] {
					t.Fatalf("Lookup(%q) #%d = %d, want %d", id, i, got, tt.want[i])
				}
			}
		})
	}
}

// TestManyIDs crosses the scan limit, where the map takes over, and checks
// that ids seen before and after keep their numbers.
func TestManyIDs(t *testing.T) {
	var x Index
	const n = 3 * scanLimit
	for round := range 2 {
		for i := range n {
			id := strconv.Itoa(i) // a new string every time
			got, added := x.Lookup(id)
			if got != int32(i) {
				t.Fatalf("round %d: Lookup(%q) = %d, want %d", round, id, got, i)
			}
			if added != (round == 0) {
				t.Fatalf("round %d: Lookup(%q) added = %v", round, id, added)
			}
			if x.ID(got) != id {
				t.Fatalf("ID(%d) = %q, want %q", got, x.ID(got), id)
			}
		}
	}
	if x.Len() != n {
		t.Fatalf("Len = %d, want %d", x.Len(), n)
	}
	x.Reset()
	if got, added := x.Lookup("7"); got != 0 || !added || x.Len() != 1 {
		t.Fatalf("after Reset: Lookup = %d, %v; Len %d", got, added, x.Len())
	}
}

// TestNext: Next then Lookup, as the callers go, numbers ids as Lookup
// alone does, and Next finds the round-robin successor (or a single
// thread again) by its address, never an id in other memory.
func TestNext(t *testing.T) {
	a, b, c := "140195255602048", "140195247209344", "140195238816640"
	tests := []struct {
		name     string
		ids      []string
		wantNext int // how many Next finds
	}{
		{"round-robin", []string{a, b, c, a, b, c, a}, 4},
		{"one thread", []string{a, a, a}, 2},
		{"out of turn, then the next", []string{a, b, c, c, b, a, b}, 1},
		{"equal ids in different memory", []string{a, b, strings.Clone(a), strings.Clone(b)}, 0},
		{"empty ids", []string{"", "", a}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var alone, both Index
			found := 0
			for i, id := range tt.ids {
				want, wantAdded := alone.Lookup(id)
				got, ok := both.Next(id)
				added := false
				if ok {
					found++
				} else {
					got, added = both.Lookup(id)
				}
				if got != want || added != wantAdded {
					t.Fatalf("id #%d %q: %d (added %v), Lookup alone %d (added %v)", i, id, got, added, want, wantAdded)
				}
			}
			if found != tt.wantNext {
				t.Fatalf("Next found %d ids, want %d", found, tt.wantNext)
			}
		})
	}
}
