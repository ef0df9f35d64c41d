package sentrygrouping

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsFrames is a JavaScript error of n frames: bundle frames at a URL,
// library frames, calls through reportError and recursion.
func jsFrames(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"platform":"javascript","exception":{"values":[{"type":"TypeError","value":"x is undefined","stacktrace":{"frames":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, `{"abs_path":"https://cdn.example/static/js/main.%08x.js","function":"f%d","lineno":%d,"colno":9,"in_app":true,"context_line":"  step(%d);"}`, i%16, i%97, i, i%13)
		case 1:
			b.WriteString(`{"abs_path":"webpack://shop/./node_modules/lib/index.js","filename":"./node_modules/lib/index.js","function":"reportError","lineno":1,"colno":1}`)
		default:
			b.WriteString(`{"abs_path":"app:///dist/app.js","function":"walk","lineno":7,"colno":3,"in_app":true}`)
		}
	}
	b.WriteString(`]}}]}}`)
	return []byte(b.String())
}

// A hostile event of 100,000 frames groups in bounded time: the work is
// linear in the frames (internal/complexityguard's grouping rows measure
// the ratio).
func TestHostileFrames(t *testing.T) {
	ev, err := FromEventJSON(jsFrames(100_000))
	require.NoError(t, err)
	start := time.Now()
	r := Group(ev)
	assert.Less(t, time.Since(start), 20*time.Second)
	assert.Equal(t, "app", r.Variant)
	assert.Len(t, r.Hash, 32)
}

func BenchmarkGroup(b *testing.B) {
	ev, err := FromEventJSON(jsFrames(2000))
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		Group(ev)
	}
}

func BenchmarkFromEventJSON(b *testing.B) {
	data := jsFrames(2000)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := FromEventJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}
