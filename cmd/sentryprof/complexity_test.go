package main

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/complexityguard"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
)

// TestComplexityGuardReadInput is the complexity guard's row for convert's
// input reader (internal/complexityguard names it): a file in each
// compression the reader detects, its decompressed size growing with n,
// costs allocations linear in it and reads back no more than it holds.
func TestComplexityGuardReadInput(t *testing.T) {
	for _, enc := range []string{"identity", "gzip", "zstd", "deflate", "br"} {
		t.Run(enc, func(t *testing.T) {
			complexityguard.CheckLinear(t, "decompressed bytes of the input", 256<<10, func(tb testing.TB, n int) complexityguard.Sized {
				// An envelope of one item of n bytes: what convert reads.
				plain := []byte("{}\n{\"type\":\"attachment\",\"length\":" + strconv.Itoa(n) + "}\n" + strings.Repeat("a", n) + "\n")
				body := plain
				if enc != "identity" {
					body = compresstest.Bytes(tb, enc, plain)
				}
				path := filepath.Join(tb.TempDir(), "input")
				if err := os.WriteFile(path, body, 0o600); err != nil {
					tb.Fatal(err)
				}
				var out int
				return complexityguard.Sized{
					Run: func() {
						data, err := readInput(path, &env{}, newProgress(io.Discard, "convert"), decompress)
						if err != nil {
							tb.Errorf("readInput(%s): %v", enc, err)
						}
						out = len(data)
					},
					Input:  func() int64 { return int64(len(plain)) },
					Output: func() int64 { return int64(out) },
				}
			})
		})
	}
}
