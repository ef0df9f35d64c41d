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
	var src io.Reader = r.Body
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "":
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		src = zr
	case "zstd":
		zr, err := zstd.NewReader(r.Body)
		if err != nil {
			return nil, fmt.Errorf("zstd body: %w", err)
		}
		defer zr.Close()
		src = zr
	default:
		return nil, fmt.Errorf("unexpected Content-Encoding %q", enc)
	}
	return io.ReadAll(src)
}
