package sentryprofilereceiver

import (
	"bytes"
	stdgzip "compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
)

// failingBody gives its bytes, then err.
type failingBody struct {
	r   io.Reader
	err error
}

func (b *failingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, b.err
	}
	return n, err
}

func (b *failingBody) Close() error { return nil }

// streamedAsBefore reads body as the receiver did before gzipBody:
// klauspost's reader behind http.MaxBytesReader at limit.
func streamedAsBefore(body io.ReadCloser, limit int64) ([]byte, error) {
	zr, err := kgzip.NewReader(body)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(zr), limit))
}

// readAsHandler reads body as the envelope handler does: inflated whole
// when it can be, else as a stream.
func readAsHandler(d *gzipDecoder, body io.ReadCloser, limit int64) (data []byte, whole bool, err error) {
	head, err := readGzipHeader(body)
	if err != nil {
		return nil, false, err
	}
	b := &gzipBody{dec: d, w: httptest.NewRecorder(), raw: body, head: head, limit: limit}
	defer b.Close()
	if data, ok := inflatedWhole(b); ok {
		return bytes.Clone(data), true, nil
	}
	data, err = io.ReadAll(b)
	return data, false, err
}

// TestGzipBodyAnswersAsBefore: whatever the body, the handler reads the
// bytes the streaming decoder read before, and fails where it failed (the
// body limit with the same *http.MaxBytesError, hence the same 413);
// bodies within maxWholeGzip are inflated whole, the others streamed.
func TestGzipBodyAnswersAsBefore(t *testing.T) {
	env := envelopeOf(eventHeader, chunkItem(chunkPayload), chunkItem(chunkPayload))
	gz := compresstest.Bytes(t, "gzip", env)
	zeros := compresstest.Bytes(t, "gzip", make([]byte, maxWholeGzip+1))
	const bodyLimit = 200 << 20
	tests := []struct {
		name      string
		body      []byte
		readErr   error // the raw body fails after its bytes
		limit     int64
		wantWhole bool
		wantErr   bool
	}{
		{name: "envelope", body: gz, limit: bodyLimit, wantWhole: true},
		{name: "exactly at the limit", body: gz, limit: int64(len(env)), wantWhole: true},
		{name: "a byte over the limit", body: gz, limit: int64(len(env)) - 1, wantErr: true},
		{name: "far over a small limit", body: zeros, limit: 1 << 20, wantErr: true},
		{name: "two members", body: append(compresstest.Bytes(t, "gzip", env[:100]), compresstest.Bytes(t, "gzip", env[100:])...), limit: bodyLimit, wantWhole: true},
		{name: "empty member", body: compresstest.Bytes(t, "gzip", nil), limit: bodyLimit, wantWhole: true},
		{name: "larger than a whole inflate", body: zeros, limit: bodyLimit},
		{name: "cut in half", body: gz[:len(gz)/2], limit: bodyLimit, wantErr: true},
		{name: "cut in the trailer", body: gz[:len(gz)-3], limit: bodyLimit, wantErr: true},
		{name: "corrupt", body: corrupt(gz), limit: bodyLimit, wantErr: true},
		{name: "bad checksum", body: append(bytes.Clone(gz[:len(gz)-8]), 1, 2, 3, 4, 5, 6, 7, 8), limit: bodyLimit, wantErr: true},
		{name: "trailing garbage", body: append(bytes.Clone(gz), "garbage!!!"...), limit: bodyLimit, wantErr: true},
		{name: "read error", body: gz, readErr: &http.MaxBytesError{Limit: 42}, limit: bodyLimit, wantErr: true},
	}
	d := newGzipDecoder(1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			open := func() io.ReadCloser {
				if tt.readErr != nil {
					return &failingBody{r: bytes.NewReader(tt.body), err: tt.readErr}
				}
				return io.NopCloser(bytes.NewReader(tt.body))
			}
			want, wantErr := streamedAsBefore(open(), tt.limit)
			got, whole, err := readAsHandler(d, open(), tt.limit)
			assert.Equal(t, tt.wantWhole, whole, "inflated whole")
			if !tt.wantErr {
				require.NoError(t, wantErr)
				require.NoError(t, err)
				require.True(t, bytes.Equal(want, got), "%d bytes, want %d", len(got), len(want))
				return
			}
			require.Error(t, wantErr, "the case fails the streaming decoder too")
			require.Error(t, err)
			var wantTooLarge, tooLarge *http.MaxBytesError
			require.Equal(t, errors.As(wantErr, &wantTooLarge), errors.As(err, &tooLarge), "%v, before %v", err, wantErr)
			if tooLarge != nil {
				assert.Equal(t, wantTooLarge.Limit, tooLarge.Limit)
			}
		})
	}
}

// TestGzipHeaderAnswersAsBefore: a body whose header is bad is refused
// with the error klauspost's reader gave.
func TestGzipHeaderAnswersAsBefore(t *testing.T) {
	gz := compresstest.Bytes(t, "gzip", []byte("{}\n"))
	for _, body := range [][]byte{nil, gz[:4], gz[:9], []byte("{}\nnot gzip at all"), gz} {
		_, wantErr := kgzip.NewReader(bytes.NewReader(body))
		_, err := readGzipHeader(bytes.NewReader(body))
		if wantErr == nil {
			assert.NoError(t, err)
			continue
		}
		assert.EqualError(t, err, wantErr.Error())
	}
}

