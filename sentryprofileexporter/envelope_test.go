package sentryprofileexporter

import (
	"bytes"
	"strings"
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

func TestGroupByCategory(t *testing.T) {
	chunk := func(platform string, size int) encodedChunk {
		return encodedChunk{platform: platform, payload: bytes.Repeat([]byte("x"), size)}
	}
	tests := []struct {
		name   string
		chunks []encodedChunk
		want   [][]string // platforms per envelope
	}{
		{name: "one backend chunk", chunks: []encodedChunk{chunk("python", 10)}, want: [][]string{{"python"}}},
		{
			name:   "backend and UI never share an envelope",
			chunks: []encodedChunk{chunk("python", 10), chunk("cocoa", 10), chunk("node", 10)},
			want:   [][]string{{"python", "node"}, {"cocoa"}},
		},
		{
			name:   "an envelope is closed at the size limit",
			chunks: []encodedChunk{chunk("python", maxEnvelopeBytes/2+1), chunk("python", maxEnvelopeBytes/2+1), chunk("python", 1)},
			want:   [][]string{{"python"}, {"python", "python"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got [][]string
			for _, b := range groupByCategory(tt.chunks) {
				var platforms []string
				size := 0
				for _, c := range b.chunks {
					platforms = append(platforms, c.platform)
					assert.Equal(t, b.category, categoryOf(c.platform))
					size += len(c.payload)
				}
				assert.Equal(t, size, b.size)
				got = append(got, platforms)
			}
			assert.Equal(t, tt.want, got)
		})
	}
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
	assert.False(t, strings.Contains(got, testSecretKey))
	again, err := sentryhttp.ParseDSN(got)
	require.NoError(t, err)
	assert.Equal(t, d.EnvelopeURL(), again.EnvelopeURL())
}
