package stacktrace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// capturedTexts returns every case of every captured runtime output.
func capturedTexts(t testing.TB) map[string]string {
	t.Helper()
	texts := map[string]string{}
	for _, p := range programs {
		out, err := os.ReadFile(filepath.Join("testdata", p.dir, "output.txt"))
		if err != nil {
			t.Fatalf("reading the captured output of %s: %v", p.lang, err)
		}
		for name, text := range splitSections(out) {
			texts[string(p.lang)+"/"+name] = text
		}
	}
	return texts
}

// FuzzParse checks that Parse never panics, bounds its output and returns
// only pieces of its input.
func FuzzParse(f *testing.F) {
	for _, text := range capturedTexts(f) {
		f.Add(text)
	}
	f.Add(javaTrace(3, 4))
	f.Add(pythonTrace(3, 2))
	f.Add("System.Exception: a ---> System.Exception: b\n   at A.B()\n   --- End of inner exception stack trace ---\n")
	f.Add("panic: x\n\ngoroutine 1 [running]:\nmain.main()\n\t/a.go:1 +0x1\n")
	f.Add("a.rb:1:in `x': m (E)\n\tfrom a.rb:2:in `y'\n")
	f.Add("E: m\n    at f (eval at g (eval at h (/a.js:1:2)), <anonymous>:1:1)\n")
	f.Fuzz(func(t *testing.T, text string) {
		chain, lang, ok := Parse(text)
		if ok != (chain != nil) || (ok && lang == "") {
			t.Fatalf("ok %v with %d exceptions, lang %q", ok, len(chain), lang)
		}
		if len(chain) > MaxExceptions {
			t.Fatalf("%d exceptions, at most %d", len(chain), MaxExceptions)
		}
		for _, e := range chain {
			if len(e.Frames) > MaxFrames {
				t.Fatalf("%d frames, at most %d", len(e.Frames), MaxFrames)
			}
			if len(e.Value) > len(text) {
				t.Fatalf("value of %d bytes from a text of %d", len(e.Value), len(text))
			}
			for _, s := range []string{e.Type, e.Module} {
				if !strings.Contains(text, s) {
					t.Fatalf("%q is not in the text", s)
				}
			}
			for _, fr := range e.Frames {
				for _, s := range []string{fr.Function, fr.Module, fr.Filename, fr.AbsPath, fr.Package, fr.ContextLine} {
					if !strings.Contains(text, s) {
						t.Fatalf("%q is not in the text", s)
					}
				}
				if fr.Lineno < 0 || fr.Colno < 0 || fr.InApp != nil {
					t.Fatalf("frame %+v", fr)
				}
			}
		}
	})
}
