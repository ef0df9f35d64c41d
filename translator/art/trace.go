// Package art decodes Android Runtime (ART) method traces, the format of
// `Debug.startMethodTracing` that Sentry's Android SDK sends base64-encoded in
// `sampled_profile`: a text header (`*version`, key=value settings,
// `*threads`, `*methods`, `*end`) followed by a binary part ("SLOW", a
// version, the offset of the records, the start time) of method enter,
// exit and unwind records per thread with their wall and/or thread-CPU
// times. The format is the AOSP trace file format (dmtrace); versions 1 to 3
// and the `wall`, `thread-cpu` and `dual` clocks are read, in the regular
// form above and in the streaming form Android Studio saves (see
// stream.go).
package art // import "github.com/sentryprofile/otelcol-sentryprofile/translator/art"

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Clock is the trace's `clock=` setting.
type Clock string

const (
	ClockWall      Clock = "wall"
	ClockThreadCPU Clock = "thread-cpu"
	ClockDual      Clock = "dual"
)

// Action is what a record says of its method.
type Action uint8

const (
	Enter  Action = 0
	Exit   Action = 1
	Unwind Action = 2 // left by an exception
)

// Trace is a decoded method trace.
type Trace struct {
	Version int
	Clock   Clock
	// ElapsedMicros is `elapsed-time-usec`: how long tracing ran.
	ElapsedMicros uint64
	// StartMicros is the binary header's start time (microseconds on the
	// device's clock, not necessarily the Unix epoch).
	StartMicros uint64
	Threads     []Thread
	Methods     map[uint32]Method // by method id (the record's value without its action bits)
	Events      []Event
	// Undeclared are the method ids records name that the trace does not
	// declare, in order of first use. ART leaves out the methods of
	// runtime-generated classes (java.lang.reflect.Proxy subclasses, as
	// JNA and Retrofit create); their records are kept, and Method names
	// them as unknown.
	Undeclared []uint32
	// UndeclaredRecords counts the records that name an undeclared method.
	UndeclaredRecords int
}

// UnknownClass is the class Method gives a method the trace does not
// declare; its name is its id in hex ("0xf0"), as the trace writes ids.
const UnknownClass = "unknown"

// Method returns the method with the given id: the trace's declaration, or
// for an undeclared id a method of class UnknownClass named by the id.
func (t *Trace) Method(id uint32) Method {
	if m, ok := t.Methods[id]; ok {
		return m
	}
	return Method{Class: UnknownClass, Name: "0x" + strconv.FormatUint(uint64(id), 16)}
}

// Thread is one line of `*threads`.
type Thread struct {
	ID   uint32
	Name string
}

// Method is one line of `*methods`.
type Method struct {
	Class, Name, Signature, Source string
	Line                           uint32 // 0 when absent
}

// Event is one record.
type Event struct {
	Thread uint32
	Method uint32
	Action Action
	// Wall and CPU are microseconds since the trace start (wall) and the
	// thread's CPU time; a single-clock trace fills only its own.
	Wall, CPU uint32
}

// Limits bound a decode: a trace that exceeds them is refused, never
// partly kept.
type Limits struct {
	MaxEvents  int // records
	MaxMethods int
	MaxThreads int
}

// DefaultLimits hold what an SDK sends several times over (sentry-java
// caps a trace's file at a few MB, about 300,000 records of 14 bytes) and
// keep a translation's memory bounded: a record costs about 700 bytes on
// its way to pdata.
func DefaultLimits() Limits {
	return Limits{MaxEvents: 1_000_000, MaxMethods: 200_000, MaxThreads: 10_000}
}

// magic starts the binary part of a trace, and a streaming trace.
var magic = []byte("SLOW")

// Error reasons a trace is refused for.
var (
	ErrBase64    = errors.New("sampled_profile is not base64")
	ErrHeader    = errors.New("malformed trace header")
	ErrBinary    = errors.New("malformed trace records")
	ErrTooLarge  = errors.New("trace exceeds the decoder's limits")
	ErrVersion   = errors.New("unsupported trace version")
	ErrNoRecords = errors.New("trace has no records")
)

// DecodeBase64 decodes `sampled_profile`: standard base64, padded or not
// (sentry-java writes it without padding).
func DecodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBase64, err)
	}
	return b, nil
}

// Decode reads a trace file in either form: the regular one starts with
// its text header, the streaming one with "SLOW".
func Decode(data []byte, limits Limits) (*Trace, error) {
	if bytes.HasPrefix(data, magic) {
		return decodeStreaming(data, limits)
	}
	slow := bytes.Index(data, magic)
	if slow < 0 {
		return nil, fmt.Errorf("%w: no binary part (\"SLOW\")", ErrHeader)
	}
	return decodeRegular(data[:slow], data[slow:], limits)
}

// decodeRegular reads a trace in the regular form: the text header, then
// the binary part.
func decodeRegular(text, binaryPart []byte, limits Limits) (*Trace, error) {
	t := &Trace{Methods: map[uint32]Method{}}
	if err := t.readText(string(text), limits); err != nil {
		return nil, err
	}
	if err := t.readBinary(binaryPart, limits); err != nil {
		return nil, err
	}
	return t, nil
}

