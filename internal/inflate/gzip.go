package inflate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// The errors of the gzip container, worded as compress/gzip's.
var (
	ErrHeader   = errors.New("gzip: invalid header")
	ErrChecksum = errors.New("gzip: invalid checksum")
)

const (
	flagHdrCrc  = 1 << 1
	flagExtra   = 1 << 2
	flagName    = 1 << 3
	flagComment = 1 << 4
	// flagReserved are the flags RFC 1952 reserves.
	flagReserved = 0xe0

	// maxHeaderString is the longest name or comment, with its NUL, that
	// compress/gzip reads (its buffer); longer is ErrHeader there too.
	maxHeaderString = 512

	// hintRatio bounds the first allocation that ISIZE, which the client
	// writes, may ask for: DEFLATE can expand 1,032-fold, but real
	// envelopes expand under 16-fold, and more than that grows by doubling
	// as the bytes actually come.
	hintRatio = 16
	minHint   = 64 << 10
)

// Gunzip decodes the gzip stream in src (one member or several
// concatenated, as compress/gzip reads them by default) into dst's memory,
// reusing its capacity, and returns the output. At most limit bytes are
// written. Every member's CRC-32 and length are checked. On error the
// output holds what was decoded before it (the first limit bytes with
// ErrTooLarge): io.EOF for an empty src, io.ErrUnexpectedEOF for a stream
// cut short, ErrHeader, ErrChecksum, a *CorruptError, each wrapped with the
// member and offset where it was found.
func (d *Decoder) Gunzip(dst, src []byte, limit int) ([]byte, error) {
	if len(src) == 0 {
		return dst[:0], io.EOF
	}
	out := dst[:0]
	if hint := sizeHint(src, limit); cap(out) < hint {
		out = make([]byte, 0, hint)
	}
	pos := 0
	for member := 0; pos < len(src); member++ {
		var err error
		out, pos, err = d.member(out, src, pos, limit)
		if err != nil {
			return out, memberError(member, pos, err)
		}
	}
	return out, nil
}

// memberError gives err the member and offset it was found at; the
// sentinels stay reachable with errors.Is.
func memberError(member, pos int, err error) error {
	var c *CorruptError
	if errors.As(err, &c) {
		return fmt.Errorf("gzip member %d: %w", member, err)
	}
	return fmt.Errorf("gzip member %d at offset %d: %w", member, pos, err)
}

// sizeHint is the first allocation for src's output: the last member's
// ISIZE, within the limit and hintRatio times the input.
func sizeHint(src []byte, limit int) int {
	hint := minHint
	if len(src) >= 18 {
		hint = int(binary.LittleEndian.Uint32(src[len(src)-4:]))
	}
	return min(hint, limit, max(hintRatio*len(src), minHint)) + fastOutSlack
}

// member decodes the member starting at src[pos], appending to out; it
// returns the output and the position after the member.
func (d *Decoder) member(out, src []byte, pos, limit int) ([]byte, int, error) {
	n, err := HeaderLen(src[pos:])
	if err != nil {
		return out, pos, err
	}
	pos += n
	start := len(out)
	s := stream{in: src[pos:], base: int64(pos), out: out[:cap(out)], op: start, start: start, limit: limit}
	err = d.inflate(&s)
	out, pos = s.out[:s.op], pos+s.ip
	if err != nil {
		return out, pos, err
	}
	if err := checkTrailer(src[pos:], out[start:]); err != nil {
		return out, pos, err
	}
	return out, pos + 8, nil
}

// checkTrailer checks the CRC-32 and ISIZE at the start of t against the
// member's output.
func checkTrailer(t, data []byte) error {
	if len(t) < 8 {
		return io.ErrUnexpectedEOF
	}
	if binary.LittleEndian.Uint32(t) != crc32.ChecksumIEEE(data) || binary.LittleEndian.Uint32(t[4:]) != uint32(len(data)) {
		return ErrChecksum
	}
	return nil
}

// HeaderLen checks the gzip member header (RFC 1952 2.3) at the start of h
// and returns its length: io.ErrUnexpectedEOF when h ends inside it (a
// reader of a stream reads on), ErrHeader for one compress/gzip refuses or
// with a reserved flag set.
func HeaderLen(h []byte) (int, error) {
	if len(h) < 10 {
		return 0, io.ErrUnexpectedEOF
	}
	if !bytes.HasPrefix(h, gzipMagic[:]) {
		return 0, ErrHeader
	}
	n, err := headerFields(h, h[3])
	if err == nil && h[3]&flagReserved != 0 {
		err = errReservedFlags
	}
	return n, err
}

// headerFields returns the offset after the optional fields flags names.
func headerFields(h []byte, flags byte) (int, error) {
	n, err := skipExtra(h, flags)
	if err == nil {
		n, err = skipStrings(h, flags, n)
	}
	if err == nil && flags&flagHdrCrc != 0 {
		n, err = checkHeaderCRC(h, n)
	}
	return n, err
}

// errReservedFlags: RFC 1952 2.3.1.2 has a decoder refuse a member with a
// reserved flag set, as klauspost/compress does (compress/gzip ignores them).
var errReservedFlags = fmt.Errorf("%w: reserved flags set", ErrHeader)

// gzipMagic is how a member starts: ID1, ID2 and CM (deflate).
var gzipMagic = [...]byte{0x1f, 0x8b, 8}

// skipStrings returns the offset after FNAME and FCOMMENT, from h[n].
func skipStrings(h []byte, flags byte, n int) (int, error) {
	var err error
	for _, f := range [...]byte{flagName, flagComment} {
		if flags&f != 0 && err == nil {
			n, err = stringEnd(h, n)
		}
	}
	return n, err
}

// skipExtra returns the offset after the fixed header and FEXTRA.
func skipExtra(h []byte, flags byte) (int, error) {
	if flags&flagExtra == 0 {
		return 10, nil
	}
	if len(h) < 12 {
		return 0, io.ErrUnexpectedEOF
	}
	n := 12 + int(binary.LittleEndian.Uint16(h[10:]))
	if len(h) < n {
		return 0, io.ErrUnexpectedEOF
	}
	return n, nil
}

// checkHeaderCRC checks the FHCRC at h[n], the CRC-32's low half of the
// header before it.
func checkHeaderCRC(h []byte, n int) (int, error) {
	if len(h) < n+2 {
		return 0, io.ErrUnexpectedEOF
	}
	if binary.LittleEndian.Uint16(h[n:]) != uint16(crc32.ChecksumIEEE(h[:n])) {
		return 0, ErrHeader
	}
	return n + 2, nil
}

// stringEnd returns the offset after the NUL-terminated string at h[n].
func stringEnd(h []byte, n int) (int, error) {
	for i := 0; ; i++ {
		switch {
		case i >= maxHeaderString:
			return 0, ErrHeader
		case n+i >= len(h):
			return 0, io.ErrUnexpectedEOF
		case h[n+i] == 0:
			return n + i + 1, nil
		}
	}
}
