// Package compresstest compresses test bodies in every Content-Encoding
// Sentry SDKs send and the receiver reads, for the tests of the receiver,
// the CLI, the benchmarks and the reliability suite.
package compresstest // import "github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// Writer returns a compressing writer onto w for a Content-Encoding name:
// gzip (and its legacy name x-gzip), deflate (HTTP's name for the zlib
// format), br and zstd.
func Writer(tb testing.TB, encoding string, w io.Writer) io.WriteCloser {
	tb.Helper()
	switch encoding {
	case "gzip", "x-gzip":
		return gzip.NewWriter(w)
	case "deflate":
		return zlib.NewWriter(w)
	case "br":
		return brotli.NewWriter(w)
	case "zstd":
		enc, err := zstd.NewWriter(w, zstd.WithEncoderConcurrency(1))
		if err != nil {
			tb.Fatal(err)
		}
		return enc
	}
	tb.Fatalf("no encoder for %q", encoding)
	return nil
}

// Bytes returns data compressed in encoding (see Writer).
func Bytes(tb testing.TB, encoding string, data []byte) []byte {
	tb.Helper()
	var b bytes.Buffer
	w := Writer(tb, encoding, &b)
	if _, err := w.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}
