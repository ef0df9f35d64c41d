package art

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// The streaming form is what ART writes while it streams a trace to a file
// or socket, and what Android Studio saves: the binary header comes first
// ("SLOW", u2 version with the 0xF0 bits set, u2 header size, u8 start
// time, and in version 3 u2 record size), then records interleaved with
// entries that start with a u2 zero (no thread has id 0) and a u1 kind:
//
//	1  a method declaration: u2 length, then a `*methods` line
//	2  a thread name: u2 thread id, u2 length, then the name
//	3  the summary, last: u4 length, then the text header (`*version`, the
//	   settings, `*threads`, an empty `*methods`, `*end`)
//
// The records' clock is only known from the summary, so the records are
// read in a second pass.
const streamingVersionBits = 0xF0

const (
	entryMethod  = 1
	entryThread  = 2
	entrySummary = 3
)

// decodeStreaming reads a trace in the streaming form.
func decodeStreaming(data []byte, limits Limits) (*Trace, error) {
	h, err := readStreamingHeader(data)
	if err != nil {
		return nil, err
	}
	t := &Trace{Methods: map[uint32]Method{}, StartMicros: binary.LittleEndian.Uint64(data[8:])}
	s := stream{data: data, start: h.offset, size: h.size}
	records, err := t.readEntries(s, limits)
	if err != nil {
		return nil, err
	}
	l, err := t.streamingLayout(data, h, records)
	if err != nil {
		return nil, err
	}
	if err := t.readRecords(s, l, records, limits); err != nil {
		return nil, err
	}
	return t, nil
}

// streamingLayout is the records' layout, checked against the binary
// header: the summary's version, the clock's record size, some records.
func (t *Trace) streamingLayout(data []byte, h streamingHeader, records int) (layout, error) {
	if t.Version != h.version {
		return layout{}, fmt.Errorf("%w: binary version %d, summary version %d", ErrBinary, h.version, t.Version)
	}
	l, err := t.recordLayout(data)
	if err != nil {
		return layout{}, err
	}
	if l.size != h.size {
		return layout{}, fmt.Errorf("%w: records of %d bytes, clock %s needs %d", ErrBinary, h.size, t.Clock, l.size)
	}
	if records == 0 {
		return layout{}, ErrNoRecords
	}
	return l, nil
}

// streamingHeader is what the binary header of a streaming trace says.
type streamingHeader struct {
	version      int
	offset, size int // of the first record, of each record
}

// readStreamingHeader reads "SLOW", u2 version (with the streaming bits),
// u2 offset of the first record, u8 start time, and (version 3) u2 record
// size.
func readStreamingHeader(data []byte) (streamingHeader, error) {
	if len(data) < 16 {
		return streamingHeader{}, fmt.Errorf("%w: streaming header of %d bytes", ErrBinary, len(data))
	}
	version, err := streamingVersion(binary.LittleEndian.Uint16(data[4:]))
	if err != nil {
		return streamingHeader{}, err
	}
	h := streamingHeader{version: version, offset: int(binary.LittleEndian.Uint16(data[6:]))}
	size, err := streamingRecordSize(data, h.version)
	if err != nil {
		return streamingHeader{}, err
	}
	h.size = size
	return h, h.check(len(data))
}

// check reports a header whose records start outside the data (of length
// bytes) or are too short for a record.
func (h streamingHeader) check(length int) error {
	if h.offset < 16 || h.offset > length || h.size < 10 {
		return fmt.Errorf("%w: records at offset %d of %d bytes, %d bytes each", ErrBinary, h.offset, length, h.size)
	}
	return nil
}

// streamingVersion reads the u2 version of a streaming trace: the
// streaming bits, then versions 2 (one clock) and 3 (dual clock) only,
// which ART streams; a version 1 record's u1 thread id could not be told
// from an entry.
func streamingVersion(raw uint16) (int, error) {
	if raw&streamingVersionBits != streamingVersionBits {
		return 0, fmt.Errorf("%w: starts with \"SLOW\" but version %#x is not a streaming version", ErrHeader, raw)
	}
	version := int(raw &^ streamingVersionBits)
	if version != 2 && version != 3 {
		return 0, fmt.Errorf("%w: streaming version %d", ErrVersion, version)
	}
	return version, nil
}

// streamingRecordSize is the size of a record: version 2 writes one clock
// (2 + 4 + 4 bytes); version 3 says.
func streamingRecordSize(data []byte, version int) (int, error) {
	if version != 3 {
		return 10, nil
	}
	if len(data) < 18 {
		return 0, fmt.Errorf("%w: streaming header of %d bytes", ErrBinary, len(data))
	}
	return int(binary.LittleEndian.Uint16(data[16:])), nil
}

// readRecords is the second pass: the records, in layout l, as t.Events.
func (t *Trace) readRecords(s stream, l layout, records int, limits Limits) error {
	t.Events = make([]Event, 0, records)
	undeclared := map[uint32]bool{}
	for i, r := range s.records() {
		e := l.decode(r)
		if e.Action > Unwind {
			return fmt.Errorf("%w: record %d: action %d", ErrBinary, i, e.Action)
		}
		if _, ok := t.Methods[e.Method]; !ok {
			if err := t.noteUndeclared(e.Method, undeclared, limits); err != nil {
				return fmt.Errorf("record %d: %w", i, err)
			}
		}
		t.Events = append(t.Events, e)
	}
	return nil
}