// readText reads the text header: its "*version" (the version, then
// key=value settings), "*threads" and "*methods" sections, up to "*end".
func (t *Trace) readText(text string, limits Limits) error {
	section := ""
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "*") {
			section = line
			continue
		}
		if line == "" {
			continue
		}
		if err := t.readTextLine(section, line, n+1, limits); err != nil {
			return err
		}
	}
	return t.checkSettings()
}

// readTextLine reads line n of a section of the text header.
func (t *Trace) readTextLine(section, line string, n int, limits Limits) error {
	switch section {
	case "*version":
		return t.readVersionLine(line, n)
	case "*threads":
		return t.readThreadLine(line, n, limits)
	case "*methods":
		return t.readMethodLine(line, n, limits)
	case "*end":
		return nil
	}
	return fmt.Errorf("%w: line %d: %q outside a section", ErrHeader, n, line)
}

// readMethodLine reads a method declaration of the header (line n).
func (t *Trace) readMethodLine(line string, n int, limits Limits) error {
	if err := t.addMethod(line, limits); err != nil {
		return fmt.Errorf("line %d: %w", n, err)
	}
	return nil
}

// readVersionLine reads the version (the section's first line), then a
// key=value setting: "clock", "elapsed-time-usec"; others are ignored.
func (t *Trace) readVersionLine(line string, n int) error {
	if t.Version == 0 {
		v, err := strconv.Atoi(line)
		if err != nil {
			return fmt.Errorf("%w: line %d: version %q", ErrHeader, n, line)
		}
		t.Version = v
		return nil
	}
	key, value, ok := strings.Cut(line, "=")
	if !ok {
		return fmt.Errorf("%w: line %d: %q is not key=value", ErrHeader, n, line)
	}
	return t.readSetting(key, value, n)
}

// readSetting reads the settings the decoder uses: "clock" and
// "elapsed-time-usec"; others are ignored.
func (t *Trace) readSetting(key, value string, n int) error {
	switch key {
	case "clock":
		t.Clock = Clock(value)
	case "elapsed-time-usec":
		v, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			return fmt.Errorf("%w: line %d: elapsed-time-usec %q", ErrHeader, n, value)
		}
		t.ElapsedMicros = v
	}
	return nil
}

// readThreadLine reads "<tid>\t<name>".
func (t *Trace) readThreadLine(line string, n int, limits Limits) error {
	id, name, ok := strings.Cut(line, "\t")
	tid, err := strconv.ParseUint(id, 10, 32)
	if !ok || err != nil {
		return fmt.Errorf("%w: line %d: thread %q", ErrHeader, n, line)
	}
	if len(t.Threads) >= limits.MaxThreads {
		return fmt.Errorf("%w: more than %d threads", ErrTooLarge, limits.MaxThreads)
	}
	t.Threads = append(t.Threads, Thread{ID: uint32(tid), Name: name})
	return nil
}

// checkSettings checks the header's version and clock, defaulting the clock.
func (t *Trace) checkSettings() error {
	if t.Version < 1 || t.Version > 3 {
		return fmt.Errorf("%w: %d", ErrVersion, t.Version)
	}
	return t.checkClock()
}

// checkClock checks the header's clock: "wall", "thread-cpu" (the
// format's default, when the header names none) or "dual".
func (t *Trace) checkClock() error {
	switch t.Clock {
	case ClockWall, ClockThreadCPU, ClockDual:
	case "":
		t.Clock = ClockThreadCPU // the format's default
	default:
		return fmt.Errorf("%w: clock %q", ErrHeader, t.Clock)
	}
	return nil
}

// addMethod reads one method declaration: id (hex, "0x" optional), class,
// name, signature, and optionally the source file and line, tab-separated.
func (t *Trace) addMethod(line string, limits Limits) error {
	fields := strings.Split(line, "\t")
	if len(fields) < 4 {
		return fmt.Errorf("%w: method %q has %d fields", ErrHeader, line, len(fields))
	}
	id, err := strconv.ParseUint(strings.TrimPrefix(fields[0], "0x"), 16, 32)
	if err != nil {
		return fmt.Errorf("%w: method id %q", ErrHeader, fields[0])
	}
	if len(t.Methods) >= limits.MaxMethods {
		return fmt.Errorf("%w: more than %d methods", ErrTooLarge, limits.MaxMethods)
	}
	t.Methods[uint32(id)] = methodOf(fields)
	return nil
}

// methodOf reads a method's class, name, signature and, when given, its
// source file and line (a line that is no number is left out).
func methodOf(fields []string) Method {
	m := Method{Class: fields[1], Name: fields[2], Signature: fields[3]}
	if len(fields) > 4 {
		m.Source = fields[4]
	}
	if len(fields) > 5 {
		if l, err := strconv.ParseUint(fields[5], 10, 32); err == nil {
			m.Line = uint32(l)
		}
	}
	return m
}

