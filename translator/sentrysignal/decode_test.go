package sentrysignal

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// decodeStd is DecodeAny as it was written on encoding/json: the
// reference the one-pass parser must equal.
func decodeStd(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(raw[dec.InputOffset():])) != 0 {
		return nil, errTrailing
	}
	return x, nil
}

var errTrailing = os.ErrInvalid

// sameAsStd fails t when DecodeAny and encoding/json disagree on raw:
// one accepting what the other refuses, or different values.
func sameAsStd(t *testing.T, raw []byte) {
	t.Helper()
	got, err := DecodeAny(raw)
	want, werr := decodeStd(raw)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%.80q: DecodeAny error %v, encoding/json error %v", raw, err, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%.80q: DecodeAny %#v, encoding/json %#v", raw, got, want)
	}
}

func TestDecodeAnySameAsEncodingJSON(t *testing.T) {
	deep := strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting)
	tooDeep := strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1)
	for _, tc := range []struct {
		name, in string
		ok       bool
	}{
		{"object", `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, true},
		{"empty containers", ` { "a" : [ ] , "b" : { } } `, true},
		{"repeated key: the last wins", `{"a":1,"a":2}`, true},
		{"numbers", `[0,-0,1.5,-2e10,3E+2,4e-3,12345678901234567890123]`, true},
		{"leading zero", `[01]`, false},
		{"bare minus", `[-]`, false},
		{"dot without digits", `[1.]`, false},
		{"exponent without digits", `[1e]`, false},
		{"escapes", `"\" \\ \/ \b \f \n \r \t \u00e9 \u20AC"`, true},
		{"surrogate pair", `"\ud83d\ude00"`, true},
		{"lone high surrogate", `"\ud83d x"`, true},
		{"lone low surrogate", `"\ude00"`, true},
		{"high then non-low escape", `"\ud83d\u0041"`, true},
		{"invalid UTF-8", "\"a\xffb\xc3\"", true},
		{"encoded surrogate", "\"\xed\xa0\x80\"", true},
		{"valid UTF-8", "\"h\u00e9llo \u4e16\u754c\"", true},
		{"apostrophe escape", `"\'"`, false},
		{"short unicode escape", `"\u12"`, false},
		{"control character", "\"a\x01b\"", false},
		{"control character after an escape", "\"\\n\x01\"", false},
		{"unterminated string", `"abc`, false},
		{"unterminated escape", `"abc\`, false},
		{"trailing comma in object", `{"a":1,}`, false},
		{"trailing comma in array", `[1,]`, false},
		{"missing colon", `{"a" 1}`, false},
		{"unquoted key", `{a:1}`, false},
		{"trailing data", `{} x`, false},
		{"trailing bracket", `{}]`, false},
		{"trailing Unicode space", "{}\f\u00a0", true},
		{"leading form feed", "\f{}", false},
		{"empty", ``, false},
		{"space only", `  `, false},
		{"broken literal", `[tru]`, false},
		{"literal prefix", `nul`, false},
		{"nesting at the limit", deep, true},
		{"nesting past the limit", tooDeep, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameAsStd(t, []byte(tc.in))
			if _, err := DecodeAny([]byte(tc.in)); (err == nil) != tc.ok {
				t.Fatalf("accepted %v, want %v (err %v)", err == nil, tc.ok, err)
			}
		})
	}
}

// TestDecodeAnyCapturedPayloads: every captured SDK payload of the signal
// translators decodes to the same values as with encoding/json.
func TestDecodeAnyCapturedPayloads(t *testing.T) {
	var files []string
	for _, pattern := range []string{"testdata/*.json", "../sentry*/testdata/*.json"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d captured payloads found", len(files))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) { sameAsStd(t, raw) })
	}
}

// FuzzDecodeAny: the one-pass parser and encoding/json accept the same
// inputs and give the same values.
func FuzzDecodeAny(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u00e9\ud83d",true,null,{}]}`, "\"\xff\\ud800\\n\"", `[-0.0e+1]`, `{"a":1,"a":[]} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { sameAsStd(t, raw) })
}
