package testnet

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"

	"github.com/klauspost/compress/zstd"
)

// RequestBody reads a request body in the encodings the collector's
// exporters send (none, gzip, zstd), as the stand-ins of tests receive it.
func RequestBody(r *http.Request) ([]byte, error) {
	src, closeSrc, err := decodedBody(r.Body, r.Header.Get("Content-Encoding"))
	if err != nil {
		return nil, err
	}
	defer closeSrc()
	return io.ReadAll(src)
}

// decodedBody is body decoded by enc, and what releases the decoder.
func decodedBody(body io.Reader, enc string) (io.Reader, func(), error) {
	switch enc {
	case "":
		return body, func() {}, nil
	case "gzip":
		return gzipBody(body)
	case "zstd":
		return zstdBody(body)
	}
	return nil, nil, fmt.Errorf("unexpected Content-Encoding %q", enc)
}

func gzipBody(body io.Reader) (io.Reader, func(), error) {
	zr, err := gzip.NewReader(body)
	if err != nil {
		return nil, nil, fmt.Errorf("gzip body: %w", err)
	}
	return zr, func() {}, nil
}

func zstdBody(body io.Reader) (io.Reader, func(), error) {
	zr, err := zstd.NewReader(body)
	if err != nil {
		return nil, nil, fmt.Errorf("zstd body: %w", err)
	}
	return zr, zr.Close, nil
}
