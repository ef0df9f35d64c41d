package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// gzip request bodies, inflated whole: nearly every SDK envelope is gzip'd,
// and internal/inflate decodes one into a single buffer about 1.7× faster
// than klauspost/compress streams it (BenchmarkGunzip there), which the
// envelope reader then reads without copying (envelope.Reader.ResetBytes).
// confighttp passes gzip bodies through (serverDecoders) to gzipBodies,
// which checks the header at once, as confighttp's decoder did, and hands
// the handler a *gzipBody: the envelope handler inflates it whole once the
// request holds a slot; every other reader (the store endpoint, the
// envelope header read for an envelope-only key, a body too large to
// inflate whole) reads it as a stream, as before.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/inflate"
)

// maxWholeGzip bounds the compressed and the inflated bytes of a body
// inflated whole, and what a pooled buffer keeps: room for the largest
// envelopes SDKs send (a 60-s python chunk of eight threads, 5.25 MB). A
// larger body, or a bomb, costs at most this much before it is read as a
// stream within max_request_body_size, as before.
const maxWholeGzip = 8 << 20

// gzipBuffers are the memory of one whole inflate: the decoder's tables,
// the compressed body and the output.
type gzipBuffers struct {
	dec     inflate.Decoder
	in, out []byte
}

// gzipBodies decodes the gzip bodies confighttp let through: their header
// is checked before next runs (a bad one is refused as confighttp refused
// it, with refuse and 400), and next gets a *gzipBody, bounded by limit
// after decompression as confighttp bounds what it decodes.
func (d *gzipDecoder) gzipBodies(next http.Handler, limit int64, refuse func(http.ResponseWriter, *http.Request, string, int)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if enc := r.Header.Get("Content-Encoding"); enc != "gzip" && enc != "x-gzip" {
			next.ServeHTTP(w, r)
			return
		}
		head, err := readGzipHeader(r.Body)
		if err != nil {
			refuse(w, r, err.Error(), http.StatusBadRequest)
			return
		}
		body := &gzipBody{dec: d, w: w, raw: r.Body, head: head, limit: limit}
		defer body.Close()
		r.Header.Del("Content-Encoding")
		r.Header.Del("Content-Length")
		r.ContentLength = -1
		r.Body = body
		next.ServeHTTP(w, r)
	})
}

// readGzipHeader reads raw until it holds the first member's header and
// returns what it read: io.EOF for an empty body, io.ErrUnexpectedEOF for
// one that ends inside the header, inflate.ErrHeader, or the body's read
// error, as klauspost's reader said them.
func readGzipHeader(raw io.Reader) ([]byte, error) {
	buf := make([]byte, 0, 512)
	for {
		_, err := inflate.HeaderLen(buf)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, rerr := raw.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case n > 0:
		case errors.Is(rerr, io.EOF) && len(buf) == 0:
			return nil, io.EOF
		case errors.Is(rerr, io.EOF):
			_, err = inflate.HeaderLen(buf)
			return nil, err
		case rerr != nil:
			return nil, rerr
		}
	}
}

// gzipBody is a gzip request body whose header was checked: inflated whole
// by the envelope handler (inflatedWhole), or read as a stream.
type gzipBody struct {
	dec   *gzipDecoder
	w     http.ResponseWriter
	raw   io.ReadCloser
	head  []byte // the raw bytes read so far
	limit int64

	stream io.Reader // once read as a stream
	zr     *pooledGzipReader
	bufs   *gzipBuffers // once inflated whole
}

// Read reads the body as a stream, as confighttp's decoder did: within
// limit after decompression (http.MaxBytesReader, whose error the handler
// answers with 413).
func (b *gzipBody) Read(p []byte) (int, error) {
	if b.stream == nil {
		if b.bufs != nil {
			return 0, errBodyClosed
		}
		b.startStream(io.MultiReader(bytes.NewReader(b.head), b.raw))
	}
	return b.stream.Read(p)
}

// startStream reads the body from src, which starts with the header.
func (b *gzipBody) startStream(src io.Reader) {
	zr, err := b.dec.decode(io.NopCloser(src))
	if err != nil {
		b.stream = errReader{err}
		return
	}
	b.zr = zr.(*pooledGzipReader)
	b.stream = http.MaxBytesReader(b.w, io.NopCloser(recovering{b.zr}), b.limit)
}

// recovering turns a panic of the stream's decoder into a read error, as
// confighttp does for the decoders it runs: a malformed body is a 400, not
// a dropped connection.
type recovering struct{ r io.Reader }

func (rc recovering) Read(p []byte) (n int, err error) {
	defer func() {
		if v := recover(); v != nil {
			n, err = 0, fmt.Errorf("gzip: the decoder failed: %v", v)
		}
	}()
	return rc.r.Read(p)
}

