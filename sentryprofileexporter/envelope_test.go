package sentryprofileexporter

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
)

func TestCategoryOf(t *testing.T) {
	tests := []struct {
		platform string
		want     string
	}{
		{"cocoa", sentryhttp.CategoryProfileChunkUI},
		{"android", sentryhttp.CategoryProfileChunkUI},
		{"javascript", sentryhttp.CategoryProfileChunkUI},
		{"node", sentryhttp.CategoryProfileChunk},
		{"python", sentryhttp.CategoryProfileChunk},
		{"native", sentryhttp.CategoryProfileChunk},
		{"", sentryhttp.CategoryProfileChunk},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, categoryOf(tt.platform), "platform %q", tt.platform)
	}
}

func TestPackEnvelopes(t *testing.T) {
	chunk := func(plan int, platform string, size int) encodedChunk {
		return encodedChunk{plan: plan, platform: platform, payload: bytes.Repeat([]byte("x"), size)}
	}
	many := func(plans int) []encodedChunk {
		var cs []encodedChunk
		for p := range plans {
			cs = append(cs, chunk(p, "python", 10))
		}
		return cs
	}
	half := maxEnvelopeBytes/2 + 1
	tests := []struct {
		name      string
		chunks    []encodedChunk
		want      [][]string // platforms per envelope
		wantPlans [][]int    // plans per envelope; nil: not checked
	}{
		{name: "one backend chunk", chunks: []encodedChunk{chunk(0, "python", 10)}, want: [][]string{{"python"}}, wantPlans: [][]int{{0}}},
		{
			name:   "backend and UI never share an envelope",
			chunks: []encodedChunk{chunk(0, "python", 10), chunk(0, "cocoa", 10), chunk(0, "node", 10)},
			want:   [][]string{{"python", "node"}, {"cocoa"}},
		},
		{
			name:   "an envelope is closed at the size limit",
			chunks: []encodedChunk{chunk(0, "python", half), chunk(0, "python", half), chunk(0, "python", 1)},
			want:   [][]string{{"python"}, {"python", "python"}},
		},
		{
			name:      "resources share an envelope",
			chunks:    []encodedChunk{chunk(0, "python", 10), chunk(1, "python", 10), chunk(2, "node", 10)},
			want:      [][]string{{"python", "python", "node"}},
			wantPlans: [][]int{{0, 1, 2}},
		},
		{
			name:      "a resource does not straddle two envelopes when it fits one",
			chunks:    []encodedChunk{chunk(0, "python", half), chunk(1, "python", half/2), chunk(1, "python", half/2+10)},
			want:      [][]string{{"python"}, {"python", "python"}},
			wantPlans: [][]int{{0}, {1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got [][]string
			var plans [][]int
			for _, b := range packEnvelopes(tt.chunks) {
				var platforms []string
				size := 0
				for _, c := range b.chunks {
					platforms = append(platforms, c.platform)
					assert.Equal(t, b.category, categoryOf(c.platform))
					size += len(c.payload)
				}
				assert.Equal(t, size, b.size)
				assert.LessOrEqual(t, len(b.chunks), maxEnvelopeChunks)
				got = append(got, platforms)
				plans = append(plans, b.plans)
			}
			assert.Equal(t, tt.want, got)
			if tt.wantPlans != nil {
				assert.Equal(t, tt.wantPlans, plans)
			}
		})
	}
	t.Run("a thousand resources make ten envelopes", func(t *testing.T) {
		batches := packEnvelopes(many(1000))
		assert.Len(t, batches, 1000/maxEnvelopeChunks)
	})
}

func TestEncodeEnvelope(t *testing.T) {
	p := &project{envelopeDSN: "https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/42"}
	sdk := envelopeSDK{name: sdkName, version: "1.2.3"}
	now := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	const chunkID = "3e11a5c9831f4e49939c0a81944ea2cb"

	t.Run("one chunk names the envelope after it", func(t *testing.T) {
		b := envelopeBatch{category: sentryhttp.CategoryProfileChunk, chunks: []encodedChunk{
			{chunkID: chunkID, platform: "python", payload: []byte("{\"a\":1}\n{}")},
		}}
		h, items, err := envelope.Parse(encodeEnvelope(b, p, sdk, now), envelope.Limits{})
		require.NoError(t, err)
		assert.Equal(t, chunkID, h.EventID)
		assert.Equal(t, p.envelopeDSN, h.DSN)
		assert.Equal(t, "2026-11-03T10:00:00Z", h.SentAt)
		require.NotNil(t, h.SDK)
		assert.Equal(t, envelope.SDK{Name: sdkName, Version: "1.2.3"}, *h.SDK)
		require.Len(t, items, 1)
		assert.Equal(t, itemTypeProfileChunk, items[0].Header.Type)
		assert.Equal(t, "python", items[0].Header.Platform)
		assert.Equal(t, "{\"a\":1}\n{}", string(items[0].Payload), "length header keeps a payload with newlines whole")
	})
	t.Run("several chunks get a fresh id", func(t *testing.T) {
		b := envelopeBatch{category: sentryhttp.CategoryProfileChunkUI, chunks: []encodedChunk{
			{chunkID: chunkID, platform: "cocoa", payload: []byte("{}")},
			{chunkID: "4e11a5c9831f4e49939c0a81944ea2cb", platform: "cocoa", payload: []byte("{}")},
		}}
		h, items, err := envelope.Parse(encodeEnvelope(b, p, sdk, now), envelope.Limits{})
		require.NoError(t, err)
		assert.True(t, isHex32(h.EventID), h.EventID)
		assert.NotEqual(t, chunkID, h.EventID)
		assert.Len(t, items, 2)
	})
}

func TestIsHex32(t *testing.T) {
	assert.True(t, isHex32("0123456789abcdef0123456789abcdef"))
	assert.False(t, isHex32("0123456789ABCDEF0123456789abcdef"), "Sentry ids are lower case")
	assert.False(t, isHex32("01234567-89ab-cdef-0123-456789abcdef"))
	assert.False(t, isHex32(""))
	assert.True(t, isHex32(newEventID()))
}

func TestPublicDSN(t *testing.T) {
	d, err := sentryhttp.ParseDSN("https://pub:" + testSecretKey + "@sentry.example.com:9000/sentry/42")
	require.NoError(t, err)
	got := publicDSN(d)
	assert.Equal(t, "https://pub@sentry.example.com:9000/sentry/42", got)
	assert.NotContains(t, got, testSecretKey)
	again, err := sentryhttp.ParseDSN(got)
	require.NoError(t, err)
	assert.Equal(t, d.EnvelopeURL(), again.EnvelopeURL())
}
