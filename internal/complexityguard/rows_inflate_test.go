package complexityguard

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/inflate"
)

// The whole-buffer gzip decoder: a gzip'd body is the client's to choose,
// its size and what it expands to.

// inflateLiterals is n KiB of random letters of a 16-letter alphabet
// gzip'd with Huffman codes only: every byte a literal symbol (random bytes
// would be stored blocks, which Huffman codes cannot shrink).
func inflateLiterals(n int) []byte {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	data := make([]byte, n<<10)
	for i := range data {
		data[i] = 'a' + byte(rng.IntN(16))
	}
	return gzipAt(data, flate.HuffmanOnly)
}

// inflateMatches is n KiB of a chunk's samples: most bytes copied by
// matches of the text before, between the literals of their numbers.
func inflateMatches(n int) []byte {
	rng := rand.New(rand.NewPCG(uint64(n), 8))
	var b bytes.Buffer
	for b.Len() < n<<10 {
		fmt.Fprintf(&b, `{"elapsed_since_start_ns":"%d","stack_id":%d,"thread_id":"%d"},`, rng.IntN(1e6), rng.IntN(100), rng.IntN(8))
	}
	return gzipAt(b.Bytes()[:n<<10], flate.DefaultCompression)
}

func gzipAt(data []byte, level int) []byte {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, level)
	_, _ = w.Write(data)
	_ = w.Close()
	return b.Bytes()
}

func inflateRows() []row {
	var d inflate.Decoder
	gunzip := func(tb testing.TB, in []byte) (int64, int64) {
		out, err := d.Gunzip(nil, in, 1<<30)
		if err != nil {
			tb.Errorf("gunzip: %v", err)
		}
		return int64(len(out)), 0
	}
	// DEFLATE expands at most 1,032-fold.
	deflateRatio := func(input int64) int64 { return 1032*input + 64<<10 }
	fuzz := []string{"internal/inflate.FuzzGunzip", "sentryprofilereceiver.FuzzGzipBody"}
	return []row{
		{name: "inflate_literals", dimension: "KiB of literals in a gzip body", n: 2048, clock: ThreadClock, fuzz: fuzz,
			build: directRow(inflateLiterals, gunzip), maxOutput: deflateRatio},
		{name: "inflate_matches", dimension: "KiB of matched text in a gzip body", n: 4096, clock: ThreadClock, fuzz: fuzz,
			build: directRow(inflateMatches, gunzip), maxOutput: deflateRatio},
	}
}
