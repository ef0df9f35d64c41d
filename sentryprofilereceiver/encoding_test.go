package sentryprofilereceiver

import (
	"bytes"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
)

// encoder returns a compressing writer for a Content-Encoding name.

// chunkedBody hides the length of a body so the client sends it with
// Transfer-Encoding: chunked, as @sentry/node does.
type chunkedBody struct{ io.Reader }

func TestContentEncodings(t *testing.T) {
	envelope := envelopeOf(eventHeader, chunkItem(chunkPayload), chunkItem(chunkPayload))
	tests := []struct {
		name     string
		encoding string // Content-Encoding header; empty for none
		body     []byte
		chunked  bool
	}{
		{name: "none", body: envelope},
		{name: "identity", encoding: "identity", body: envelope},
		{name: "gzip", encoding: "gzip", body: compresstest.Bytes(t, "gzip", envelope)},
		{name: "x-gzip", encoding: "x-gzip", body: compresstest.Bytes(t, "x-gzip", envelope)},
		{name: "deflate", encoding: "deflate", body: compresstest.Bytes(t, "deflate", envelope)},
		{name: "br", encoding: "br", body: compresstest.Bytes(t, "br", envelope)},
		{name: "zstd", encoding: "zstd", body: compresstest.Bytes(t, "zstd", envelope)},
		{name: "chunked", body: envelope, chunked: true},
		{name: "chunked gzip", encoding: "gzip", body: compresstest.Bytes(t, "gzip", envelope), chunked: true},
	}
	sink := new(consumertest.ProfilesSink)
	tr := startReceiver(t, sink, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink.Reset()
			req := newRequest(t, http.MethodPost, tr.url+"/api/42/envelope/?sentry_key="+testKey, tt.body, nil)
			if tt.encoding != "" {
				req.Header.Set("Content-Encoding", tt.encoding)
			}
			if tt.chunked {
				req.Body = io.NopCloser(chunkedBody{bytes.NewReader(tt.body)})
				req.ContentLength = -1
			}
			resp := do(t, req)
			require.Equal(t, http.StatusOK, resp.status, "body: %s", resp.body)
			assert.Equal(t, 2*chunkSamples, sampleEvents(sink))
		})
	}
}

func TestBadContentEncodings(t *testing.T) {
	// Big enough that the compressed stream spans many flate blocks, so
	// cutting it in half leaves a valid prefix.
	var big bytes.Buffer
	big.WriteString(eventHeader)
	for range 200 {
		big.WriteString("\n" + `{"type":"profile_chunk","platform":"python"}` + "\n" + chunkPayload)
	}
	gz := compresstest.Bytes(t, "gzip", big.Bytes())

	tests := []struct {
		name       string
		encoding   string
		body       []byte
		wantStatus int
		wantDetail string
	}{
		{name: "unknown encoding", encoding: "compress", body: []byte("x"), wantStatus: http.StatusUnsupportedMediaType,
			wantDetail: "unsupported Content-Encoding compress"},
		{name: "stacked encodings", encoding: "gzip, br", body: gz, wantStatus: http.StatusUnsupportedMediaType,
			wantDetail: "unsupported Content-Encoding gzip, br"},
		// The reader may see the cut as a read error or as a truncated
		// envelope; either way nothing is forwarded.
		{name: "ends mid-gzip", encoding: "gzip", body: gz[:len(gz)/2], wantStatus: http.StatusBadRequest},
		{name: "ends inside the gzip header", encoding: "gzip", body: gz[:4], wantStatus: http.StatusBadRequest,
			wantDetail: "unexpected EOF"},
		{name: "not gzip", encoding: "gzip", body: big.Bytes(), wantStatus: http.StatusBadRequest,
			wantDetail: "gzip: invalid header"},
		{name: "corrupt gzip", encoding: "gzip", body: corrupt(gz), wantStatus: http.StatusBadRequest},
		{name: "not brotli", encoding: "br", body: big.Bytes(), wantStatus: http.StatusBadRequest,
			wantDetail: "cannot read request body"},
	}
	sink := new(consumertest.ProfilesSink)
	tr := startReceiver(t, sink, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, tr, tt.body, map[string]string{"Content-Encoding": tt.encoding})
			require.Equal(t, tt.wantStatus, resp.status, "body: %s", resp.body)
			assert.Contains(t, resp.detail(t), tt.wantDetail)
			assert.Zero(t, sink.ProfileCount(), "nothing of a broken body is forwarded")
		})
	}
}

// corrupt flips bytes in the middle of a compressed stream.
func corrupt(b []byte) []byte {
	c := bytes.Clone(b)
	for i := len(c) / 2; i < len(c)/2+64; i++ {
		c[i] ^= 0xa5
	}
	return c
}

