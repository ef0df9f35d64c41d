package envelope

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

const (
	// readBufferSize is the bufio buffer: large enough that header lines are
	// usually returned in one piece, small enough for many concurrent readers.
	readBufferSize = 32 << 10
	// firstPayloadChunk is the most a length-delimited payload is given before
	// its bytes arrive. Beyond it the buffer doubles as data is read, so a
	// lying length costs at most twice what was actually sent.
	firstPayloadChunk = 64 << 10
)

// Reader reads an envelope item by item from a stream. It is not safe for
// concurrent use.
type Reader struct {
	// src is buffered, reading a stream, or &whole, reading a buffer.
	src      source
	buffered *bufio.Reader
	whole    wholeSource
	limits   Limits
	off      int64 // bytes consumed from src
	// unread reports how many bytes the source still holds beyond src's
	// buffer, when it can tell (bytes.Reader and friends); nil otherwise.
	unread func() int

	headerRead bool
	header     Header
	headerErr  error

	items int   // item headers started so far
	err   error // sticky: once the stream is out of step nothing after it can be trusted

	// arena holds the payloads read so far; after a Reset the next
	// envelope's payloads reuse its memory.
	arena []byte
}

// maxKeptArena bounds the payload memory a Reader keeps across Reset: room
// for the largest items SDKs send (a 60-s continuous-profiling chunk of
// eight python threads is 5.25 MB), which a server reusing its Readers
// would otherwise regrow from 64 KiB, allocating and zeroing about twice
// the payload, on every such envelope.
const maxKeptArena = 8 << 20

// NewReader returns a Reader that reads the envelope from r within limits.
func NewReader(r io.Reader, limits Limits) *Reader {
	limits = limits.withDefaults()
	bufSize := readBufferSize
	sized, ok := r.(interface{ Len() int })
	if ok {
		// A small in-memory envelope does not need the full buffer.
		bufSize = min(max(sized.Len()+1, 512), readBufferSize)
	}
	rd := &Reader{buffered: bufio.NewReaderSize(r, bufSize), limits: limits}
	rd.src = rd.buffered
	if ok {
		rd.unread = sized.Len
	}
	return rd
}

// Reset makes r read a new envelope from src within limits, like a new
// Reader, but with the read buffer and payload memory of r: a server that
// keeps one Reader per worker reads an envelope without allocating them
// again. The items r returned before share that memory and must no longer
// be used.
func (r *Reader) Reset(src io.Reader, limits Limits) {
	limits = limits.withDefaults()
	arena := r.arena[:0]
	if cap(arena) > maxKeptArena {
		arena = nil
	}
	r.buffered.Reset(src)
	*r = Reader{src: r.buffered, buffered: r.buffered, limits: limits, arena: arena}
	if sized, ok := src.(interface{ Len() int }); ok {
		r.unread = sized.Len
	}
}

// withDefaults fills in the header limit left 0.
func (l Limits) withDefaults() Limits {
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	return l
}

// Header reads and decodes the envelope header line. The first call reads it;
// later calls return the same header or error. Next calls it implicitly.
func (r *Reader) Header() (Header, error) {
	if !r.headerRead {
		r.headerRead = true
		r.header, r.headerErr = r.readHeader()
		if r.headerErr != nil {
			r.err = r.headerErr
		}
	}
	return r.header, r.headerErr
}

// Next returns the next item, or io.EOF when the envelope ended cleanly.
//
// An item over Limits.MaxItemBytes is returned with Oversized set and no
// payload; the caller can reject that item and keep reading. Any error other
// than io.EOF is final and returned again by later calls: a *SyntaxError, an
// error wrapping ErrTooManyItems or ErrHeaderTooLarge, or an error of the
// underlying reader (such as *http.MaxBytesError) wrapped with its position.
func (r *Reader) Next() (Item, error) {
	if _, err := r.Header(); err != nil {
		return Item{}, err
	}
	if r.err != nil {
		return Item{}, r.err
	}
	item, err := r.next()
	if err != nil {
		r.err = err
	}
	return item, err
}

// Parse reads a whole envelope held in memory. On error it returns the header
// and the items read before the error.
func Parse(data []byte, limits Limits) (Header, []Item, error) {
	return NewReader(bytes.NewReader(data), limits).All()
}