// TestGzipBodyBuffersBounded: a pooled set keeps at most maxWholeGzip of
// memory, and a body larger than that is read with no more.
func TestGzipBodyBuffersBounded(t *testing.T) {
	d := newGzipDecoder(1)
	big := compresstest.Bytes(t, "gzip", []byte(strings.Repeat("0123456789", maxWholeGzip/10+1)))
	_, whole, err := readAsHandler(d, io.NopCloser(bytes.NewReader(big)), 200<<20)
	require.NoError(t, err)
	require.False(t, whole)
	b := d.getBuffers()
	assert.LessOrEqual(t, cap(b.out), maxWholeGzip+64<<10)
	assert.LessOrEqual(t, cap(b.in), maxWholeGzip+64<<10)
	b.out = make([]byte, maxWholeGzip+1<<20)
	d.putBuffers(b)
	assert.Nil(t, d.getBuffers().out, "a larger buffer is let go")
}

// FuzzGzipBody: whatever the body and the limit, the handler reads what
// the streaming decoder read before, or fails where it failed, with the
// body limit's error where it gave one for a sound body.
func FuzzGzipBody(f *testing.F) {
	env := envelopeOf(eventHeader, chunkItem(chunkPayload))
	gz := compresstest.Bytes(f, "gzip", env)
	f.Add(gz, int64(1<<20))
	f.Add(gz, int64(len(env)-1))
	f.Add(append(bytes.Clone(gz), gz...), int64(1<<20))
	f.Add(gz[:len(gz)/2], int64(1<<20))
	d := newGzipDecoder(1)
	f.Fuzz(func(t *testing.T, body []byte, limit int64) {
		limit = 1 + max(0, limit%(1<<20))
		want, wantErr := streamedAsBefore(io.NopCloser(bytes.NewReader(body)), limit)
		got, _, err := readAsHandler(d, io.NopCloser(bytes.NewReader(body)), limit)
		if wantErr == nil && err != nil && refusedByCompressGzip(body) {
			// klauspost takes a later member's header cut inside its
			// name or comment for the end of the body; compress/gzip,
			// and the receiver now, refuse it.
			return
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("error %v, the stream's %v", err, wantErr)
		}
		// A body both broken and over the limit is refused either way:
		// which comes first depends on how far each decoder got before
		// it found the break (klauspost holds back the bytes of its
		// window). A sound body over the limit is a 413 for both.
		var wantTooLarge, tooLarge *http.MaxBytesError
		if errors.As(wantErr, &wantTooLarge) != errors.As(err, &tooLarge) && !refusedByCompressGzip(body) {
			t.Fatalf("error %v, the stream's %v", err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("%d bytes, the stream's %d", len(got), len(want))
		}
	})
}

func refusedByCompressGzip(body []byte) bool {
	zr, err := stdgzip.NewReader(bytes.NewReader(body))
	if err == nil {
		_, err = io.ReadAll(zr)
	}
	return err != nil
}

// TestForwardedGzipEnvelopeReadWhole: when forwarding, the raw gzip body
// an envelope came in is read by the handler as a gzipBody (inflated whole
// when it can be) while forward_profiles keeps the raw body for the
// upstream; without forward_profiles the decoded copy is kept as before.
func TestForwardedGzipEnvelopeReadWhole(t *testing.T) {
	env := envelopeOf(eventHeader, chunkItem(chunkPayload))
	raw := compresstest.Bytes(t, "gzip", env)
	sent := bytes.Clone(raw)
	d := rawBodyDecoders{gzip: newGzipDecoder(1)}
	for _, forwardProfiles := range []bool{true, false} {
		for _, encoding := range []string{"gzip", "x-gzip"} {
			h := &envelopeHandler{cfg: &Config{ForwardProfiles: forwardProfiles}}
			h.cfg.ServerConfig.MaxRequestBodySize = 1 << 20
			body, err := d.openEnvelope(httptest.NewRecorder(), raw, encoding, 1<<20)
			require.NoError(t, err)
			in, decoded := h.forwardedEnvelopeReader(httptest.NewRecorder(), body)
			data, whole := inflatedWhole(in)
			if !whole {
				data, err = io.ReadAll(in)
				require.NoError(t, err)
			}
			assert.Equal(t, forwardProfiles, whole, "%s, forward_profiles %v: inflated whole", encoding, forwardProfiles)
			assert.Equal(t, env, data)
			if !forwardProfiles {
				assert.Equal(t, env, decoded.Bytes(), "the decoded copy to strip")
			}
			require.NoError(t, body.Close())
			assert.Equal(t, sent, raw, "the raw body the upstream gets is untouched")
		}
	}
	_, err := d.openEnvelope(httptest.NewRecorder(), []byte("not gzip at all"), "gzip", 1<<20)
	assert.ErrorContains(t, err, "gzip: invalid header")
}

type panickingReader struct{}

func (panickingReader) Read([]byte) (int, error) { panic("boom") }

// TestRecoveringStream: a panic of the stream's decoder is a read error.
func TestRecoveringStream(t *testing.T) {
	n, err := recovering{panickingReader{}}.Read(make([]byte, 8))
	assert.Zero(t, n)
	assert.ErrorContains(t, err, "boom")
}
