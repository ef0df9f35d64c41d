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

// tracePacket is what the decoder reads of one TracePacket.
type tracePacket struct {
	timestamp, sequenceID, sequenceFlags uint64
	clockID                              uint64
	interned, perfSample                 []byte
	hasPerfSample                        bool
}

// packet reads one TracePacket: its clock snapshot, its interned data
// into its sequence, and its PerfSample, resolved, into t.Samples.
func (t *Trace) packet(data []byte, sequences map[uint64]*sequence, limits Limits) error {
	p, err := t.readPacket(data)
	if err != nil {
		return err
	}
	seq := sequenceOf(sequences, p)
	if err := seq.internLimited(p.interned, limits); err != nil {
		return err
	}
	if !p.hasPerfSample {
		return nil
	}
	return t.addSample(p, seq, limits)
}

// addSample adds the PerfSample of p, its callstack resolved in seq.
func (t *Trace) addSample(p tracePacket, seq *sequence, limits Limits) error {
	if len(t.Samples) >= limits.MaxSamples {
		return fmt.Errorf("%w: more than %d samples", ErrTooLarge, limits.MaxSamples)
	}
	s, callstack, err := readPerfSample(p)
	if err != nil || callstack == 0 {
		return err // a sample without a callstack (skipped, lost records): nothing to place
	}
	s.Frames, err = seq.callstack(callstack, limits)
	if err != nil || len(s.Frames) == 0 {
		return err // an empty callstack: nothing to place either
	}
	t.Samples = append(t.Samples, s)
	return nil
}

// readPacket reads TracePacket.timestamp, .timestamp_clock_id,
// .trusted_packet_sequence_id, .sequence_flags, .interned_data and
// .perf_sample; a .clock_snapshot goes straight to t.
func (t *Trace) readPacket(data []byte) (tracePacket, error) {
	p := tracePacket{clockID: ClockBoottime}
	err := eachField(data, func(num protowire.Number, _ protowire.Type, v []byte, n uint64) error {
		switch num {
		case packetFieldTimestamp:
			p.timestamp = n
		case packetFieldTimestampClockID:
			p.clockID = n
		case packetFieldSequenceID:
			p.sequenceID = n
		case packetFieldSequenceFlags:
			p.sequenceFlags = n
		case packetFieldInternedData:
			p.interned = v
		case packetFieldPerfSample:
			p.perfSample, p.hasPerfSample = v, true
		case packetFieldClockSnapshot:
			return t.clockSnapshot(v)
		}
		return nil
	})
	return p, err
}

// sequenceOf is the interning state of p's sequence: a new one when the
// sequence is new or p clears its incremental state.
func sequenceOf(sequences map[uint64]*sequence, p tracePacket) *sequence {
	seq := sequences[p.sequenceID]
	if seq == nil || p.sequenceFlags&seqIncrementalStateCleared != 0 {
		seq = newSequence()
		sequences[p.sequenceID] = seq
	}
	return seq
}

// internLimited adds a packet's interned data (nil for none) to s, within
// limits.
func (s *sequence) internLimited(interned []byte, limits Limits) error {
	if interned == nil {
		return nil
	}
	if err := s.intern(interned); err != nil {
		return err
	}
	if s.size() > limits.MaxInterned {
		return fmt.Errorf("%w: more than %d interned entries", ErrTooLarge, limits.MaxInterned)
	}
	return nil
}

// readPerfSample reads PerfSample.pid, .tid and .callstack_iid (0 for
// none) of p, at p's time on p's clock.
func readPerfSample(p tracePacket) (Sample, uint64, error) {
	s := Sample{Timestamp: p.timestamp, Clock: uint32(p.clockID)}
	var callstack uint64
	err := eachField(p.perfSample, func(num protowire.Number, _ protowire.Type, _ []byte, n uint64) error {
		switch num {
		case perfSampleFieldPID:
			s.PID = uint32(n)
		case perfSampleFieldTID:
			s.TID = uint32(n)
		case perfSampleFieldCallstackIID:
			callstack = n
		}
		return nil
	})
	return s, callstack, err
}

// callstack resolves interned callstack id into its frames, leaf first
// (Callstack.frame_ids are the bottom, outermost, frame first; Sentry
// writes stacks leaf first).
func (s *sequence) callstack(id uint64, limits Limits) ([]Frame, error) {
	frameIDs, ok := s.callstacks[id]
	if !ok {
		return nil, fmt.Errorf("%w: callstack %d", ErrUnknownID, id)
	}
	if len(frameIDs) > limits.MaxDepth {
		return nil, fmt.Errorf("%w: a callstack of %d frames", ErrTooLarge, len(frameIDs))
	}
	if len(frameIDs) == 0 {
		return nil, nil
	}
	return s.leafFirst(frameIDs)
}

// leafFirst resolves the frames of a callstack, reversed.
func (s *sequence) leafFirst(frameIDs []uint64) ([]Frame, error) {
	frames := make([]Frame, len(frameIDs))
	for i, fid := range frameIDs {
		f, err := s.frame(fid)
		if err != nil {
			return nil, err
		}
		frames[len(frameIDs)-1-i] = f
	}
	return frames, nil
}

// frame resolves interned frame id: Frame.function_name_id,
// .rel_pc, and its mapping's build_id and path_string_ids.
func (s *sequence) frame(id uint64) (Frame, error) {
	f, ok := s.frames[id]
	if !ok {
		return Frame{}, fmt.Errorf("%w: frame %d", ErrUnknownID, id)
	}
	out := Frame{Function: s.functionNames[f.function], RelPC: f.relPC}
	if m, ok := s.mappings[f.mapping]; ok {
		out.BuildID = s.buildIDs[m.buildID]
		out.MappingPath = s.mappingPath(m)
	}
	return out, nil
}

