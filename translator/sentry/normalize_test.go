package sentry

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNormalizePointerAuthentication(t *testing.T) {
	const signed = 0xa722447ffffffffc
	frame := func() []Frame {
		return []Frame{{InstructionAddr: signed, SymbolAddr: 0x8000000180433054, ImageAddr: 0x7f00000102dc8000}, {}}
	}
	stripped := []Frame{{InstructionAddr: 0xffffffffc, SymbolAddr: 0x180433054, ImageAddr: 0x102dc8000}, {}}
	tests := []struct {
		name     string
		version  string
		platform string
		arch     string
		want     []Frame
	}{
		{"V1 cocoa arm64e", VersionV1, "cocoa", "arm64e", stripped},
		{"V1 cocoa arm64", VersionV1, "cocoa", "arm64", stripped},
		{"V1 cocoa x86_64 simulator", VersionV1, "cocoa", "x86_64", frame()},
		{"V1 native arm64e", VersionV1, "native", "arm64e", frame()},
		{"V2 cocoa (no architecture in chunks)", VersionV2, "cocoa", "", stripped},
		{"V2 android", VersionV2, "android", "", frame()},
		{"unknown version", "3", "cocoa", "arm64e", frame()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Profile{Version: tt.version, Platform: tt.platform, Device: Device{Architecture: tt.arch}, Frames: frame()}
			Normalize(p)
			assert.Equal(t, tt.want, p.Frames)
		})
	}
}

func TestNormalizeIDs(t *testing.T) {
	p := &Profile{
		EventID:    "41FED092-5670-468B-B045-7F61A74688EC",
		ProfilerID: "4d229f1d-3807-421b-a62a-5f8bc295d836",
		ChunkID:    "0432a0a4c25f4697bf9f0a2fcbe6a814",
		Transactions: []Transaction{
			{ID: "{30976f2d}", TraceID: "4B25BC58F14243D8B208D1E22A054164", SegmentID: "BD2EB23DA2BEB459"},
			{ID: "30976F2D-DBE0-4AC9-B6BF-FE6E35D4710C-", TraceID: "not-a-uuid", SegmentID: "span-1"},
		},
		Samples: []Sample{{ThreadID: "0xABC"}},
	}
	Normalize(p)
	assert.Equal(t, "41fed0925670468bb0457f61a74688ec", p.EventID)
	assert.Equal(t, "4d229f1d3807421ba62a5f8bc295d836", p.ProfilerID)
	assert.Equal(t, "0432a0a4c25f4697bf9f0a2fcbe6a814", p.ChunkID)
	assert.Equal(t, []Transaction{
		{ID: "{30976f2d}", TraceID: "4b25bc58f14243d8b208d1e22a054164", SegmentID: "bd2eb23da2beb459"},
		// Not UUIDs: left as sent, for Validate to name.
		{ID: "30976F2D-DBE0-4AC9-B6BF-FE6E35D4710C-", TraceID: "not-a-uuid", SegmentID: "span-1"},
	}, p.Transactions)
	assert.Equal(t, "0xABC", p.Samples[0].ThreadID, "thread ids are not ids to canonicalise")
}

func TestNormalizeKeepsData(t *testing.T) {
	p := validV1()
	p.Samples = append(p.Samples, Sample{StackID: 2, ThreadID: "9", ElapsedSinceStartNS: 1 << 40})
	want := deepCopy(p)
	Normalize(p)
	assert.Equal(t, want, p, "Normalize must not drop samples, threads or metadata")
}

func TestCanonicalUUIDAllocatesOnlyOnChange(t *testing.T) {
	id := "41fed0925670468bb0457f61a74688ec"
	allocs := testing.AllocsPerRun(100, func() {
		if canonicalUUID(id) != id {
			t.Fatal("canonical id changed")
		}
	})
	assert.Zero(t, allocs)
}
