// Package perfetto reads the CPU-profile samples of a Perfetto trace, the
// format Android 15+'s ProfilingManager writes and Sentry's Android SDK sends
// in `profile_chunk` items with content type application/x-perfetto-trace:
// TracePackets carrying `PerfSample`s (pid, tid, an interned callstack), the
// interned frames, function names, mappings and build ids of each packet
// sequence, and `ClockSnapshot`s that relate the boot clock of the samples
// to the realtime clock.
//
// It is a reader of the public protobuf field numbers with the protowire
// package: no generated code, and every field it does not use is skipped.
package perfetto // import "github.com/sentryprofile/otelcol-sentryprofile/translator/perfetto"

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of perfetto.protos messages (trace.proto, trace_packet.proto,
// interned_data.proto, profile_common.proto, profile_packet.proto,
// clock_snapshot.proto).
const (
	traceFieldPacket = 1

	packetFieldClockSnapshot    = 6
	packetFieldTimestamp        = 8
	packetFieldSequenceID       = 10
	packetFieldInternedData     = 12
	packetFieldSequenceFlags    = 13
	packetFieldTimestampClockID = 58
	packetFieldPerfSample       = 66

	internedFieldFunctionNames = 5
	internedFieldFrames        = 6
	internedFieldCallstacks    = 7
	internedFieldBuildIDs      = 16
	internedFieldMappingPaths  = 17
	internedFieldMappings      = 19

	internedStringFieldIID = 1
	internedStringFieldStr = 2

	frameFieldIID        = 1
	frameFieldFunctionID = 2
	frameFieldMappingID  = 3
	frameFieldRelPC      = 4

	callstackFieldIID      = 1
	callstackFieldFrameIDs = 2

	mappingFieldIID           = 1
	mappingFieldBuildID       = 2
	mappingFieldPathStringIDs = 7

	perfSampleFieldPID          = 2
	perfSampleFieldTID          = 3
	perfSampleFieldCallstackIID = 4

	clockSnapshotFieldClocks = 1
	clockFieldID             = 1
	clockFieldTimestamp      = 2

	// SEQ_INCREMENTAL_STATE_CLEARED: the sequence's interned data starts
	// over.
	seqIncrementalStateCleared = 1

	// BuiltinClocks.
	ClockRealtime = 1
	ClockBoottime = 6
)

// Frame is one resolved frame of a sample.
type Frame struct {
	Function    string // the interned function name; "" when the trace has none
	MappingPath string // the mapping's path (joined path components)
	BuildID     string // the mapping's build id, as bytes of the trace (often hex)
	RelPC       uint64 // the program counter relative to the mapping
}

// Sample is one PerfSample with its callstack resolved, leaf first.
type Sample struct {
	PID, TID uint32
	// Timestamp is nanoseconds on Clock (the packet's timestamp clock,
	// the boot clock unless the packet says otherwise).
	Timestamp uint64
	Clock     uint32
	Frames    []Frame
}

// Trace is what a trace says of its CPU samples.
type Trace struct {
	Samples []Sample
	// BootToRealtime is realtime − boottime of the last clock snapshot
	// that had both, in nanoseconds; HasClocks says whether there was one.
	BootToRealtime int64
	HasClocks      bool
}

// Limits bound a decode.
type Limits struct {
	MaxSamples  int
	MaxInterned int // interned entries of each kind, per sequence
	MaxDepth    int // frames per callstack
}

// DefaultLimits returns the decoder's bounds: a minute of sampling at
// 100 Hz on a few dozen threads is tens of thousands of samples.
func DefaultLimits() Limits {
	return Limits{MaxSamples: 1_000_000, MaxInterned: 1_000_000, MaxDepth: 4096}
}

// Errors a trace is refused with.
var (
	ErrMalformed = errors.New("malformed Perfetto trace")
	ErrTooLarge  = errors.New("trace exceeds the Perfetto decoder's limits")
	ErrUnknownID = errors.New("trace refers to a Perfetto interned id it never defined")
)

type mapping struct {
	buildID uint64
	paths   []uint64
}

type frame struct {
	function, mapping, relPC uint64
}

// sequence is the interning state of one packet sequence.
type sequence struct {
	functionNames, mappingPaths, buildIDs map[uint64]string
	mappings                              map[uint64]mapping
	frames                                map[uint64]frame
	callstacks                            map[uint64][]uint64
}

func newSequence() *sequence {
	return &sequence{
		functionNames: map[uint64]string{}, mappingPaths: map[uint64]string{}, buildIDs: map[uint64]string{},
		mappings: map[uint64]mapping{}, frames: map[uint64]frame{}, callstacks: map[uint64][]uint64{},
	}
}

func (s *sequence) size() int {
	return max(len(s.functionNames), len(s.mappingPaths), len(s.buildIDs), len(s.mappings), len(s.frames), len(s.callstacks))
}

// Decode reads a trace.
func Decode(data []byte, limits Limits) (*Trace, error) {
	t := &Trace{}
	sequences := map[uint64]*sequence{}
	err := eachField(data, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != traceFieldPacket || typ != protowire.BytesType {
			return nil
		}
		return t.packet(v, sequences, limits)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Trace) packet(data []byte, sequences map[uint64]*sequence, limits Limits) error {
	var (
		ts, seqID, flags uint64
		clockID          uint64 = ClockBoottime
		interned, perf   []byte
		hasPerf          bool
	)
	err := eachField(data, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch num {
		case packetFieldTimestamp:
			ts = n
		case packetFieldTimestampClockID:
			clockID = n
		case packetFieldSequenceID:
			seqID = n
		case packetFieldSequenceFlags:
			flags = n
		case packetFieldInternedData:
			interned = v
		case packetFieldPerfSample:
			perf, hasPerf = v, true
		case packetFieldClockSnapshot:
			return t.clockSnapshot(v)
		}
		return nil
	})
	if err != nil {
		return err
	}
	seq := sequences[seqID]
	if seq == nil || flags&seqIncrementalStateCleared != 0 {
		seq = newSequence()
		sequences[seqID] = seq
	}
	if interned != nil {
		if err := seq.intern(interned); err != nil {
			return err
		}
		if seq.size() > limits.MaxInterned {
			return fmt.Errorf("%w: more than %d interned entries", ErrTooLarge, limits.MaxInterned)
		}
	}
	if !hasPerf {
		return nil
	}
	if len(t.Samples) >= limits.MaxSamples {
		return fmt.Errorf("%w: more than %d samples", ErrTooLarge, limits.MaxSamples)
	}
	s := Sample{Timestamp: ts, Clock: uint32(clockID)}
	var callstack uint64
	if err := eachField(perf, func(num protowire.Number, _ protowire.Type, _ []byte, n uint64) error {
		switch num {
		case perfSampleFieldPID:
			s.PID = uint32(n)
		case perfSampleFieldTID:
			s.TID = uint32(n)
		case perfSampleFieldCallstackIID:
			callstack = n
		}
		return nil
	}); err != nil {
		return err
	}
	if callstack == 0 {
		return nil // a sample without a callstack (skipped, lost records): nothing to place
	}
	frames, ok := seq.callstacks[callstack]
	if !ok {
		return fmt.Errorf("%w: callstack %d", ErrUnknownID, callstack)
	}
	if len(frames) == 0 {
		return nil // an empty callstack: nothing to place either
	}
	if len(frames) > limits.MaxDepth {
		return fmt.Errorf("%w: a callstack of %d frames", ErrTooLarge, len(frames))
	}
	// frame_ids are the bottom (outermost) frame first: reversed, leaf
	// first as Sentry writes stacks.
	s.Frames = make([]Frame, len(frames))
	for i, id := range frames {
		f, ok := seq.frames[id]
		if !ok {
			return fmt.Errorf("%w: frame %d", ErrUnknownID, id)
		}
		out := Frame{Function: seq.functionNames[f.function], RelPC: f.relPC}
		if m, ok := seq.mappings[f.mapping]; ok {
			out.BuildID = seq.buildIDs[m.buildID]
			for k, p := range m.paths {
				if k > 0 {
					out.MappingPath += "/"
				}
				out.MappingPath += seq.mappingPaths[p]
			}
		}
		s.Frames[len(frames)-1-i] = out
	}
	t.Samples = append(t.Samples, s)
	return nil
}

func (s *sequence) intern(data []byte) error {
	return eachField(data, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case internedFieldFunctionNames, internedFieldMappingPaths, internedFieldBuildIDs:
			var iid uint64
			var str string
			if err := eachField(v, func(n protowire.Number, _ protowire.Type, b []byte, x uint64) error {
				switch n {
				case internedStringFieldIID:
					iid = x
				case internedStringFieldStr:
					str = string(b)
				}
				return nil
			}); err != nil {
				return err
			}
			table := map[protowire.Number]map[uint64]string{
				internedFieldFunctionNames: s.functionNames, internedFieldMappingPaths: s.mappingPaths, internedFieldBuildIDs: s.buildIDs,
			}[num]
			table[iid] = str
		case internedFieldFrames:
			var iid uint64
			var f frame
			if err := eachField(v, func(n protowire.Number, _ protowire.Type, _ []byte, x uint64) error {
				switch n {
				case frameFieldIID:
					iid = x
				case frameFieldFunctionID:
					f.function = x
				case frameFieldMappingID:
					f.mapping = x
				case frameFieldRelPC:
					f.relPC = x
				}
				return nil
			}); err != nil {
				return err
			}
			s.frames[iid] = f
		case internedFieldCallstacks:
			var iid uint64
			var frames []uint64
			if err := eachField(v, func(n protowire.Number, typ protowire.Type, b []byte, x uint64) error {
				switch {
				case n == callstackFieldIID:
					iid = x
				case n == callstackFieldFrameIDs && typ == protowire.VarintType:
					frames = append(frames, x)
				case n == callstackFieldFrameIDs && typ == protowire.BytesType: // packed
					return eachPacked(b, func(x uint64) { frames = append(frames, x) })
				}
				return nil
			}); err != nil {
				return err
			}
			s.callstacks[iid] = frames
		case internedFieldMappings:
			var iid uint64
			var m mapping
			if err := eachField(v, func(n protowire.Number, typ protowire.Type, b []byte, x uint64) error {
				switch {
				case n == mappingFieldIID:
					iid = x
				case n == mappingFieldBuildID:
					m.buildID = x
				case n == mappingFieldPathStringIDs && typ == protowire.VarintType:
					m.paths = append(m.paths, x)
				case n == mappingFieldPathStringIDs && typ == protowire.BytesType:
					return eachPacked(b, func(x uint64) { m.paths = append(m.paths, x) })
				}
				return nil
			}); err != nil {
				return err
			}
			s.mappings[iid] = m
		}
		return nil
	})
}

