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
func Write(version int, clock art.Clock, threads []art.Thread, methods map[uint32]art.Method, events []art.Event, elapsed uint64) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*version\n%d\ndata-file-overflow=false\nclock=%s\nelapsed-time-usec=%d\nnum-method-calls=%d\nvm=art\n*threads\n",
		version, clock, elapsed, len(events))
	for _, th := range threads {
		fmt.Fprintf(&b, "%d\t%s\n", th.ID, th.Name)
	}
	b.WriteString("*methods\n")
	for id, m := range methods {
		fmt.Fprintf(&b, "%#x\t%s\t%s\t%s\t%s", id, m.Class, m.Name, m.Signature, m.Source)
		if m.Line != 0 {
			fmt.Fprintf(&b, "\t%d", m.Line)
		}
		b.WriteString("\n")
	}
	b.WriteString("*end\n")
	tidSize, times := 2, 1
	if version == 1 {
		tidSize = 1
	}
	if clock == art.ClockDual {
		times = 2
	}
	size := tidSize + 4 + 4*times
	offset := 16
	if version == 3 {
		offset = 32
	}
	head := make([]byte, offset)
	copy(head, "SLOW")
	binary.LittleEndian.PutUint16(head[4:], uint16(version))
	binary.LittleEndian.PutUint16(head[6:], uint16(offset))
	binary.LittleEndian.PutUint64(head[8:], 123_456_789)
	if version == 3 {
		binary.LittleEndian.PutUint16(head[16:], uint16(size))
	}
	b.Write(head)
	for _, e := range events {
		r := make([]byte, size)
		if tidSize == 1 {
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
		b.Write(r)
	}
	return b.Bytes()
}