// buildBomb compresses prefix and then zeros up to size bytes. gzip and zstd
// streams may be concatenated members, so one compressed block of zeros is
// repeated instead of compressing 1 GiB; brotli has no such framing and is
// compressed at its fastest level.
func buildBomb(t *testing.T, encoding, prefix string, size int) []byte {
	t.Helper()
	const block = 16 << 20
	zeros := make([]byte, block)
	if encoding == "br" {
		var b bytes.Buffer
		w := brotli.NewWriterLevel(&b, 1)
		_, err := io.WriteString(w, prefix)
		require.NoError(t, err)
		for range size / block {
			_, err = w.Write(zeros)
			require.NoError(t, err)
		}
		require.NoError(t, w.Close())
		return b.Bytes()
	}
	bomb := compresstest.Bytes(t, encoding, append([]byte(prefix), zeros...))
	member := compresstest.Bytes(t, encoding, zeros)
	for range size/block - 1 {
		bomb = append(bomb, member...)
	}
	return bomb
}

// TestDecompressionBombs posts 1 GiB of zeros compressed to a few hundred
// KiB: confighttp stops decompressing at max_request_body_size, the answer
// is 413, and the memory allocated while serving stays far below what was
// decompressed.
func TestDecompressionBombs(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses 200 MiB per encoding")
	}
	const bombSize = 1 << 30
	tests := []struct {
		name       string
		encoding   string
		itemHeader string
		mutate     func(*Config)
		maxAlloc   uint64
		// forwarded: the receiver decodes the raw body itself; the bomb it
		// cannot read goes to the upstream as it came.
		forwarded bool
	}{
		// A declared length lets the reader skip the oversized item without
		// buffering it.
		{name: "gzip", encoding: "gzip", itemHeader: `{"type":"profile_chunk","length":` + strconv.Itoa(bombSize) + `}`, maxAlloc: 32 << 20},
		{name: "zstd", encoding: "zstd", itemHeader: `{"type":"profile_chunk","length":` + strconv.Itoa(bombSize) + `}`, maxAlloc: 32 << 20},
		{name: "br", encoding: "br", itemHeader: `{"type":"profile_chunk","length":` + strconv.Itoa(bombSize) + `}`, maxAlloc: 32 << 20},
		// Without a length the reader must look for the newline; it holds at
		// most the largest item limit of the item (12 MiB, a container's,
		// as max_profile_item_size is lower here), grown by doubling.
		{name: "gzip without length", encoding: "gzip", itemHeader: `{"type":"profile_chunk"}`,
			mutate: func(c *Config) { c.MaxProfileItemSize = 1 << 20 }, maxAlloc: 48 << 20},
		{name: "gzip, forwarded", encoding: "gzip", itemHeader: `{"type":"profile_chunk","length":` + strconv.Itoa(bombSize) + `}`,
			maxAlloc: 32 << 20, forwarded: true},
		{name: "zstd, forwarded", encoding: "zstd", itemHeader: `{"type":"profile_chunk","length":` + strconv.Itoa(bombSize) + `}`,
			maxAlloc: 32 << 20, forwarded: true},
		{name: "br without length, forwarded", encoding: "br", itemHeader: `{"type":"profile_chunk"}`,
			mutate: func(c *Config) { c.MaxProfileItemSize = 1 << 20 }, maxAlloc: 48 << 20, forwarded: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bomb := buildBomb(t, tt.encoding, "{}\n"+tt.itemHeader+"\n", bombSize)
			require.Less(t, len(bomb), 2<<20, "a bomb is small on the wire")

			sink := new(consumertest.ProfilesSink)
			var upstream *fakeSentry
			tr := startReceiver(t, sink, func(c *Config) {
				if tt.forwarded {
					upstream = newFakeSentry(t)
					forwardTo(upstream.URL)(c)
				}
				if tt.mutate != nil {
					tt.mutate(c)
				}
			})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			resp := post(t, tr, bomb, map[string]string{"Content-Encoding": tt.encoding})
			runtime.ReadMemStats(&after)

			if tt.forwarded {
				require.Equal(t, http.StatusOK, resp.status, "the upstream's answer; body: %s", resp.body)
				require.Len(t, upstream.got(), 1)
				assert.Equal(t, bomb, upstream.got()[0].body)
			} else {
				require.Equal(t, http.StatusRequestEntityTooLarge, resp.status, "body: %s", resp.body)
				assert.True(t, strings.HasPrefix(resp.detail(t), "envelope exceeds 209715200 bytes"), resp.detail(t))
			}
			assert.Zero(t, sink.ProfileCount())
			allocated := after.TotalAlloc - before.TotalAlloc
			assert.Less(t, allocated, tt.maxAlloc, "allocated %d MiB to refuse the bomb", allocated>>20)
			t.Logf("%s: %d KiB on the wire, %d KiB allocated while serving", tt.name, len(bomb)>>10, allocated>>10)
		})
	}
}