func (t *Trace) clockSnapshot(data []byte) error {
	var boot, realtime uint64
	var hasBoot, hasReal bool
	err := eachField(data, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != clockSnapshotFieldClocks || typ != protowire.BytesType {
			return nil
		}
		var id, ts uint64
		if err := eachField(v, func(n protowire.Number, _ protowire.Type, _ []byte, x uint64) error {
			switch n {
			case clockFieldID:
				id = x
			case clockFieldTimestamp:
				ts = x
			}
			return nil
		}); err != nil {
			return err
		}
		switch id {
		case ClockBoottime:
			boot, hasBoot = ts, true
		case ClockRealtime:
			realtime, hasReal = ts, true
		}
		return nil
	})
	if err == nil && hasBoot && hasReal {
		t.BootToRealtime, t.HasClocks = int64(realtime-boot), true
	}
	return err
}

// RealtimeNanos is a sample's time on the realtime clock (Unix
// nanoseconds), or false when the trace cannot say.
func (t *Trace) RealtimeNanos(s Sample) (int64, bool) {
	switch {
	case s.Clock == ClockRealtime:
		return int64(s.Timestamp), true
	case s.Clock == ClockBoottime && t.HasClocks:
		return int64(s.Timestamp) + t.BootToRealtime, true
	}
	return 0, false
}

