package envelope

import (
	"bufio"
	"bytes"
	"io"
)

// source is what a Reader reads from: a bufio.Reader over a stream, or a
// wholeSource over an envelope held in memory.
type source interface {
	io.Reader
	io.ByteScanner
	ReadSlice(delim byte) ([]byte, error)
	Buffered() int
}

var _ source = (*bufio.Reader)(nil)

// ResetBytes makes r read the envelope held whole in data within limits,
// like Reset, without copying it: the payloads r returns are slices of
// data (their capacity ends with them), valid while data is. A server
// that inflates a request body into one buffer hands it over this way
// instead of streaming it into the payload memory a second time.
func (r *Reader) ResetBytes(data []byte, limits Limits) {
	r.Reset(nil, limits)
	r.whole = wholeSource{data: data}
	r.src = &r.whole
}

// takeN returns the next n bytes of the buffer as a payload.
func (r *Reader) takeN(index int, n int64) ([]byte, error) {
	w := &r.whole
	got := min(n, int64(len(w.data)-w.pos))
	p := w.data[w.pos : w.pos+int(got) : w.pos+int(got)]
	w.pos += int(got)
	r.off += got
	if got < n {
		return nil, r.truncated(index, n, got)
	}
	return p, nil
}

// skipWhole skips an oversized payload of n bytes in the buffer.
func (r *Reader) skipWhole(index int, n int64) error {
	w := &r.whole
	got := min(n, int64(len(w.data)-w.pos))
	w.pos += int(got)
	r.off += got
	if got < n {
		return r.truncated(index, n, got)
	}
	return nil
}

// takeLine reads a payload without a length from the buffer: up to the
// next newline or the end, none when over the item limit.
func (r *Reader) takeLine(item *Item) {
	line, err := r.whole.ReadSlice('\n')
	r.off += int64(len(line))
	if err == nil {
		line = line[:len(line)-1]
	}
	item.Size = int64(len(line))
	if limit := r.limits.MaxItemBytes; limit > 0 && item.Size > limit {
		item.Oversized = true
		return
	}
	item.Payload = line[:len(line):len(line)]
}

// wholeSource reads a buffer as a bufio.Reader reads a stream; ReadSlice
// returns whole lines, never bufio.ErrBufferFull.
type wholeSource struct {
	data []byte
	pos  int
	// unread is whether the last call was a ReadByte that UnreadByte may
	// take back.
	unread bool
}

func (w *wholeSource) Read(p []byte) (int, error) {
	w.unread = false
	if w.pos >= len(w.data) {
		return 0, io.EOF
	}
	n := copy(p, w.data[w.pos:])
	w.pos += n
	return n, nil
}

func (w *wholeSource) ReadByte() (byte, error) {
	if w.pos >= len(w.data) {
		w.unread = false
		return 0, io.EOF
	}
	w.unread = true
	w.pos++
	return w.data[w.pos-1], nil
}

func (w *wholeSource) UnreadByte() error {
	if !w.unread {
		return bufio.ErrInvalidUnreadByte
	}
	w.unread = false
	w.pos--
	return nil
}

func (w *wholeSource) ReadSlice(delim byte) ([]byte, error) {
	w.unread = false
	rest := w.data[w.pos:]
	if i := bytes.IndexByte(rest, delim); i >= 0 {
		w.pos += i + 1
		return rest[: i+1 : i+1], nil
	}
	w.pos = len(w.data)
	return rest, io.EOF
}

func (w *wholeSource) Buffered() int { return len(w.data) - w.pos }
