// Package idindex gives the thread ids of one Sentry profile dense indices.
//
// Every sample names its thread by id, and a profile has a handful of
// threads that its samples cycle through. The decoder interns ids, so equal
// ids usually share their bytes: comparing data pointers finds a known id
// without reading it, and hashing is left for profiles with many threads.
package idindex

import "unsafe"

// scanLimit is the number of ids below which a linear scan beats a map.
const scanLimit = 16

// Index numbers distinct ids 0, 1, 2, … in order of first sight. The zero
// value is empty and ready to use.
type Index struct {
	ids  []string
	byID map[string]int32
	last int32 // the index Lookup returned last: samples often repeat it or the next
}

// Reset empties the index, keeping its memory.
func (x *Index) Reset() {
	x.ids, x.byID, x.last = x.ids[:0], nil, 0
}

// Len is the number of distinct ids seen.
func (x *Index) Len() int { return len(x.ids) }

// ID returns the id numbered i.
func (x *Index) ID(i int32) string { return x.ids[i] }

// Lookup returns the number of id, numbering it when it is new; added
// reports that it was.
func (x *Index) Lookup(id string) (i int32, added bool) {
	if i, ok := x.expected(id); ok {
		x.last = i
		return i, false
	}
	if x.byID != nil {
		if i, ok := x.byID[id]; ok {
			x.last = i
			return i, false
		}
		return x.add(id), true
	}
	for i, known := range x.ids {
		if sameBytes(known, id) {
			x.last = int32(i)
			return x.last, false
		}
	}
	// Not interned by the same decoder (or not interned at all): compare
	// the contents.
	for i, known := range x.ids {
		if known == id {
			x.last = int32(i)
			return x.last, false
		}
	}
	return x.add(id), true
}

// Next returns the number of id when it is the id after the last one
// Lookup or Next found (the first after the last), comparing the bytes'
// address only; false sends the caller to Lookup. Samples of several
// threads come round-robin, in the order the threads were first seen, and
// a single thread is its own next: a caller that looks up every sample's
// thread finds it here, in a call the compiler inlines.
func (x *Index) Next(id string) (int32, bool) {
	next := x.last + 1
	if int(next) >= len(x.ids) {
		next = 0
	}
	if int(next) < len(x.ids) && sameBytes(x.ids[next], id) {
		x.last = next
		return next, true
	}
	return 0, false
}

// expected finds id, by its bytes' address, where a sample's thread is
// expected: the last one, or the one after it (samples of several
// threads come round-robin, in the order the threads were first seen).
func (x *Index) expected(id string) (int32, bool) {
	n := int32(len(x.ids))
	if x.last < n && sameBytes(x.ids[x.last], id) {
		return x.last, true
	}
	next := x.last + 1
	if next >= n {
		next = 0
	}
	if next < n && sameBytes(x.ids[next], id) {
		return next, true
	}
	return 0, false
}

func (x *Index) add(id string) int32 {
	i := int32(len(x.ids))
	x.ids = append(x.ids, id)
	x.last = i
	if x.byID != nil {
		x.byID[id] = i
	} else if len(x.ids) > scanLimit {
		x.byID = make(map[string]int32, 2*len(x.ids))
		for j, known := range x.ids {
			x.byID[known] = int32(j)
		}
	}
	return i
}

// sameBytes reports whether a and b are the same bytes in memory: then they
// are equal without being read. Equal strings in different memory report
// false.
func sameBytes(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}