// All reads the header and every item left. On error it returns the
// header and the items read before the error.
func (r *Reader) All() (Header, []Item, error) {
	h, err := r.Header()
	if err != nil {
		return h, nil, err
	}
	var items []Item
	for {
		item, err := r.Next()
		if errors.Is(err, io.EOF) {
			return h, items, nil
		}
		if err != nil {
			return h, items, err
		}
		items = append(items, item)
	}
}

func (r *Reader) readHeader() (Header, error) {
	if _, err := r.skipSpace(); err != nil {
		if errors.Is(err, io.EOF) {
			return Header{}, &SyntaxError{Offset: r.off, Item: -1, Msg: "missing envelope header", Err: io.ErrUnexpectedEOF}
		}
		return Header{}, r.readErr(-1, "envelope header", err)
	}
	start := r.off
	line, _, err := r.readLine(-1)
	if err != nil {
		return Header{}, err
	}
	var h Header
	if err := decodeHeaderLine(line, start, -1, h.setMember); err != nil {
		return Header{}, err
	}
	h.Raw = bytes.Clone(line)
	return h, nil
}

// setMember decodes one member of the envelope header; the others are
// kept in Raw only.
func (h *Header) setMember(name string, value []byte) error {
	var err error
	switch name {
	case "event_id":
		h.EventID, err = stringValue(name, value)
	case "dsn":
		h.DSN, err = stringValue(name, value)
	case "sent_at":
		h.SentAt, err = stringValue(name, value)
	case "sdk":
		h.SDK = decodeSDK(value)
	}
	return err
}

// decodeSDK is lenient on purpose: Relay keeps "sdk" as an opaque value and
// never rejects an envelope for its shape.
func decodeSDK(raw []byte) *SDK {
	if raw[0] != '{' {
		return nil
	}
	var sdk SDK
	_ = forEachMember(raw, func(key, value []byte) error {
		switch memberName(key) {
		case "name":
			sdk.Name, _ = stringValue("name", value)
		case "version":
			sdk.Version, _ = stringValue("version", value)
		}
		return nil
	})
	return &sdk
}

func (r *Reader) next() (Item, error) {
	index, err := r.startItem()
	if err != nil {
		return Item{}, err
	}
	start := r.off
	line, atEOF, err := r.readLine(index)
	if err != nil {
		return Item{}, err
	}
	h, err := decodeItemHeader(line, start, index)
	if err != nil {
		return Item{}, err
	}
	item := Item{Header: h}
	if err := r.readPayload(&item, index, atEOF); err != nil {
		return Item{}, err
	}
	return item, nil
}

// startItem skips to the next item header and counts it, within
// MaxItems; io.EOF when the envelope ended cleanly.
func (r *Reader) startItem() (int, error) {
	skipped, err := r.skipSpace()
	if errors.Is(err, io.EOF) {
		if skipped > 0 {
			// Relay expects an item header after whitespace and fails the
			// same way on an envelope ending in a blank line.
			return 0, &SyntaxError{Offset: r.off, Item: r.items, Msg: "blank lines after the last item, expected an item header", Err: io.ErrUnexpectedEOF}
		}
		return 0, io.EOF
	}
	if err != nil {
		return 0, r.readErr(r.items, "item header", err)
	}
	index := r.items
	if r.limits.MaxItems > 0 && index >= r.limits.MaxItems {
		return 0, fmt.Errorf("envelope: item %d at offset %d: %w (limit %d)", index, r.off, ErrTooManyItems, r.limits.MaxItems)
	}
	r.items++
	return index, nil
}

// readPayload reads the payload the item header announces: of its length,
// or up to the next newline.
func (r *Reader) readPayload(item *Item, index int, atEOF bool) error {
	if item.Header.Length >= 0 {
		return r.readSized(item, index, atEOF)
	}
	return r.readDelimited(item, index, atEOF)
}

// readSized reads a payload whose header gave its length, then the newline
// (or end of input) that must follow it.
func (r *Reader) readSized(item *Item, index int, atEOF bool) error {
	n := item.Header.Length
	if atEOF {
		if n > 0 {
			return r.truncated(index, n, 0)
		}
		item.Payload = []byte{}
		return nil
	}
	var err error
	if limit := r.limits.MaxItemBytes; limit > 0 && n > limit {
		err = r.skipN(index, n)
		item.Oversized = true
	} else {
		item.Payload, err = r.readN(index, n)
	}
	if err != nil {
		return err
	}
	item.Size = n
	return r.readTerminator(index, n)
}

