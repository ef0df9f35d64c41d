package jsscope

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sourcemap"
)

// BenchmarkParseBundle measures, in one run, what a cold bundle costs the
// processor: scanning a 2 MB minified bundle into its scopes, against
// parsing its source map, the work it already does for every bundle. The
// two alternate, three rounds each, so that a busy machine weighs on
// both alike.
func BenchmarkParseBundle(b *testing.B) {
	node := testenv.LookPath(b, "node", "nodejs")
	installModules(b, testenv.LookPath(b, "npm", "npm"))
	dir := b.TempDir()
	cmd := exec.Command(node, "build.mjs", "--large", dir)
	cmd.Dir = bundlerDir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("node build.mjs --large: %v\n%s", err, out)
	}
	code, err := os.ReadFile(filepath.Join(dir, "large.js"))
	if err != nil {
		b.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "large.js.map"))
	if err != nil {
		b.Fatal(err)
	}
	for range 3 {
		benchmarkRound(b, code, raw)
	}
	b.Run("FunctionName", func(b *testing.B) {
		benchmarkFunctionName(b, code, raw)
	})
}

// benchmarkFunctionName names a frame in every 64th token of the bundle,
// the index and the map loaded: what a frame costs once both are cached.
func benchmarkFunctionName(b *testing.B, code, raw []byte) {
	x, err := Parse(code)
	if err != nil {
		b.Fatal(err)
	}
	m, err := sourcemap.Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	toks, _, err := lex(code)
	if err != nil {
		b.Fatal(err)
	}
	var frames []Position
	for i := 0; i < len(toks); i += 64 {
		frames = append(frames, toks[i].pos)
	}
	lookup := mapLookup(m)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p := frames[i%len(frames)]
		FunctionName(x, int(p.Line), int(p.Column), lookup)
		i++
	}
}

func benchmarkRound(b *testing.B, code, raw []byte) {
	var err error
	b.Run("jsscope.Parse", func(b *testing.B) {
		b.SetBytes(int64(len(code)))
		b.ReportAllocs()
		var x *Index
		for b.Loop() {
			if x, err = Parse(code); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(x.Len()), "scopes")
		b.ReportMetric(float64(x.Size()), "index-bytes")
	})
	b.Run("sourcemap.Parse", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		var m *sourcemap.Map
		for b.Loop() {
			if m, err = sourcemap.Parse(raw); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(m.Size()), "map-bytes")
	})
}
