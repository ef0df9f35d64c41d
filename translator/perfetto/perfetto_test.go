package perfetto_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/perfetto"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/perfetto/perfettotest"
)

func TestDecode(t *testing.T) {
	tr, err := perfetto.Decode(perfettotest.Trace(), perfetto.DefaultLimits())
	require.NoError(t, err)
	require.True(t, tr.HasClocks)
	require.Len(t, tr.Samples, 3)

	java := perfetto.Frame{Function: "com.example.App.render", MappingPath: "system/framework/boot.oat", RelPC: 0x40}
	native := perfetto.Frame{Function: "__start_thread", MappingPath: "libc.so", BuildID: "0a1b2c", RelPC: 0x1234}
	want := []struct {
		tid    uint32
		at     int64
		frames []perfetto.Frame
	}{
		{42, 1_795_000_000_000_000_010, []perfetto.Frame{java, native}}, // leaf first
		{43, 1_795_000_000_000_000_020, []perfetto.Frame{{Function: "worker.loop"}}},
		{42, 1_795_000_000_000_000_030, []perfetto.Frame{java, native}},
	}
	for i, w := range want {
		s := tr.Samples[i]
		assert.Equal(t, w.tid, s.TID)
		assert.Equal(t, uint32(42), s.PID)
		at, ok := tr.RealtimeNanos(s)
		require.True(t, ok)
		assert.Equal(t, w.at, at, "boot clock + the snapshot's offset")
		assert.Equal(t, w.frames, s.Frames, "sample %d", i)
	}
}

func TestDecodeMalformed(t *testing.T) {
	good := perfettotest.Trace()
	tests := []struct {
		name  string
		data  []byte
		want  error
		cause error // the protobuf decoder's own error, kept in the chain; nil: none
	}{
		{"truncated", good[:len(good)-3], perfetto.ErrMalformed, io.ErrUnexpectedEOF},
		{"a sample naming a callstack never interned", func() []byte {
			sample := protowire.AppendVarint(protowire.AppendTag(nil, 4, protowire.VarintType), 9) // callstack_iid
			packet := protowire.AppendBytes(protowire.AppendTag(nil, 66, protowire.BytesType), sample)
			return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), packet)
		}(), perfetto.ErrUnknownID, nil},
		{"not protobuf", []byte{0xff, 0xff, 0xff}, perfetto.ErrMalformed, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := perfetto.Decode(tt.data, perfetto.DefaultLimits())
			require.ErrorIs(t, err, tt.want)
			if tt.cause != nil {
				assert.ErrorIs(t, err, tt.cause)
			}
		})
	}
	_, err := perfetto.Decode(good, perfetto.Limits{MaxSamples: 2, MaxInterned: 100, MaxDepth: 10})
	assert.ErrorIs(t, err, perfetto.ErrTooLarge)
}

func FuzzDecode(f *testing.F) {
	f.Add(perfettotest.Trace())
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := perfetto.Decode(data, perfetto.Limits{MaxSamples: 1000, MaxInterned: 1000, MaxDepth: 64})
		if err != nil {
			return
		}
		for _, s := range tr.Samples {
			if len(s.Frames) == 0 || len(s.Frames) > 64 {
				t.Fatalf("sample with %d frames", len(s.Frames))
			}
		}
	})
}
