package jsontext

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAppendString(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"plain", "main", `"main"`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"short escapes", "\n\r\t\b\f", `"\n\r\t\b\f"`},
		{"other control bytes", "\x00\x1f", `"\u0000\u001f"`},
		{"no HTML escaping", "<a&b>", `"<a&b>"`},
		{"multi-byte runes kept", "héllo 世界", `"héllo 世界"`},
		{"line and paragraph separators", "a\u2028b\u2029c", `"a\u2028b\u2029c"`},
		{"invalid UTF-8 becomes U+FFFD", "a\xffb\xc3", `"a\ufffdb\ufffd"`},
		{"emoji", "é😀", `"é😀"`},
		{"invalid bytes one by one", "bad \xff\xfe!", `"bad \ufffd\ufffd!"`},
		{"sequence cut short", "cut \xe2\x82", `"cut \ufffd\ufffd"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendString([]byte("x"), tt.in))
			if got != "x"+tt.want {
				t.Fatalf("AppendString(%q) = %s, want %s", tt.in, got[1:], tt.want)
			}
			var back string
			if err := json.Unmarshal([]byte(tt.want), &back); err != nil {
				t.Fatalf("output is not JSON: %v", err)
			}
		})
	}
}

// The output must read back, through encoding/json, as the input (with
// invalid bytes replaced as encoding/json replaces them).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "main", "a\"\\\n\u2028\xff", "\x00\x7f世"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("AppendString(%q) = %s: not JSON: %v", s, out, err)
		}
		want, _ := json.Marshal(s) // encoding/json's replacement of invalid UTF-8
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Fatalf("round trip of %q gave %q, want %q", s, back, wantBack)
		}
	})
}

func TestStringLenIsTheWrittenLength(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\ nl\n cr\r tab\t bs\b ff\f", "\x00\x1f\x7f", "é€𝄞", "\u2028\u2029", "bad \xff\xfe utf8", strings.Repeat("ab\x01", 100)} {
		assert.Equal(t, len(AppendString(nil, s)), StringLen(s), "%q", s)
	}
}
