package sentry

// pointerAuthenticationMask keeps the 36 address bits of an arm64e pointer
// and drops its pointer-authentication code, as Relay does (after
// plcrashreporter's PLCrashAsyncThread_arm.c).
const pointerAuthenticationMask = 0x0000000FFFFFFFFF

// Normalize corrects p in place without dropping any of its data:
//
//   - It strips pointer-authentication bits from frame instruction_addr,
//     symbol_addr and image_addr where Relay does: cocoa V1 profiles whose
//     device.architecture is arm64 or arm64e, and every cocoa V2 chunk (V2
//     carries no architecture). Relay itself masks only instruction_addr; the
//     other two are masked too so that an address and the symbol or image it
//     falls in stay comparable.
//   - It lower-cases and removes the dashes of event_id, profiler_id,
//     chunk_id and of each transaction's id and trace_id when they are
//     UUIDs (32 hex digits, or the dashed 8-4-4-4-12 form), and lower-cases
//     segment_id when it is hex. Anything else is left as sent for Validate
//     to report.
//
// It sorts nothing and applies none of Relay's lossy normalizations (trimming
// idle samples at thread edges, dropping threads with a single sample,
// dropping samples outside the transaction's range, dropping unreferenced
// thread metadata).
func Normalize(p *Profile) {
	if stripsPointerAuthentication(p) {
		for i := range p.Frames {
			f := &p.Frames[i]
			f.InstructionAddr &= pointerAuthenticationMask
			f.SymbolAddr &= pointerAuthenticationMask
			f.ImageAddr &= pointerAuthenticationMask
		}
	}
	p.EventID = canonicalUUID(p.EventID)
	p.ProfilerID = canonicalUUID(p.ProfilerID)
	p.ChunkID = canonicalUUID(p.ChunkID)
	for i := range p.Transactions {
		t := &p.Transactions[i]
		t.ID = canonicalUUID(t.ID)
		t.TraceID = canonicalUUID(t.TraceID)
		t.SegmentID = lowerHex(t.SegmentID)
	}
}

func stripsPointerAuthentication(p *Profile) bool {
	if p.Platform != "cocoa" {
		return false
	}
	switch p.Version {
	case VersionV1:
		return p.Device.Architecture == "arm64" || p.Device.Architecture == "arm64e"
	case VersionV2:
		return true
	}
	return false
}