// Close gives the pooled reader and buffers back; the handler is done with
// the body and with every payload read from it.
func (b *gzipBody) Close() error {
	var err error
	if b.zr != nil {
		err = b.zr.Close()
	}
	if b.bufs != nil {
		b.dec.putBuffers(b.bufs)
		b.bufs = nil
	}
	b.stream = errReader{errBodyClosed}
	return err
}

// inflatedWhole is body inflated into one buffer, when body is a gzipBody
// not read yet, within maxWholeGzip; false when body is to be read as a
// stream (its Read then gives what a stream would: the bytes, then the
// error or the limit).
func inflatedWhole(body io.Reader) ([]byte, bool) {
	b, ok := body.(*gzipBody)
	if !ok || b.stream != nil || b.bufs != nil {
		return nil, false
	}
	b.bufs = b.dec.getBuffers()
	in, err := readAtMost(append(b.bufs.in[:0], b.head...), b.raw, maxWholeGzip)
	b.bufs.in = in
	switch {
	case err != nil:
		// The read failed (the body limit, its pace, the connection):
		// the stream gives what came, then the error.
		b.startStream(io.MultiReader(bytes.NewReader(in), errReader{err}))
		return nil, false
	case len(in) > maxWholeGzip:
		b.startStream(io.MultiReader(bytes.NewReader(in), b.raw))
		return nil, false
	case statedSize(in) > maxWholeGzip:
		// The body says it inflates past a whole inflate (a bomb says it
		// too): streamed from the start, without first filling the whole
		// inflate's buffer. A body that understates its size (the field is
		// the sender's) costs that buffer, then streams.
		b.startStream(bytes.NewReader(in))
		return nil, false
	}
	return b.inflate(in)
}

// statedSize is the size the gzip body in says its last member inflates
// to (ISIZE, its last four bytes: the size modulo 2³²); 0 when in is too
// short to hold one.
func statedSize(in []byte) uint32 {
	if len(in) < 18 { // a gzip member's header and trailer
		return 0
	}
	return binary.LittleEndian.Uint32(in[len(in)-4:])
}

// inflate decodes in into the pooled output, within the body limit and
// maxWholeGzip.
func (b *gzipBody) inflate(in []byte) ([]byte, bool) {
	// One byte past the body limit tells a body over it, answered as the
	// stream's http.MaxBytesReader answers it.
	overLimit := b.limit < maxWholeGzip
	limit := int(min(b.limit+1, maxWholeGzip))
	out, err := b.bufs.dec.Gunzip(b.bufs.out, in, limit)
	b.bufs.out = out[:0]
	switch {
	case err == nil && int64(len(out)) <= b.limit:
		return out, true
	case errors.Is(err, inflate.ErrTooLarge) && !overLimit:
		// Larger than a whole inflate may be, within the body limit:
		// streamed from the start, as before.
		b.startStream(bytes.NewReader(in))
		return nil, false
	}
	// Over the body limit, or broken: the bytes decoded, then the error,
	// behind the limit as the stream was (the limit comes first when the
	// output passes it before the error).
	var tail io.Reader = bytes.NewReader(nil)
	if err != nil && !errors.Is(err, inflate.ErrTooLarge) {
		tail = errReader{err}
	}
	b.stream = http.MaxBytesReader(b.w, io.NopCloser(io.MultiReader(bytes.NewReader(out), tail)), b.limit)
	return nil, false
}

// readAtMost appends what r holds to buf until it ends or buf passes most
// bytes; the error is r's, other than io.EOF.
func readAtMost(buf []byte, r io.Reader, most int) ([]byte, error) {
	for len(buf) <= most {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// getBuffers takes buffers from the pool: a warm set per core, kept across
// garbage collections (which under load run every few requests and would
// empty a sync.Pool, and each new set regrows to the envelope's size), then
// the sync.Pool.
func (d *gzipDecoder) getBuffers() *gzipBuffers {
	select {
	case b := <-d.warm:
		return b
	default:
	}
	if b, ok := d.buffers.Get().(*gzipBuffers); ok {
		return b
	}
	return new(gzipBuffers)
}

// putBuffers keeps buffers of at most maxWholeGzip (plus the decoder's
// slack) for the next body.
func (d *gzipDecoder) putBuffers(b *gzipBuffers) {
	const keep = maxWholeGzip + 64<<10
	if cap(b.in) > keep {
		b.in = nil
	}
	if cap(b.out) > keep {
		b.out = nil
	}
	select {
	case d.warm <- b:
	default:
		d.buffers.Put(b)
	}
}
