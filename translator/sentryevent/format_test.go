package sentryevent

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

func TestFormat(t *testing.T) {
	tests := []struct{ template, params, want string }{
		{"loading order %s failed", `["4711"]`, "loading order 4711 failed"},
		{"%d of %d done, 100%%", `[3, 4]`, "3 of 4 done, 100%"},
		// a parameter prints as its text: width and precision are not applied
		{"%(user)s paid %(amount).2f", `{"user":"ada","amount":12.5}`, "ada paid 12.5"},
		{"order {} shipped {}", `[4711, true]`, "order 4711 shipped true"},
		{"{1} before {0}", `["a","b"]`, "b before a"},
		{"too few %s %s", `["x"]`, "too few %s %s"},
		{"no placeholder", `["x"]`, "no placeholder"},
		{"dangling %", `["x"]`, "dangling %"},
		{"brace {x}", `["x"]`, "brace {x}"},
		{"template %s", `[]`, "template %s"},
		{"template %s", `null`, "template %s"},
		{"grüße %s", `["ünd"]`, "grüße ünd"},
	}
	for _, tt := range tests {
		x, err := sentrysignal.DecodeAny(json.RawMessage(tt.params))
		if err != nil {
			t.Fatal(err)
		}
		if got, truncated := format(tt.template, x); got != tt.want || truncated {
			t.Errorf("format(%q, %s) = %q, %v; want %q, false", tt.template, tt.params, got, truncated, tt.want)
		}
	}
}

// TestFormatBounded: however often a template repeats a parameter, the
// message stops at MaxFormattedChars characters (cut on a character
// boundary) and says so; a template that does not fit its params is still
// refused when the mismatch comes after the cut. Before the bound, the
// first case built a 40 MB message (191 MB allocated, 0.5 s), and the
// issue's 40 000 × 100 000 one ran out of memory.
func TestFormatBounded(t *testing.T) {
	big := strings.Repeat("X", 10_000)
	tests := []struct {
		name          string
		template      string
		params        any
		wantTruncated bool
		wantPrefix    string
		wantChars     int
	}{
		{"braces repeat one param", strings.Repeat("{0}", 4000), []any{big}, true, "XXX", MaxFormattedChars},
		{"empty braces repeat", strings.Repeat("{}", 3) + strings.Repeat("{0}", 4000), []any{big, big, big}, true, "XXX", MaxFormattedChars},
		{"printf names repeat a map param", strings.Repeat("%(a)s", 3000), map[string]any{"a": big}, true, "XXX", MaxFormattedChars},
		{"printf positional", "%s" + strings.Repeat("-", 9000), []any{"x"}, true, "x--", MaxFormattedChars},
		{"multi-byte characters cut whole", strings.Repeat("{0}", 2000), []any{"€€€€€"}, true, "€€", MaxFormattedChars},
		{"exactly at the bound", "{0}", []any{strings.Repeat("y", MaxFormattedChars)}, false, "yyy", MaxFormattedChars},
		{"mismatch after the cut falls back to the template", strings.Repeat("{0}", 4000) + "{7}", []any{big}, false, "{0}{0}", 4000*3 + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, truncated := format(tt.template, tt.params)
			if truncated != tt.wantTruncated {
				t.Errorf("truncated = %v, want %v", truncated, tt.wantTruncated)
			}
			if n := utf8.RuneCountInString(got); n != tt.wantChars {
				t.Errorf("%d characters, want %d", n, tt.wantChars)
			}
			if !utf8.ValidString(got) || !strings.HasPrefix(got, tt.wantPrefix) {
				t.Errorf("message starts %.20q, want a valid string starting %q", got, tt.wantPrefix)
			}
		})
	}
}

// TestFormatWorkBounded: the allocation of formatting does not grow with
// the repetitions once the bound is reached (was 191 MB for 4 000 × 10 000).
func TestFormatWorkBounded(t *testing.T) {
	params := []any{strings.Repeat("X", 100_000)}
	template := strings.Repeat("{0}", 40_000)
	allocs := testing.AllocsPerRun(3, func() { format(template, params) })
	if allocs > 50 {
		t.Errorf("%.0f allocations per format, want a handful", allocs)
	}
	var got string
	bytes := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			got, _ = format(template, params)
		}
	}).AllocedBytesPerOp()
	if bytes > 4*MaxFormattedChars*4 || len(got) != MaxFormattedChars {
		t.Errorf("%d bytes allocated for a %d-byte message, want at most %d", bytes, len(got), 4*MaxFormattedChars*4)
	}
}

// FuzzFormatMessage: any template and params format without panicking
// into valid-length text: at most MaxFormattedChars characters when
// formatted, else the template as it is.
func FuzzFormatMessage(f *testing.F) {
	f.Add("loading order %s failed", `["4711"]`)
	f.Add("%(user)s paid %(amount).2f", `{"user":"ada","amount":12.5}`)
	f.Add("{1} before {0}", `["a","b"]`)
	f.Add(strings.Repeat("{0}", 100), `["`+strings.Repeat("X", 100)+`"]`)
	f.Add("%(a", `{"a":1}`)
	f.Add("{", `[1]`)
	f.Add("é%s", `["\u00e9"]`)
	f.Fuzz(func(t *testing.T, template, params string) {
		x, err := sentrysignal.DecodeAny([]byte(params))
		if err != nil {
			return
		}
		got, truncated := format(template, x)
		if got == template && !truncated {
			return
		}
		if n := utf8.RuneCountInString(got); n > MaxFormattedChars || (truncated && n != MaxFormattedChars) {
			t.Fatalf("format(%q, %s): %d characters, truncated %v", template, params, n, truncated)
		}
	})
}
