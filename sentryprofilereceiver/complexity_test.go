package sentryprofilereceiver

import (
	"io"
	"strings"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/complexityguard"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
)

// TestComplexityGuardEncodings is the complexity guard's row for the
// decoders of a forwarded body's Content-Encoding (internal/complexityguard
// names it): allocations linear in the decompressed size, in every
// encoding the receiver reads itself.
func TestComplexityGuardEncodings(t *testing.T) {
	for _, enc := range []string{"gzip", "deflate", "br", "zstd"} {
		t.Run(enc, func(t *testing.T) {
			complexityguard.CheckLinear(t, "decompressed bytes of the body", 256<<10, func(tb testing.TB, n int) complexityguard.Sized {
				plain := []byte("{}\n{\"type\":\"attachment\"}\n" + strings.Repeat("a", n) + "\n")
				raw := compresstest.Bytes(tb, enc, plain)
				name := enc
				if enc == "deflate" {
					name = "zlib" // how the decoders name HTTP's deflate
				}
				d := rawBodyDecoders{gzip: new(gzipDecoder)}
				var out int64
				return complexityguard.Sized{
					Run: func() {
						body, err := d.open(raw, name)
						if err != nil {
							tb.Errorf("open %s: %v", enc, err)
							return
						}
						out, err = io.Copy(io.Discard, body)
						if err != nil {
							tb.Errorf("read %s: %v", enc, err)
						}
						_ = body.Close()
					},
					Input:  func() int64 { return int64(len(plain)) },
					Output: func() int64 { return out },
				}
			})
		})
	}
}