// readEntries is the first pass: it reads the method, thread and summary
// entries into t and counts the records. Threads the summary lists keep
// its names (the latest); threads only an entry names are added after.
func (t *Trace) readEntries(s stream, limits Limits) (records int, err error) {
	var named []Thread
	for pos := s.start; pos < len(s.data); {
		if s.u16(pos) != 0 {
			if pos+s.size > len(s.data) {
				break // a cut record, as in the regular form
			}
			if records, err = countRecord(records, limits); err != nil {
				return 0, err
			}
			pos += s.size
			continue
		}
		kind, body, next, err := s.entry(pos)
		if err != nil {
			return 0, err
		}
		if kind == entrySummary {
			return records, t.readSummary(body, named, limits)
		}
		if named, err = t.readEntry(kind, body, pos, s.u16(pos+3), named, limits); err != nil {
			return 0, err
		}
		pos = next
	}
	return 0, fmt.Errorf("%w: streaming trace without its summary (cut before tracing stopped?)", ErrHeader)
}

// readSummary reads the summary entry (the text header) and adds the
// threads only entries named.
func (t *Trace) readSummary(body []byte, named []Thread, limits Limits) error {
	if err := t.readText(string(body), limits); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	t.addThreads(named)
	return nil
}

// countRecord counts one more record, within limits.
func countRecord(records int, limits Limits) (int, error) {
	if records++; records > limits.MaxEvents {
		return 0, fmt.Errorf("%w: more than %d records", ErrTooLarge, limits.MaxEvents)
	}
	return records, nil
}

// readEntry reads the entry at byte pos: a method into t, or a thread (of
// thread id tid) into named.
func (t *Trace) readEntry(kind byte, body []byte, pos int, tid uint16, named []Thread, limits Limits) ([]Thread, error) {
	if kind == entryMethod {
		if err := t.addMethod(strings.TrimRight(string(body), "\n"), limits); err != nil {
			return named, fmt.Errorf("entry at byte %d: %w", pos, err)
		}
		return named, nil
	}
	if len(named) >= limits.MaxThreads {
		return named, fmt.Errorf("%w: more than %d threads", ErrTooLarge, limits.MaxThreads)
	}
	return append(named, Thread{ID: uint32(tid), Name: string(body)}), nil
}

// afterEntry is where the record or entry after the entry at pos starts;
// -1 at the summary, which ends the records, or a broken entry.
func (s stream) afterEntry(pos int) int {
	kind, _, next, err := s.entry(pos)
	if err != nil || kind == entrySummary {
		return -1
	}
	return next
}

// addThreads adds the threads the trace does not list yet.
func (t *Trace) addThreads(threads []Thread) {
	listed := make(map[uint32]bool, len(t.Threads))
	for _, th := range t.Threads {
		listed[th.ID] = true
	}
	for _, th := range threads {
		if !listed[th.ID] {
			listed[th.ID] = true
			t.Threads = append(t.Threads, th)
		}
	}
}

// stream walks the records and entries of a streaming trace.
type stream struct {
	data        []byte
	start, size int
}

// u16 is the little-endian u2 at pos, or 0 when fewer than 2 bytes are left
// (an entry then fails on its own bounds).
func (s stream) u16(pos int) uint16 {
	if pos+2 > len(s.data) {
		return 0
	}
	return binary.LittleEndian.Uint16(s.data[pos:])
}

// entry reads the entry at pos: its kind, its text, and where the next
// record or entry starts.
func (s stream) entry(pos int) (kind byte, body []byte, next int, err error) {
	if pos+3 > len(s.data) {
		return 0, nil, 0, fmt.Errorf("%w: entry at byte %d runs past the end", ErrBinary, pos)
	}
	kind = s.data[pos+2]
	from, known := entryTextStart(kind, pos)
	if !known {
		return 0, nil, 0, fmt.Errorf("%w: entry of unknown kind %d at byte %d", ErrBinary, kind, pos)
	}
	if from > len(s.data) {
		return 0, nil, 0, fmt.Errorf("%w: entry at byte %d runs past the end", ErrBinary, pos)
	}
	n := s.entryTextLen(kind, pos)
	if n > len(s.data)-from {
		return 0, nil, 0, fmt.Errorf("%w: entry at byte %d runs past the end", ErrBinary, pos)
	}
	return kind, s.data[from : from+n], from + n, nil
}

// entryTextStart is where the text of an entry of kind at pos starts:
// after u2 zero, u1 kind and u2 length (methods), or 4 bytes (threads:
// u2 thread id, u2 length; the summary: u4 length); false for an unknown
// kind.
func entryTextStart(kind byte, pos int) (int, bool) {
	switch kind {
	case entryMethod:
		return pos + 5, true
	case entryThread, entrySummary:
		return pos + 7, true
	}
	return 0, false
}

// entryTextLen is the length of the text of an entry of kind at pos, its
// header in bounds (entryTextStart).
func (s stream) entryTextLen(kind byte, pos int) int {
	switch kind {
	case entryMethod:
		return int(s.u16(pos + 3))
	case entryThread:
		return int(s.u16(pos + 5))
	}
	return int(binary.LittleEndian.Uint32(s.data[pos+3:]))
}

// records yields the records in order, skipping the entries; it stops at
// the summary, a cut record, or an entry readEntries already refused.
func (s stream) records() func(yield func(int, []byte) bool) {
	return func(yield func(int, []byte) bool) {
		n := 0
		for pos := s.start; pos < len(s.data); {
			if s.u16(pos) == 0 {
				if pos = s.afterEntry(pos); pos < 0 {
					return
				}
				continue
			}
			if pos+s.size > len(s.data) || !yield(n, s.data[pos:pos+s.size]) {
				return
			}
			n++
			pos += s.size
		}
	}
}
