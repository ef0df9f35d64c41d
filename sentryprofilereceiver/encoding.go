package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// Content-Encodings: the decoders the receiver gives confighttp, and the
// ones it runs itself on the raw bodies it forwards.

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// decoderFunc is a confighttp request decoder; a nil body tells confighttp
// to keep the request body as it is.
type decoderFunc = func(io.ReadCloser) (io.ReadCloser, error)

// serverDecoders are the Content-Encodings the receiver decodes itself, in
// place of or besides confighttp's, when it does not forward. confighttp
// bounds their output by max_request_body_size like its own. gzip bodies
// pass through confighttp to gzipBodies (gzipbody.go), which bounds them
// the same way.
func serverDecoders(algorithms []string) map[string]decoderFunc {
	decoders := map[string]decoderFunc{
		// Relay accepts the legacy name of gzip.
		"x-gzip": passThrough,
		// sentry-python sends br when the brotli module is installed.
		"br": func(body io.ReadCloser) (io.ReadCloser, error) {
			return readCloser{Reader: brotli.NewReader(body), Closer: body}, nil
		},
		// "No encoding", spelled out.
		"identity": passThrough,
	}
	// gzip itself only where confighttp would decode it.
	if enabled(algorithms, "gzip") {
		decoders["gzip"] = passThrough
	}
	return decoders
}

// rawDecodedEncodings are the encodings rawBodyDecoders reads: Relay's
// (gzip, x-gzip, deflate, br, zstd, identity) and zlib, which confighttp
// takes as deflate's other name.
var rawDecodedEncodings = []string{"gzip", "x-gzip", "deflate", "zlib", "br", "zstd", "identity"}

// passThroughDecoders replace, when forwarding, every decoder of an
// encoding the receiver reads itself: confighttp leaves the body and its
// Content-Encoding as they came, for the upstream. Another configured
// encoding (snappy, lz4) is decoded by confighttp and forwarded decoded;
// Sentry reads none of them.
func passThroughDecoders(algorithms []string) map[string]decoderFunc {
	decoders := make(map[string]decoderFunc, len(rawDecodedEncodings))
	for _, e := range rawDecodedEncodings {
		switch e {
		case "x-gzip", "br", "identity":
			decoders[e] = passThrough // accepted whatever compression_algorithms says
		default:
			if enabled(algorithms, e) {
				decoders[e] = passThrough
			}
		}
	}
	return decoders
}

func passThrough(io.ReadCloser) (io.ReadCloser, error) { return nil, nil }

// enabled reports whether confighttp decodes an encoding: nil algorithms
// are its defaults, which include gzip, zstd, zlib and deflate.
func enabled(algorithms []string, encoding string) bool {
	return algorithms == nil || slices.Contains(algorithms, encoding)
}

// rawBodyDecoders decode the bodies passThroughDecoders let through, for
// translation. The caller bounds the output by max_request_body_size.
type rawBodyDecoders struct {
	gzip *gzipDecoder
}

// open returns raw decoded by its Content-Encoding (what is left of it:
// confighttp removes the header when it decoded the body itself).
func (d rawBodyDecoders) open(raw []byte, encoding string) (io.ReadCloser, error) {
	body := io.NopCloser(bytes.NewReader(raw))
	switch encoding {
	case "", "identity":
		return body, nil
	case "gzip", "x-gzip":
		return d.gzip.decode(body)
	case "deflate", "zlib":
		return zlib.NewReader(body)
	case "br":
		return readCloser{Reader: brotli.NewReader(body), Closer: body}, nil
	case "zstd":
		return openZstd(body)
	}
	// passThroughDecoders lets no other encoding through.
	return nil, fmt.Errorf("unsupported Content-Encoding: %s", encoding)
}

// openEnvelope is open for the envelope the handler reads: a gzip body
// is a *gzipBody, which the handler inflates whole when it can
// (inflatedWhole) and which bounds what it gives by limit itself, as
// http.MaxBytesReader over it would.
func (d rawBodyDecoders) openEnvelope(w http.ResponseWriter, raw []byte, encoding string, limit int64) (io.ReadCloser, error) {
	if encoding != "gzip" && encoding != "x-gzip" {
		return d.open(raw, encoding)
	}
	src := bytes.NewReader(raw)
	head, err := readGzipHeader(src)
	if err != nil {
		return nil, err
	}
	return &gzipBody{dec: d.gzip, w: w, raw: io.NopCloser(src), head: head, limit: limit}, nil
}

func openZstd(body io.Reader) (io.ReadCloser, error) {
	zr, err := zstd.NewReader(body, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	return zr.IOReadCloser(), nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// gzipDecoder decodes gzip bodies (Content-Encoding gzip and x-gzip) in
// place of confighttp's own decoder: whole into one buffer (gzipbody.go),
// or as a stream, for which klauspost/compress inflates a real-SDK-sized
// envelope in about half the time of compress/gzip, and a reader taken
// from the pool keeps its window instead of allocating 40 KiB per request.
type gzipDecoder struct {
	readers sync.Pool // *gzip.Reader
	// warm and buffers hold the whole inflates' buffers (getBuffers).
	warm    chan *gzipBuffers
	buffers sync.Pool
}

func newGzipDecoder(warm int) *gzipDecoder {
	return &gzipDecoder{warm: make(chan *gzipBuffers, warm)}
}

func (d *gzipDecoder) decode(body io.ReadCloser) (io.ReadCloser, error) {
	zr, _ := d.readers.Get().(*gzip.Reader)
	if zr == nil {
		zr = new(gzip.Reader)
	}
	if err := zr.Reset(body); err != nil {
		d.readers.Put(zr)
		return nil, err
	}
	return &pooledGzipReader{zr: zr, pool: &d.readers}, nil
}

var errBodyClosed = errors.New("gzip: read after close")

// pooledGzipReader returns its reader to the pool on Close; confighttp
// closes the body once the handler has returned.
type pooledGzipReader struct {
	zr   *gzip.Reader
	pool *sync.Pool
}

func (r *pooledGzipReader) Read(p []byte) (int, error) {
	if r.zr == nil {
		return 0, errBodyClosed
	}
	return r.zr.Read(p)
}

func (r *pooledGzipReader) Close() error {
	if r.zr == nil {
		return nil
	}
	err := r.zr.Close()
	r.pool.Put(r.zr)
	r.zr = nil
	return err
}