// eachField calls fn for every field of a message: v holds a bytes field's
// value, n a varint or fixed field's.
func eachField(data []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	for len(data) > 0 {
		num, typ, l := protowire.ConsumeTag(data)
		if l < 0 {
			return fmt.Errorf("%w: %w", ErrMalformed, protowire.ParseError(l))
		}
		data = data[l:]
		var v []byte
		var n uint64
		switch typ {
		case protowire.VarintType:
			n, l = protowire.ConsumeVarint(data)
		case protowire.Fixed64Type:
			n, l = protowire.ConsumeFixed64(data)
		case protowire.Fixed32Type:
			var x uint32
			x, l = protowire.ConsumeFixed32(data)
			n = uint64(x)
		case protowire.BytesType:
			v, l = protowire.ConsumeBytes(data)
		default:
			l = protowire.ConsumeFieldValue(num, typ, data)
		}
		if l < 0 {
			return fmt.Errorf("%w: field %d: %w", ErrMalformed, num, protowire.ParseError(l))
		}
		data = data[l:]
		if err := fn(num, typ, v, n); err != nil {
			return err
		}
	}
	return nil
}

func eachPacked(data []byte, fn func(uint64)) error {
	for len(data) > 0 {
		x, l := protowire.ConsumeVarint(data)
		if l < 0 {
			return fmt.Errorf("%w: packed varint: %w", ErrMalformed, protowire.ParseError(l))
		}
		fn(x)
		data = data[l:]
	}
	return nil
}