// binaryRecords reads the binary header: the records and their layout.
func (t *Trace) binaryRecords(b []byte) ([]byte, layout, error) {
	if len(b) < 16 {
		return nil, layout{}, fmt.Errorf("%w: binary header of %d bytes", ErrBinary, len(b))
	}
	version := int(binary.LittleEndian.Uint16(b[4:]))
	offset := int(binary.LittleEndian.Uint16(b[6:]))
	t.StartMicros = binary.LittleEndian.Uint64(b[8:])
	if version != t.Version {
		return nil, layout{}, fmt.Errorf("%w: binary version %d, header version %d", ErrBinary, version, t.Version)
	}
	l, err := t.recordLayout(b)
	if err != nil {
		return nil, layout{}, err
	}
	records, err := recordsAt(b, offset)
	return records, l, err
}

// recordsAt is the records of a binary part, from offset (after the
// 16-byte header, inside b).
func recordsAt(b []byte, offset int) ([]byte, error) {
	if offset < 16 || offset > len(b) {
		return nil, fmt.Errorf("%w: records at offset %d of %d bytes", ErrBinary, offset, len(b))
	}
	return b[offset:], nil
}

// clockLayout is where a record's fields are for the trace's version (the
// thread id's size) and clock (one time or both), and its size.
func (t *Trace) clockLayout() layout {
	l := layout{tidSize: 2}
	if t.Version == 1 {
		l.tidSize = 1
	}
	switch t.Clock {
	case ClockDual:
		l.cpuAt, l.wallAt = l.tidSize+4, l.tidSize+8
	case ClockWall:
		l.wallAt = l.tidSize + 4
	default:
		l.cpuAt = l.tidSize + 4
	}
	l.size = max(l.cpuAt, l.wallAt) + 4
	return l
}

// recordCount is how many whole records of size bytes there are in
// length bytes: some, within limits.
func recordCount(length, size int, limits Limits) (int, error) {
	n := length / size
	if n == 0 {
		return 0, ErrNoRecords
	}
	if n > limits.MaxEvents {
		return 0, fmt.Errorf("%w: %d records, limit %d", ErrTooLarge, n, limits.MaxEvents)
	}
	return n, nil
}

// readBinary reads "SLOW", u2 version, u2 offset of the first record, u8
// start time in microseconds, and (version 3) u2 record size, all little
// endian; then the records.
func (t *Trace) readBinary(b []byte, limits Limits) error {
	records, layout, err := t.binaryRecords(b)
	if err != nil {
		return err
	}
	n, err := recordCount(len(records), layout.size, limits)
	if err != nil {
		return err
	}
	t.Events = make([]Event, 0, n)
	undeclared := map[uint32]bool{}
	for i := range n {
		// The same steps as for the streaming form, spelled out in both
		// loops: a call per record costs a tenth of the decode.
		e := layout.decode(records[i*layout.size : (i+1)*layout.size])
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

// layout is the shape of a record: a thread id (u1 in version 1, else
// u2), u4 method id with the action in its two low bits, and u4 times (the
// CPU time first when the clock is dual), in size bytes. cpuAt and wallAt
// are the offsets of the times, 0 for a time the clock does not write.
type layout struct {
	tidSize, size int
	cpuAt, wallAt int
}

// recordLayout is the layout of t's records; head is the binary header,
// which in version 3 declares the record size at offset 16.
func (t *Trace) recordLayout(head []byte) (layout, error) {
	l := t.clockLayout()
	if t.Version == 3 {
		if len(head) < 18 {
			return l, fmt.Errorf("%w: binary header of %d bytes", ErrBinary, len(head))
		}
		declared := int(binary.LittleEndian.Uint16(head[16:]))
		if declared < l.size {
			return l, fmt.Errorf("%w: record size %d, %d needed for clock %s", ErrBinary, declared, l.size, t.Clock)
		}
		l.size = declared
	}
	return l, nil
}

// decode reads one record of l.size bytes.
func (l layout) decode(r []byte) Event {
	var e Event
	if l.tidSize == 1 {
		e.Thread = uint32(r[0])
	} else {
		e.Thread = uint32(binary.LittleEndian.Uint16(r))
	}
	v := binary.LittleEndian.Uint32(r[l.tidSize:])
	e.Method, e.Action = v&^3, Action(v&3)
	if l.cpuAt > 0 {
		e.CPU = binary.LittleEndian.Uint32(r[l.cpuAt:])
	}
	if l.wallAt > 0 {
		e.Wall = binary.LittleEndian.Uint32(r[l.wallAt:])
	}
	return e
}

// noteUndeclared counts a record of an undeclared method and lists the
// method on its first record. A trace that names more methods than
// limits.MaxMethods, declared or not, is refused.
func (t *Trace) noteUndeclared(id uint32, undeclared map[uint32]bool, limits Limits) error {
	t.UndeclaredRecords++
	if undeclared[id] {
		return nil
	}
	if len(t.Methods)+len(t.Undeclared) >= limits.MaxMethods {
		return fmt.Errorf("%w: more than %d methods", ErrTooLarge, limits.MaxMethods)
	}
	undeclared[id] = true
	t.Undeclared = append(t.Undeclared, id)
	return nil
}
