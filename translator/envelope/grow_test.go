package envelope

import "testing"

// A newline-delimited payload is buffered while it is read; the buffer must
// stop growing at the item limit instead of doubling past it.
func TestAppendDoublingStopsAtLimit(t *testing.T) {
	const limit = 5000
	var buf []byte
	chunk := make([]byte, 700)
	for len(buf)+len(chunk) <= limit {
		buf = appendDoubling(buf, chunk, limit)
		if cap(buf) > limit {
			t.Fatalf("capacity %d after %d bytes passes the limit %d", cap(buf), len(buf), limit)
		}
	}
	if got := appendDoubling(nil, make([]byte, 10), 0); cap(got) < 512 {
		t.Fatalf("without a limit the first buffer holds %d bytes, want at least 512", cap(got))
	}
}