// mappingPath joins a mapping's path components with "/".
func (s *sequence) mappingPath(m mapping) string {
	var path string
	for k, p := range m.paths {
		if k > 0 {
			path += "/"
		}
		path += s.mappingPaths[p]
	}
	return path
}

// intern reads InternedData: function names, mapping paths and build ids
// (InternedString), frames, callstacks and mappings, each by its iid.
func (s *sequence) intern(data []byte) error {
	return eachField(data, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case internedFieldFunctionNames:
			return internString(s.functionNames, v)
		case internedFieldMappingPaths:
			return internString(s.mappingPaths, v)
		case internedFieldBuildIDs:
			return internString(s.buildIDs, v)
		case internedFieldFrames:
			return s.internFrame(v)
		case internedFieldCallstacks:
			return s.internCallstack(v)
		case internedFieldMappings:
			return s.internMapping(v)
		}
		return nil
	})
}

// internString reads an InternedString (iid, str) into table.
func internString(table map[uint64]string, data []byte) error {
	var iid uint64
	var str string
	err := eachField(data, func(n protowire.Number, _ protowire.Type, b []byte, x uint64) error {
		switch n {
		case internedStringFieldIID:
			iid = x
		case internedStringFieldStr:
			str = string(b)
		}
		return nil
	})
	if err == nil {
		table[iid] = str
	}
	return err
}

// internFrame reads a Frame: iid, function_name_id, mapping_id, rel_pc.
func (s *sequence) internFrame(data []byte) error {
	var iid uint64
	var f frame
	err := eachField(data, func(n protowire.Number, _ protowire.Type, _ []byte, x uint64) error {
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
	})
	if err == nil {
		s.frames[iid] = f
	}
	return err
}

// internCallstack reads a Callstack: iid and frame_ids (packed or not).
func (s *sequence) internCallstack(data []byte) error {
	var iid uint64
	var frames []uint64
	err := eachField(data, func(n protowire.Number, typ protowire.Type, b []byte, x uint64) error {
		switch n {
		case callstackFieldIID:
			iid = x
		case callstackFieldFrameIDs:
			return appendRepeated(&frames, typ, b, x)
		}
		return nil
	})
	if err == nil {
		s.callstacks[iid] = frames
	}
	return err
}

// internMapping reads a Mapping: iid, build_id and path_string_ids
// (packed or not).
func (s *sequence) internMapping(data []byte) error {
	var iid uint64
	var m mapping
	err := eachField(data, func(n protowire.Number, typ protowire.Type, b []byte, x uint64) error {
		switch n {
		case mappingFieldIID:
			iid = x
		case mappingFieldBuildID:
			m.buildID = x
		case mappingFieldPathStringIDs:
			return appendRepeated(&m.paths, typ, b, x)
		}
		return nil
	})
	if err == nil {
		s.mappings[iid] = m
	}
	return err
}

// appendRepeated appends one field of a repeated varint to dst: x as sent
// alone, or the packed values of b; other wire types are ignored.
func appendRepeated(dst *[]uint64, typ protowire.Type, b []byte, x uint64) error {
	switch typ {
	case protowire.VarintType:
		*dst = append(*dst, x)
	case protowire.BytesType:
		return eachPacked(b, func(x uint64) { *dst = append(*dst, x) })
	}
	return nil
}

// clockSnapshot reads ClockSnapshot.clocks: the boot and realtime clocks
// at one moment give the offset between them (BootToRealtime).
func (t *Trace) clockSnapshot(data []byte) error {
	var clocks clockPair
	err := eachField(data, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != clockSnapshotFieldClocks || typ != protowire.BytesType {
			return nil
		}
		id, ts, err := readClock(v)
		clocks.put(id, ts)
		return err
	})
	if offset, ok := clocks.offset(); err == nil && ok {
		t.BootToRealtime, t.HasClocks = offset, true
	}
	return err
}

// clockPair is the boot and realtime clocks of one snapshot.
type clockPair struct {
	boot, realtime   uint64
	hasBoot, hasReal bool
}

// put reads one clock of the snapshot; other clocks are left alone.
func (c *clockPair) put(id, ts uint64) {
	switch id {
	case ClockBoottime:
		c.boot, c.hasBoot = ts, true
	case ClockRealtime:
		c.realtime, c.hasReal = ts, true
	}
}

// offset is realtime − boottime, when the snapshot had both.
func (c *clockPair) offset() (int64, bool) {
	return int64(c.realtime - c.boot), c.hasBoot && c.hasReal
}

// readClock reads ClockSnapshot.Clock.clock_id and .timestamp.
func readClock(data []byte) (id, ts uint64, err error) {
	err = eachField(data, func(n protowire.Number, _ protowire.Type, _ []byte, x uint64) error {
		switch n {
		case clockFieldID:
			id = x
		case clockFieldTimestamp:
			ts = x
		}
		return nil
	})
	return id, ts, err
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
		v, n, l := consumeValue(num, typ, data)
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

// consumeValue reads the value of a field of wire type typ at the start of
// data: a bytes field's into v, a varint or fixed field's into n; l is its
// length, negative when it is malformed.
func consumeValue(num protowire.Number, typ protowire.Type, data []byte) (v []byte, n uint64, l int) {
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
	return v, n, l
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
