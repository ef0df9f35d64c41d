package stacktrace

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// brief is an exception reduced to what a case checks: type, module, value
// and its frames as "module|function@file:line:col" in Sentry's order.
type brief struct {
	Type, Module, Value string
	Frames              []string
}

func briefs(chain []Exception) []brief {
	var out []brief
	for _, e := range chain {
		b := brief{Type: e.Type, Module: e.Module, Value: e.Value}
		for _, f := range e.Frames {
			s := fmt.Sprintf("%s|%s@%s:%d:%d", f.Module, f.Function, f.Filename, f.Lineno, f.Colno)
			if f.Package != "" {
				s += "#" + f.Package
			}
			b.Frames = append(b.Frames, s)
		}
		out = append(out, b)
	}
	return out
}

// The traces below are written by hand in the exact format of the runtime
// named in each case, for shapes the runtimes installed here do not print
// (Ruby 3.4's quotes, .NET's own format rather than Mono's) or that a test
// program cannot easily provoke.
func TestParseFormats(t *testing.T) {
	tests := []struct {
		name string
		text string
		lang Language
		want []brief
	}{
		{
			name: "ruby 3.4 quotes and Class#method labels",
			text: "/app/ledger.rb:11:in 'Kernel#Integer': invalid value for Integer(): \"x\" (ArgumentError)\n" +
				"\tfrom /app/ledger.rb:11:in 'block in Ledger#total'\n" +
				"\tfrom /app/ledger.rb:15:in 'Ledger.open'\n" +
				"\tfrom /app/main.rb:3:in '<main>'\n",
			lang: Ruby,
			want: []brief{{Type: "ArgumentError", Value: `invalid value for Integer(): "x"`, Frames: []string{
				"|<main>@/app/main.rb:3:0", "|Ledger.open@/app/ledger.rb:15:0",
				"|block in Ledger#total@/app/ledger.rb:11:0", "|Kernel#Integer@/app/ledger.rb:11:0"}}},
		},
		{
			name: "ruby multi-line message and empty message",
			text: "app.rb:1:in `f': first (RuntimeError)\nsecond\n\nthird\n\tfrom app.rb:2:in `<main>'\n" +
				"app.rb:5:in `g': unhandled exception\n",
			lang: Ruby,
			want: []brief{
				{Frames: []string{"|g@app.rb:5:0"}},
				{Type: "RuntimeError", Value: "first\nsecond\n\nthird", Frames: []string{
					"|<main>@app.rb:2:0", "|f@app.rb:1:0"}},
			},
		},
		{
			name: "dotnet core with inner exception and async separator",
			text: "System.InvalidOperationException: Order 42 cannot be loaded\n" +
				" ---> System.Collections.Generic.KeyNotFoundException: The given key '42' was not present in the dictionary.\n" +
				"   at System.Collections.Generic.Dictionary`2.get_Item(TKey key)\n" +
				"   at Shop.Orders.Repository`1.Get(String key) in /src/Shop/Repository.cs:line 15\n" +
				"   --- End of inner exception stack trace ---\n" +
				"   at Shop.Orders.Service.LoadAsync(String key) in /src/Shop/Service.cs:line 40\n" +
				"--- End of stack trace from previous location ---\n" +
				"   at Shop.Orders.Service..ctor(String key) in /src/Shop/Service.cs:line 12\n" +
				"   at Shop.Program.<Main>d__0.MoveNext() in C:\\src\\Shop\\Program.cs:line 9\n",
			lang: DotNet,
			want: []brief{
				{Type: "System.Collections.Generic.KeyNotFoundException", Value: "The given key '42' was not present in the dictionary.", Frames: []string{
					"Shop.Orders.Repository`1|Get@/src/Shop/Repository.cs:15:0",
					"System.Collections.Generic.Dictionary`2|get_Item@:0:0"}},
				{Type: "System.InvalidOperationException", Value: "Order 42 cannot be loaded", Frames: []string{
					`Shop.Program.<Main>d__0|MoveNext@C:\src\Shop\Program.cs:9:0`,
					"Shop.Orders.Service|.ctor@/src/Shop/Service.cs:12:0",
					"Shop.Orders.Service|LoadAsync@/src/Shop/Service.cs:40:0"}},
			},
		},
		{
			name: "dotnet file line with a localized line word",
			text: "System.Exception: Fehler\n   at Shop.Program.Run() in /src/Program.cs:Zeile 12\n",
			lang: DotNet,
			want: []brief{{Type: "System.Exception", Value: "Fehler", Frames: []string{"Shop.Program|Run@:0:0"}}},
		},
		{
			name: "java uncaught handler prefix, no message, loader prefix, packaging data, common frames omitted",
			text: "Exception in thread \"main\" com.acme.BadThing\n" +
				"\tat app//com.acme.Worker.run(Worker.kt:7) ~[acme.jar:1.2]\n" +
				"\tat com.acme.Gen$$Lambda$14/0x0000000800c03000.apply(Unknown Source)\n" +
				"\tat java.base@17.0.2/java.lang.Thread.run(Thread.java:833)\n" +
				"Caused by: java.io.IOException: disk full\n" +
				"\tat com.acme.Disk.write(Disk.java)\n" +
				"\t... 99 common frames omitted\n",
			lang: Java,
			want: []brief{
				{Type: "IOException", Module: "java.io", Value: "disk full", Frames: []string{
					"java.lang.Thread|run@Thread.java:833:0#java.base", "com.acme.Gen$$Lambda$14|apply@:0:0",
					"com.acme.Worker|run@Worker.kt:7:0#acme.jar", "com.acme.Disk|write@Disk.java:0:0"}},
				{Type: "BadThing", Module: "com.acme", Frames: []string{
					"java.lang.Thread|run@Thread.java:833:0#java.base", "com.acme.Gen$$Lambda$14|apply@:0:0",
					"com.acme.Worker|run@Worker.kt:7:0#acme.jar"}},
			},
		},
		{
			name: "java message with an indented line",
			text: "java.lang.IllegalArgumentException: bad config:\n\tkey = value\n\tat a.B.c(B.java:3)\n",
			lang: Java,
			want: []brief{{Type: "IllegalArgumentException", Module: "java.lang", Value: "bad config:\n\tkey = value", Frames: []string{"a.B|c@B.java:3:0"}}},
		},
		{
			name: "java re-indented by a logger, CRLF line ends",
			text: "java.lang.IllegalStateException: boom\r\n    at a.B.c(B.java:3)\r\n    Suppressed: java.io.IOException: x\r\n" +
				"        at a.B.close(B.java:9)\r\nCaused by: java.lang.Error\r\n    at a.B.d(B.java:7)\r\n    ... 1 more\r\n",
			lang: Java,
			want: []brief{
				{Type: "Error", Module: "java.lang", Frames: []string{"a.B|c@B.java:3:0", "a.B|d@B.java:7:0"}},
				{Type: "IllegalStateException", Module: "java.lang", Value: "boom", Frames: []string{"a.B|c@B.java:3:0"}},
			},
		},
		{
			name: "python cause printed without a traceback, exception without a message, syntax error frame",
			text: "ValueError: bad\n\nThe above exception was the direct cause of the following exception:\n\n" +
				"Traceback (most recent call last):\n  File \"<string>\", line 1\n    x = (\n        ^\nSyntaxError: '(' was never closed\n\n" +
				"During handling of the above exception, another exception occurred:\n\n" +
				"Traceback (most recent call last):\n  File \"/srv/app.py\", line 9, in <module>\n    main()\nKeyboardInterrupt\n",
			lang: Python,
			want: []brief{
				{Type: "ValueError", Value: "bad"},
				{Type: "SyntaxError", Value: "'(' was never closed", Frames: []string{"|@<string>:1:0"}},
				{Type: "KeyboardInterrupt", Frames: []string{"|<module>@/srv/app.py:9:0"}},
			},
		},
		{
			name: "v8 node error code, native and Promise.all frames, Caused by",
			text: "TypeError [ERR_INVALID_ARG_TYPE]: The \"path\" argument must be of type string\n" +
				"    at Array.forEach (native)\n" +
				"    at async Promise.all (index 0)\n" +
				"    at Object.<anonymous> (file:///app/main.mjs:3:9)\n" +
				"Caused by: RangeError: too deep\n" +
				"    at node:internal/fs/utils:12:3\n",
			lang: JavaScript,
			want: []brief{
				{Type: "RangeError", Value: "too deep", Frames: []string{"|@node:internal/fs/utils:12:3"}},
				{Type: "TypeError", Value: "The \"path\" argument must be of type string", Frames: []string{
					"|Object.<anonymous>@file:///app/main.mjs:3:9", "|Promise.all@:0:0", "|Array.forEach@:0:0"}},
			},
		},
		{
			name: "go re-panic, created-by and a second goroutine",
			text: "panic: first [recovered]\n\tpanic: second\n\ngoroutine 7 [running]:\n" +
				"example.com/x/y%2ez.(*T).m(...)\n\t/src/y.go:3\n" +
				"example.com/x/y%2ez.F[...]({0x1, 0x2})\n\t/src/y.go:9 +0x1d\n" +
				"created by main.main in goroutine 1\n\t/src/main.go:5 +0x25\n\n" +
				"goroutine 1 [chan receive]:\nmain.main()\n\t/src/main.go:6 +0x30\n",
			lang: Go,
			want: []brief{
				{Type: "panic", Value: "first [recovered]"},
				{Type: "panic", Value: "second", Frames: []string{
					"example.com/x/y%2ez|F[...]@/src/y.go:9:0", "example.com/x/y%2ez|(*T).m@/src/y.go:3:0"}},
			},
		},
		{
			name: "go runtime.Stack cut at the end of its buffer",
			text: "goroutine 1 [running]:\nmain.a()\n\t/src/main.go:3 +0x1d\nmain.b(0xc00001",
			lang: Go,
			want: []brief{{Frames: []string{"main|b@:0:0", "main|a@/src/main.go:3:0"}}},
		},
		{
			name: "go runtime.Stack cut inside a line number",
			text: "goroutine 1 [running]:\nmain.a()\n\t/src/main.go:3 +0x1d\nmain.b(...)\n\t/src/main.go:5",
			lang: Go,
			want: []brief{{Frames: []string{"main|b@/src/main.go:0:0", "main|a@/src/main.go:3:0"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chain, lang, ok := Parse(tt.text)
			if !ok || lang != tt.lang {
				t.Fatalf("Parse: lang %q ok %v, want %q true", lang, ok, tt.lang)
			}
			if got := briefs(chain); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseUnrecognised(t *testing.T) {
	for _, text := range []string{
		"",
		"\n\n",
		"something went wrong",
		"at",
		"Traceback (most recent call last):\n",
		"  + Exception Group Traceback (most recent call last):\n  |   File \"x.py\", line 1, in <module>\n  | ExceptionGroup: eg (1 sub-exception)\n  +-+---------------- 1 ----------------\n    | ValueError: 1\n    +------------------------------------\n",
		"goroutine 1 [running]:\n",
	} {
		if chain, lang, ok := Parse(text); ok || chain != nil {
			t.Errorf("Parse(%q) = %+v, %q, %v; want nothing recognised", text, chain, lang, ok)
		}
	}
}

// javaTrace prints a Java trace of causes exceptions with frames frames
// each, the causes sharing all but their first frame with the trace that
// encloses them, as the JVM prints them.
func javaTrace(causes, frames int) string {
	var b strings.Builder
	for c := 0; c < causes; c++ {
		if c > 0 {
			b.WriteString("Caused by: ")
		}
		fmt.Fprintf(&b, "java.lang.Exception: e%d\n", c)
		n := frames
		if c > 0 {
			n = 1
		}
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "\tat app.C%d.m(C.java:%d)\n", c, i+1)
		}
		if c > 0 {
			fmt.Fprintf(&b, "\t... %d more\n", frames-1)
		}
	}
	return b.String()
}

func pythonTrace(causes, frames int) string {
	var b strings.Builder
	for c := 0; c < causes; c++ {
		if c > 0 {
			b.WriteString("\n" + pythonCause + "\n\n")
		}
		b.WriteString("Traceback (most recent call last):\n")
		for i := 0; i < frames; i++ {
			fmt.Fprintf(&b, "  File \"/app/m.py\", line %d, in f%d\n    f()\n", i+1, c)
		}
		fmt.Fprintf(&b, "ValueError: e%d\n", c)
	}
	return b.String()
}

func TestParseLimits(t *testing.T) {
	t.Run("java keeps the innermost frames", func(t *testing.T) {
		chain, _, _ := Parse(javaTrace(2, 300))
		for i, e := range chain {
			if len(e.Frames) != MaxFrames {
				t.Fatalf("exception %d: %d frames, want %d", i, len(e.Frames), MaxFrames)
			}
		}
		// The cause printed 1 frame and took 249 of the enclosing trace's
		// outermost frames ("... 299 more" stands for lines 2..300).
		cause := chain[0].Frames
		if f := cause[len(cause)-1]; f.Module != "app.C1" || f.Lineno != 1 {
			t.Errorf("innermost frame of the cause %+v, want app.C1 line 1", f)
		}
		if f := cause[0]; f.Module != "app.C0" || f.Lineno != 250 {
			t.Errorf("outermost kept frame of the cause %+v, want app.C0 line 250", f)
		}
		caught := chain[1].Frames
		if caught[len(caught)-1].Lineno != 1 || caught[0].Lineno != 250 {
			t.Errorf("caught exception keeps lines %d..%d, want 250..1", caught[0].Lineno, caught[len(caught)-1].Lineno)
		}
	})
	t.Run("python keeps the innermost frames", func(t *testing.T) {
		chain, _, _ := Parse(pythonTrace(1, 300))
		frames := chain[0].Frames
		if len(frames) != MaxFrames || frames[0].Lineno != 51 || frames[len(frames)-1].Lineno != 300 {
			t.Errorf("%d frames, lines %d..%d; want %d frames, lines 51..300",
				len(frames), frames[0].Lineno, frames[len(frames)-1].Lineno, MaxFrames)
		}
	})
	t.Run("python spells out repeated lines up to the limit", func(t *testing.T) {
		text := "Traceback (most recent call last):\n  File \"/a.py\", line 1, in <module>\n" +
			"  File \"/a.py\", line 2, in f\n  [Previous line repeated 999999999 more times]\n" +
			"  File \"/a.py\", line 3, in f\nRecursionError: maximum recursion depth exceeded\n"
		chain, _, _ := Parse(text)
		frames := chain[0].Frames
		if len(frames) != MaxFrames || frames[len(frames)-1].Lineno != 3 {
			t.Fatalf("%d frames, innermost line %d; want %d, 3", len(frames), frames[len(frames)-1].Lineno, MaxFrames)
		}
		for i, f := range frames[:len(frames)-1] {
			if f.Lineno != 2 {
				t.Fatalf("frame %d line %d, want the repeated line 2", i, f.Lineno)
			}
		}
	})
	for _, tc := range []struct {
		lang Language
		text string
	}{
		{Java, javaTrace(30, 3)},
		{Python, pythonTrace(30, 2)},
	} {
		t.Run(string(tc.lang)+" keeps both ends of a long chain", func(t *testing.T) {
			chain, _, _ := Parse(tc.text)
			var got []string
			for _, e := range chain {
				got = append(got, e.Value)
			}
			// Sentry's order is oldest first: e29 (the root cause for Java,
			// printed last) or e0 (Python prints the root cause first).
			var want []string
			for i := 0; i < 30; i++ {
				if i < MaxExceptions/2 || i >= 30-MaxExceptions/2 {
					want = append(want, fmt.Sprintf("e%d", i))
				}
			}
			if tc.lang == Java {
				want = reverse(want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("chain %v, want %v", got, want)
			}
		})
	}
}

// The exporter compiles against exactly this API.
var (
	_ func(string) ([]Exception, Language, bool) = Parse
	_                                            = Frame{Function: "", Module: "", Filename: "", AbsPath: "", Lineno: 0, Colno: 0, Package: "", InApp: (*bool)(nil)}
	_                                            = Exception{Type: "", Value: "", Module: "", Frames: []Frame(nil)}
	_                                            = []Language{Java, Python, JavaScript, Go, DotNet, Ruby, ""}
	_                                            = [2]int{MaxFrames, MaxExceptions}
)
