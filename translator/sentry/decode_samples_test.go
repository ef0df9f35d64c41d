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

// TestDecodeRepeatedSampleTimes decodes samples whose times repeat the one
// before (as SDKs that sample every thread at once write them) next to
// times that share its text only in part, and wants what the reference
// decoder reads: a repeated text is only the same time when the number
// ends where the last one ended.
func TestDecodeRepeatedSampleTimes(t *testing.T) {
	tests := []struct {
		name  string
		times []string
	}{
		{"every thread of a tick", []string{"1795000000.000164", "1795000000.000164", "1795000000.000164", "1795000000.010164"}},
		{"a longer number starting with the last", []string{"1795000000.000164", "1795000000.0001645", "1795000000.000164"}},
		{"a shorter number", []string{"1795000000.000164", "1795000000.00016", "1795000000.00016"}},
		{"same last eight bytes, another start", []string{"1795000000.000164", "1695000000.000164", "1795000000.000164"}},
		{"an exponent after the same digits", []string{"1795000000.000164", "1795000000.000164e0", "1795000000.000164"}},
		{"as a string, then as a number", []string{`"1795000000.000164"`, "1795000000.000164", `"1795000000.000164"`}},
		{"short times are parsed every time", []string{"1.5", "1.5", "1.25"}},
		{"before whitespace", []string{"1795000000.000164", "1795000000.000164 ", "1795000000.000164"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString(`{"version":"2","platform":"python","profile":{"samples":[`)
			for i, ts := range tt.times {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(`{"stack_id":0,"thread_id":"1","timestamp":` + ts + `}`)
			}
			b.WriteString(`],"stacks":[[0]],"frames":[{"function":"f"}]}}`)
			payload := []byte(b.String())
			want, err := referenceDecode(payload)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeProfile(payload)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want.Samples {
				if got.Samples[i].Timestamp != want.Samples[i].Timestamp {
					t.Errorf("sample %d (%s): %d, want %d", i, tt.times[i], got.Samples[i].Timestamp, want.Samples[i].Timestamp)
				}
			}
		})
	}
}

// TestDecodeCompactRunThenOther: samples read as a compact run, then one
// that is not compact (spaces, an unknown key, an error), decode as the
// general path reads them, and an error names the sample it is in.
func TestDecodeCompactRunThenOther(t *testing.T) {
	compact := `{"stack_id":0,"thread_id":"1","timestamp":1.5},{"stack_id":0,"thread_id":"1","timestamp":1.6}`
	tests := []struct {
		name    string
		samples string
		want    int    // samples decoded
		wantErr string // or the error
	}{
		{"a spaced sample after the run", compact + `, {"stack_id": 0, "thread_id": "1", "timestamp": 1.7}`, 3, ""},
		{"an unknown key after the run", compact + `,{"stack_id":0,"thread_id":"1","timestamp":1.7,"x":[1]},` + compact, 5, ""},
		{"an error after the run", compact + `,{"stack_id":"x","thread_id":"1","timestamp":1.7}`, 0, "profile.samples[2].stack_id"},
		{"a trailing comma after the run", compact + `,]`, 0, "trailing comma"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := `{"version":"2","platform":"python","profile":{"samples":[` + tt.samples + `],"stacks":[[0]],"frames":[{"function":"f"}]}}`
			p, err := DecodeProfile([]byte(payload))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := referenceDecode([]byte(payload))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Samples) != tt.want {
				t.Fatalf("%d samples, want %d", len(p.Samples), tt.want)
			}
			if diff := diffProfiles(p, want); diff != "" {
				t.Fatalf("differs from the reference: %s", diff)
			}
		})
	}
}