// skipN reads past an oversized payload of n bytes without keeping it.
func (r *Reader) skipN(index int, n int64) error {
	if r.src == &r.whole {
		return r.skipWhole(index, n)
	}
	skipped, err := io.CopyN(io.Discard, r.src, n)
	r.off += skipped
	if errors.Is(err, io.EOF) {
		return r.truncated(index, n, skipped)
	}
	if err != nil {
		return r.readErr(index, "payload", err)
	}
	return nil
}

// readTerminator reads the newline, or the end of input, that must follow
// a payload of n bytes.
func (r *Reader) readTerminator(index int, n int64) error {
	b, err := r.src.ReadByte()
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return r.readErr(index, "payload terminator", err)
	case b != '\n':
		return &SyntaxError{Offset: r.off, Item: index, Msg: fmt.Sprintf("length says %d but the payload is followed by %q instead of a newline", n, b)}
	}
	r.off++
	return nil
}

// readN reads exactly n payload bytes. The buffer is sized by what the
// source is known to hold, or else grows as bytes arrive: never by the claim
// alone.
func (r *Reader) readN(index int, n int64) ([]byte, error) {
	if n == 0 {
		return []byte{}, nil
	}
	if r.src == &r.whole {
		return r.takeN(index, n)
	}
	p := r.startPayload(r.firstChunk(n))
	defer r.keepPayload(&p)
	for int64(len(p.buf)) < n {
		p.growFor(n)
		// The arena may hold more than this payload: read no further.
		m, err := r.src.Read(p.buf[len(p.buf):min(int64(cap(p.buf)), n)])
		p.buf = p.buf[:len(p.buf)+m]
		r.off += int64(m)
		if errors.Is(err, io.EOF) {
			return p.whole(n, r.truncated(index, n, int64(len(p.buf))))
		}
		if err != nil {
			return nil, r.readErr(index, "payload", err)
		}
	}
	return p.payload(), nil
}

// firstChunk is the memory a payload of n bytes gets before it arrives:
// what the source is known to hold, else firstPayloadChunk.
func (r *Reader) firstChunk(n int64) int64 {
	if r.unread != nil {
		return min(n, int64(r.src.Buffered()+r.unread()))
	}
	return min(n, firstPayloadChunk)
}

// payloadBuf is a payload being read: at the arena's free end while it
// fits there, else in new memory.
type payloadBuf struct {
	buf     []byte
	inArena bool
}

// startPayload starts a payload at the arena's free end when it has room
// for size bytes, else in new memory that becomes the arena.
func (r *Reader) startPayload(size int64) payloadBuf {
	p := payloadBuf{buf: r.arena[len(r.arena):], inArena: true}
	if int64(cap(p.buf)) < size {
		p = payloadBuf{buf: make([]byte, 0, size)}
	}
	return p
}

// keepPayload takes the payload's bytes out of the arena's free end, or
// makes its memory the arena when it is larger: it serves the next
// envelopes.
func (r *Reader) keepPayload(p *payloadBuf) {
	switch {
	case p.inArena:
		r.arena = r.arena[:len(r.arena)+len(p.buf)]
	case cap(p.buf) > cap(r.arena):
		r.arena = p.buf
	}
}

// growFor doubles a full buffer, up to n bytes.
func (p *payloadBuf) growFor(n int64) {
	if len(p.buf) < cap(p.buf) {
		return
	}
	grown := make([]byte, len(p.buf), min(n, max(2*int64(cap(p.buf)), firstPayloadChunk)))
	copy(grown, p.buf)
	p.buf, p.inArena = grown, false
}

// whole is the payload once the input ended: all n bytes, or short.
func (p *payloadBuf) whole(n int64, short error) ([]byte, error) {
	if int64(len(p.buf)) < n {
		return nil, short
	}
	return p.payload(), nil
}

// payload is what was read. The capacity ends with the payload, so that
// an append by the caller cannot write over the next one.
func (p *payloadBuf) payload() []byte { return p.buf[:len(p.buf):len(p.buf)] }

