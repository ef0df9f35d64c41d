// Package perfettotest writes Perfetto traces for tests: CPU samples of
// two threads in two packet sequences with interned data, from Perfetto's
// documented field numbers, with the protowire primitives.
package perfettotest // import "github.com/sentryprofile/otelcol-sentryprofile/translator/perfetto/perfettotest"

import "google.golang.org/protobuf/encoding/protowire"

// Field numbers of the perfetto.protos messages written, from Perfetto's
// public protos (written out here, not shared with the reader under test).
const (
	traceFieldPacket = 1

	packetFieldClockSnapshot = 6
	packetFieldTimestamp     = 8
	packetFieldSequenceID    = 10
	packetFieldInternedData  = 12
	packetFieldSequenceFlags = 13
	packetFieldPerfSample    = 66

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

	seqIncrementalStateCleared = 1
	clockRealtime              = 1
	clockBoottime              = 6
)

// msg writes a message from its fields, with the protowire primitives.
type msg []byte

func (m msg) varint(num protowire.Number, v uint64) msg {
	m = protowire.AppendTag(m, num, protowire.VarintType)
	return protowire.AppendVarint(m, v)
}

func (m msg) bytes(num protowire.Number, v []byte) msg {
	m = protowire.AppendTag(m, num, protowire.BytesType)
	return protowire.AppendBytes(m, v)
}

func internedString(iid uint64, s string) msg {
	return msg{}.varint(internedStringFieldIID, iid).bytes(internedStringFieldStr, []byte(s))
}

// Trace is a trace as ProfilingManager writes one, from the documented field
// numbers: a clock snapshot, two packet sequences that each intern their
// own strings, frames, mappings and callstacks (one packed, one not), a
// sequence whose interned state is cleared and re-emitted, and samples.
func Trace() []byte {
	const boot, realtime = 1_000_000_000, 1_795_000_000_000_000_000
	clocks := msg{}.
		bytes(clockSnapshotFieldClocks, msg{}.varint(clockFieldID, clockBoottime).varint(clockFieldTimestamp, boot)).
		bytes(clockSnapshotFieldClocks, msg{}.varint(clockFieldID, clockRealtime).varint(clockFieldTimestamp, realtime))
	// Sequence 1: a Java frame (in boot.oat) under a native one (libc).
	interned1 := msg{}.
		bytes(internedFieldFunctionNames, internedString(1, "com.example.App.render")).
		bytes(internedFieldFunctionNames, internedString(2, "__start_thread")).
		bytes(internedFieldMappingPaths, internedString(1, "system")).
		bytes(internedFieldMappingPaths, internedString(2, "framework")).
		bytes(internedFieldMappingPaths, internedString(3, "boot.oat")).
		bytes(internedFieldMappingPaths, internedString(4, "libc.so")).
		bytes(internedFieldBuildIDs, internedString(1, "0a1b2c")).
		bytes(internedFieldMappings, msg{}.varint(mappingFieldIID, 1).varint(mappingFieldPathStringIDs, 1).varint(mappingFieldPathStringIDs, 2).varint(mappingFieldPathStringIDs, 3)).
		bytes(internedFieldMappings, msg{}.varint(mappingFieldIID, 2).varint(mappingFieldBuildID, 1).varint(mappingFieldPathStringIDs, 4)).
		bytes(internedFieldFrames, msg{}.varint(frameFieldIID, 1).varint(frameFieldFunctionID, 1).varint(frameFieldMappingID, 1).varint(frameFieldRelPC, 0x40)).
		bytes(internedFieldFrames, msg{}.varint(frameFieldIID, 2).varint(frameFieldFunctionID, 2).varint(frameFieldMappingID, 2).varint(frameFieldRelPC, 0x1234)).
		bytes(internedFieldCallstacks, msg{}.varint(callstackFieldIID, 1).bytes(callstackFieldFrameIDs, protowire.AppendVarint(protowire.AppendVarint(nil, 2), 1)))
	// Sequence 2: its own ids, the same numbers meaning something else.
	interned2 := msg{}.
		bytes(internedFieldFunctionNames, internedString(1, "worker.loop")).
		bytes(internedFieldFrames, msg{}.varint(frameFieldIID, 1).varint(frameFieldFunctionID, 1)).
		bytes(internedFieldCallstacks, msg{}.varint(callstackFieldIID, 1).varint(callstackFieldFrameIDs, 1))
	sample := func(tid, callstack uint64) msg {
		return msg{}.varint(perfSampleFieldPID, 42).varint(perfSampleFieldTID, tid).varint(perfSampleFieldCallstackIID, callstack)
	}
	packet := func(seq, ts uint64, fields msg) []byte {
		return msg{}.varint(packetFieldSequenceID, seq).varint(packetFieldTimestamp, ts).append(fields)
	}
	var trace msg
	for _, p := range [][]byte{
		msg{}.bytes(packetFieldClockSnapshot, clocks),
		packet(1, boot+10, msg{}.varint(packetFieldSequenceFlags, seqIncrementalStateCleared).bytes(packetFieldInternedData, interned1).bytes(packetFieldPerfSample, sample(42, 1))),
		packet(2, boot+20, msg{}.varint(packetFieldSequenceFlags, seqIncrementalStateCleared).bytes(packetFieldInternedData, interned2).bytes(packetFieldPerfSample, sample(43, 1))),
		packet(1, boot+30, msg{}.bytes(packetFieldPerfSample, sample(42, 1))),
		packet(1, boot+40, msg{}.bytes(packetFieldPerfSample, msg{}.varint(perfSampleFieldTID, 42))), // no callstack: skipped
	} {
		trace = trace.bytes(traceFieldPacket, p)
	}
	return trace
}

func (m msg) append(o msg) msg { return append(m, o...) }
