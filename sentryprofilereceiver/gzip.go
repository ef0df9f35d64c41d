package sentryprofilereceiver

import (
	"errors"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// gzipDecoder decodes gzip bodies (Content-Encoding gzip and x-gzip) in
// place of confighttp's own decoder. Nearly every SDK envelope is gzip'd:
// klauspost/compress inflates a real-SDK-sized envelope in about half the
// time of compress/gzip, and a reader taken from the pool keeps its window
// instead of allocating 40 KiB per request.
type gzipDecoder struct {
	readers sync.Pool // *gzip.Reader
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