// readDelimited reads a payload without a length: everything up to the next
// newline or the end of input. Over the item limit it keeps counting but
// stops storing. Like readN it writes to the arena, so that an SDK that
// never sends lengths (@sentry/node, browsers) does not cost a new,
// regrown buffer per envelope.
func (r *Reader) readDelimited(item *Item, index int, atEOF bool) error {
	if atEOF {
		item.Payload = []byte{}
		return nil
	}
	if r.src == &r.whole {
		r.takeLine(item)
		return nil
	}
	p := r.startPayload(0)
	defer r.keepPayload(&p)
	size, err := r.readToNewline(item, &p)
	if err != nil {
		return r.readErr(index, "payload", err)
	}
	item.Payload = p.delimitedPayload(item.Oversized)
	item.Size = size
	return nil
}

// readToNewline stores the bytes up to the next newline (or the end of
// input) in p and returns how many there were.
func (r *Reader) readToNewline(item *Item, p *payloadBuf) (int64, error) {
	var size int64
	for {
		chunk, err := r.src.ReadSlice('\n')
		r.off += int64(len(chunk))
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		size += int64(len(chunk))
		p.store(item, chunk, size, r.limits.MaxItemBytes)
		if err == nil || errors.Is(err, io.EOF) {
			return size, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return size, err
		}
	}
}

// store appends a chunk of a delimited payload of size bytes so far,
// until it passes limit: the item is then oversized and nothing more is
// kept.
func (p *payloadBuf) store(item *Item, chunk []byte, size, limit int64) {
	if item.Oversized {
		return
	}
	if limit > 0 && size > limit {
		item.Oversized = true
		p.buf = p.buf[:0]
		return
	}
	if len(p.buf)+len(chunk) > cap(p.buf) {
		p.inArena = false
	}
	p.buf = appendDoubling(p.buf, chunk, limit)
}

// delimitedPayload is a delimited item's payload: none when oversized,
// empty (not nil) when the line was.
func (p *payloadBuf) delimitedPayload(oversized bool) []byte {
	switch {
	case oversized:
		return nil
	case p.buf == nil:
		return []byte{}
	}
	return p.payload()
}

// readLine returns the next header line without its newline, and whether the
// input ended instead of a newline. The line may alias the read buffer and is
// valid until the next read.
func (r *Reader) readLine(index int) ([]byte, bool, error) {
	start := r.off
	var long []byte // only for lines longer than the read buffer
	for {
		chunk, err := r.src.ReadSlice('\n')
		r.off += int64(len(chunk))
		if isReadFailure(err) {
			return nil, false, r.readErr(index, headerName(index), err)
		}
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		if len(long)+len(chunk) > r.limits.MaxHeaderBytes {
			return nil, false, r.headerTooLarge(index, start)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		if long != nil {
			chunk = append(long, chunk...)
		}
		return chunk, errors.Is(err, io.EOF), nil
	}
}

// isReadFailure reports an error of ReadSlice other than the end of input
// or a line longer than the buffer.
func isReadFailure(err error) bool {
	return err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull)
}

// headerName names the header line of item index, -1 for the envelope's.
func headerName(index int) string {
	if index < 0 {
		return "envelope header"
	}
	return "item header"
}

// skipSpace consumes the JSON whitespace Relay's parser skips before a
// header and reports how many bytes it skipped.
func (r *Reader) skipSpace() (int, error) {
	n := 0
	for {
		b, err := r.src.ReadByte()
		if err != nil {
			return n, err
		}
		if !isJSONSpace(b) {
			return n, r.src.UnreadByte()
		}
		r.off++
		n++
	}
}

func isJSONSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

func (r *Reader) truncated(index int, length, got int64) error {
	return &SyntaxError{
		Offset: r.off,
		Item:   index,
		Msg:    fmt.Sprintf("length says %d but only %d bytes remain", length, got),
		Err:    io.ErrUnexpectedEOF,
	}
}

func (r *Reader) headerTooLarge(index int, start int64) error {
	what := headerName(index)
	if index >= 0 {
		what = fmt.Sprintf("item %d header", index)
	}
	return fmt.Errorf("envelope: %s at offset %d is longer than %d bytes: %w", what, start, r.limits.MaxHeaderBytes, ErrHeaderTooLarge)
}

