// Package arttest writes Android ART method traces for tests and
// benchmarks: the format translator/art reads, written from its
// description, with known threads, methods and times.
package arttest // import "github.com/sentryprofile/otelcol-sentryprofile/translator/art/arttest"

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/art"
)

// Write writes a method trace the way ART does, from the format's
// description: the text header, then "SLOW", the version, the offset of the
// records, the start time, (version 3) the record size, and the records.
// Events may name methods that methods lacks: their records are written and
// the methods left undeclared, as ART leaves out runtime-generated classes.
func Write(version int, clock art.Clock, threads []art.Thread, methods map[uint32]art.Method, events []art.Event, elapsed uint64) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*version\n%d\ndata-file-overflow=false\nclock=%s\nelapsed-time-usec=%d\nnum-method-calls=%d\nvm=art\n*threads\n",
		version, clock, elapsed, len(events))
	for _, th := range threads {
		fmt.Fprintf(&b, "%d\t%s\n", th.ID, th.Name)
	}
	b.WriteString("*methods\n")
	for id, m := range methods {
		b.WriteString(methodLine(id, m))
	}
	b.WriteString("*end\n")
	b.Write(binaryHeader(version, version, clock))
	for _, e := range events {
		b.Write(record(version, clock, e))
	}
	return b.Bytes()
}

// WriteStreaming writes a method trace in the streaming form ART writes
// when it streams, and Android Studio saves: the binary header (the
// version with its 0xF0 bits), then the records, each method declared and
// each thread named in an entry before its first record, and the summary
// (the text header without methods) last. Versions 2 and 3 only, thread ids
// above 0. As in Write, events may name methods that methods lacks.
func WriteStreaming(version int, clock art.Clock, threads []art.Thread, methods map[uint32]art.Method, events []art.Event, elapsed uint64) []byte {
	var b bytes.Buffer
	b.Write(binaryHeader(version, version|0xF0, clock))
	names := threadNames(threads)
	named, declared := map[uint32]bool{}, map[uint32]bool{}
	for _, e := range events {
		if name, ok := names[e.Thread]; ok && !named[e.Thread] {
			named[e.Thread] = true
			writeThreadEntry(&b, e.Thread, name)
		}
		if m, ok := methods[e.Method]; ok && !declared[e.Method] {
			declared[e.Method] = true
			writeMethodEntry(&b, methodLine(e.Method, m))
		}
		b.Write(record(version, clock, e))
	}
	summary := streamingSummary(version, clock, elapsed, threads)
	b.Write([]byte{0, 0, 3})
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(summary))))
	b.Write(summary)
	return b.Bytes()
}

// threadNames are the threads' names by id.
func threadNames(threads []art.Thread) map[uint32]string {
	names := make(map[uint32]string, len(threads))
	for _, th := range threads {
		names[th.ID] = th.Name
	}
	return names
}

// writeThreadEntry writes a thread entry: u2 0, u1 2, u2 thread id, u2
// length, the name.
func writeThreadEntry(b *bytes.Buffer, tid uint32, name string) {
	b.Write([]byte{0, 0, 2})
	b.Write(binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(nil, uint16(tid)), uint16(len(name))))
	b.WriteString(name)
}

// writeMethodEntry writes a method entry: u2 0, u1 1, u2 length, the line.
func writeMethodEntry(b *bytes.Buffer, line string) {
	b.Write([]byte{0, 0, 1})
	b.Write(binary.LittleEndian.AppendUint16(nil, uint16(len(line))))
	b.WriteString(line)
}

// streamingSummary is the text a streaming trace ends with: its version,
// settings and threads (the methods came as entries).
func streamingSummary(version int, clock art.Clock, elapsed uint64, threads []art.Thread) []byte {
	var summary bytes.Buffer
	fmt.Fprintf(&summary, "*version\n%d\ndata-file-overflow=false\nclock=%s\nelapsed-time-usec=%d\nvm=art\n*threads\n",
		version, clock, elapsed)
	for _, th := range threads {
		fmt.Fprintf(&summary, "%d\t%s\n", th.ID, th.Name)
	}
	summary.WriteString("*methods\n*end\n")
	return summary.Bytes()
}

// methodLine is a method's declaration line.
func methodLine(id uint32, m art.Method) string {
	line := fmt.Sprintf("%#x\t%s\t%s\t%s\t%s", id, m.Class, m.Name, m.Signature, m.Source)
	if m.Line != 0 {
		line += fmt.Sprintf("\t%d", m.Line)
	}
	return line + "\n"
}

// recordSize is the size of one record: a u1 (version 1) or u2 thread id,
// the u4 method and action, and one u4 time per clock.
func recordSize(version int, clock art.Clock) int {
	tidSize, times := 2, 1
	if version == 1 {
		tidSize = 1
	}
	if clock == art.ClockDual {
		times = 2
	}
	return tidSize + 4 + 4*times
}

// binaryHeader is "SLOW", the version as written (rawVersion), the header
// size, the start time and (version 3) the record size.
func binaryHeader(version, rawVersion int, clock art.Clock) []byte {
	offset := 16
	if version == 3 {
		offset = 32
	}
	head := make([]byte, offset)
	copy(head, "SLOW")
	binary.LittleEndian.PutUint16(head[4:], uint16(rawVersion))
	binary.LittleEndian.PutUint16(head[6:], uint16(offset))
	binary.LittleEndian.PutUint64(head[8:], 123_456_789)
	if version == 3 {
		binary.LittleEndian.PutUint16(head[16:], uint16(recordSize(version, clock)))
	}
	return head
}

// record is one record of e.
func record(version int, clock art.Clock, e art.Event) []byte {
	r := make([]byte, recordSize(version, clock))
	tidSize := 2
	if version == 1 {
		tidSize = 1
		r[0] = byte(e.Thread)
	} else {
		binary.LittleEndian.PutUint16(r, uint16(e.Thread))
	}
	binary.LittleEndian.PutUint32(r[tidSize:], e.Method|uint32(e.Action))
	switch clock {
	case art.ClockDual:
		binary.LittleEndian.PutUint32(r[tidSize+4:], e.CPU)
		binary.LittleEndian.PutUint32(r[tidSize+8:], e.Wall)
	case art.ClockWall:
		binary.LittleEndian.PutUint32(r[tidSize+4:], e.Wall)
	default:
		binary.LittleEndian.PutUint32(r[tidSize+4:], e.CPU)
	}
	return r
}
