package sentry

import (
	"strings"
	"testing"
)

func TestEstimateElements(t *testing.T) {
	braces := `[{"x":"` + strings.Repeat("{", 4000) + `"}]`
	tests := []struct {
		name     string
		data     string
		end      string
		sep      byte
		minBytes int
		want     int
	}{
		{"compact samples", `[{"stack_id":0,"thread_id":"1","timestamp":1.5},{"stack_id":1,"thread_id":"1","timestamp":1.6}],"stacks":[]`, "}]", '{', minSampleBytes, 2},
		{"pretty-printed: no compact end, no estimate", "[\n {\"stack_id\":0}\n]", "}]", '{', minSampleBytes, 0},
		// Braces inside a string count only up to one element per minBytes
		// of the array.
		{"braces in a string", braces, "}]", '{', minSampleBytes, len(braces[:len(braces)-2]) / minSampleBytes},
		{"stack indices", `[[1,2,3],[4,5]],"x":[[9]]`, "]]", ',', 2, 4},
		{"empty", `[]`, "]]", ',', 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := estimateElements([]byte(tt.data), tt.end, tt.sep, tt.minBytes); got != tt.want {
				t.Fatalf("estimateElements = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestDecodeSamplesBraceBomb is a payload whose samples array holds one
// sample with a string full of braces: the decoder reserves room bounded by
// the payload size, not by the braces.
func TestDecodeSamplesBraceBomb(t *testing.T) {
	payload := `{"version":"2","platform":"python","profile":{"samples":[{"stack_id":0,"thread_id":"1","timestamp":1,"x":"` +
		strings.Repeat("{", 1<<20) + `"}],"stacks":[[]],"frames":[]}}`
	p, err := DecodeProfile([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Samples) != 1 {
		t.Fatalf("%d samples, want 1", len(p.Samples))
	}
	if max := len(payload) / minSampleBytes; cap(p.Samples) > max {
		t.Fatalf("samples capacity %d for a %d-byte payload, want at most %d", cap(p.Samples), len(payload), max)
	}
}