// readErr wraps a failure of the underlying reader (a body size limit, a
// broken gzip stream, a closed connection) with where it happened.
func (r *Reader) readErr(index int, what string, err error) error {
	if index < 0 {
		return fmt.Errorf("envelope: reading %s at offset %d: %w", what, r.off, err)
	}
	return fmt.Errorf("envelope: item %d: reading %s at offset %d: %w", index, what, r.off, err)
}

// decodeHeaderLine checks that line is exactly one JSON object, as Relay
// requires, and passes its members to fn.
func decodeHeaderLine(line []byte, start int64, index int, fn func(name string, value []byte) error) error {
	if err := checkOneObject(line, start, index); err != nil {
		return err
	}
	err := forEachMember(line, func(key, value []byte) error {
		return fn(memberName(key), value)
	})
	if err != nil {
		return &SyntaxError{Offset: start, Item: index, Msg: err.Error()}
	}
	return nil
}

// checkOneObject reports a line that is not one valid JSON object and
// nothing else.
func checkOneObject(line []byte, start int64, index int) error {
	what := headerName(index)
	if len(line) == 0 || line[0] != '{' {
		return &SyntaxError{Offset: start, Item: index, Msg: what + " is not a JSON object"}
	}
	// json.Valid allows trailing whitespace, Relay does not: a valid object
	// followed by stray bytes gets a precise message ("\r" is the common
	// case, CRLF line endings).
	if trimmed := bytes.TrimRight(line, " \t\r"); len(trimmed) < len(line) && json.Valid(trimmed) {
		return &SyntaxError{
			Offset: start + int64(len(trimmed)),
			Item:   index,
			Msg:    fmt.Sprintf("%s is followed by %q instead of a newline", what, line[len(trimmed)]),
		}
	}
	if !json.Valid(line) {
		return invalidJSON(line, start, index, what)
	}
	return nil
}

// invalidJSON describes why line is not valid JSON, and where.
func invalidJSON(line []byte, start int64, index int, what string) error {
	err := json.Unmarshal(line, new(json.RawMessage))
	offset := start
	var jerr *json.SyntaxError
	if errors.As(err, &jerr) {
		offset += jerr.Offset
	}
	return &SyntaxError{Offset: offset, Item: index, Msg: what + " is not valid JSON", Err: err}
}

func decodeItemHeader(line []byte, start int64, index int) (ItemHeader, error) {
	h := ItemHeader{Length: -1}
	if err := decodeHeaderLine(line, start, index, h.setMember); err != nil {
		return ItemHeader{}, err
	}
	if h.Type == "" {
		return ItemHeader{}, &SyntaxError{Offset: start, Item: index, Msg: `item header has no "type"`}
	}
	h.Raw = bytes.Clone(line)
	return h, nil
}

// setMember decodes one member of an item header; the others are kept in
// Raw only.
func (h *ItemHeader) setMember(name string, value []byte) error {
	var err error
	switch name {
	case "type":
		h.Type, err = stringValue(name, value)
	case "content_type":
		h.ContentType, err = stringValue(name, value)
	case "filename":
		h.Filename, err = stringValue(name, value)
	case "platform":
		h.Platform, err = stringValue(name, value)
	case "length":
		h.Length, err = lengthValue(value)
	}
	return err
}

// lengthValue decodes "length": a non-negative integer, or null for absent.
func lengthValue(raw []byte) (int64, error) {
	if raw[0] == 'n' {
		return -1, nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, fmt.Errorf(`"length" %s is not an integer byte count`, snippet(raw))
	}
	if n < 0 {
		return 0, fmt.Errorf(`"length" %d is negative`, n)
	}
	return n, nil
}

// appendDoubling is append with a doubling growth policy: append grows large
// slices by only 1.25×, which copies a multi-megabyte payload many times.
// The capacity never passes limit (when positive): a payload that may hold
// limit bytes must not cost up to twice that.
func appendDoubling(dst, src []byte, limit int64) []byte {
	if need := len(dst) + len(src); need > cap(dst) {
		grow := max(need, 2*cap(dst), 512)
		if limit > 0 && int64(grow) > limit {
			grow = max(need, int(limit))
		}
		grown := make([]byte, len(dst), grow)
		copy(grown, dst)
		dst = grown
	}
	return append(dst, src...)
}
