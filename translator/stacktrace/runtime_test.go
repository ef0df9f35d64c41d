package stacktrace

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
)

// update rewrites testdata/<lang>/output.txt from the runtimes installed
// here: go test ./translator/stacktrace -run TestRuntimeTraces -update
var update = flag.Bool("update", false, "rewrite the captured runtime outputs in testdata")

// program is one of the test programs under testdata: the runtime runs it
// and it prints the stack-trace text the OpenTelemetry SDK of its language
// records, one case per "=====name=====" section.
type program struct {
	lang    Language
	dir     string   // under testdata
	source  string   // the file whose "frame:NAME" comments mark the lines on the stack
	needs   []string // executables that must be installed
	install string   // how to install them on Debian
	// run builds the program into tmp if needed and runs it.
	run func(t *testing.T, tmp, dir string) []byte
	// cases are the expectations, written from the program's source.
	cases map[string][]wantException
	// custom checks the cases whose frames depend on where the text was
	// cut, given the marked lines of the source.
	custom map[string]func(t *testing.T, chain []Exception, lines map[string]int)
}

// wantException is what a test program's source says about one exception
// of its chain, in Sentry's order. frames are the frames in the program's
// own file, outermost first; other frames (the runtime's) are only counted.
type wantException struct {
	typ, module, value string
	frames             []wantFrame
}

type wantFrame struct {
	function, module string
	marker           string // the "frame:" comment on the expected line
}

func repeatFrame(f wantFrame, n int) []wantFrame {
	frames := make([]wantFrame, n)
	for i := range frames {
		frames[i] = f
	}
	return frames
}

func runCommand(t *testing.T, dir string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || name == "javac" || name == "mcs" || name == "go" {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	return out
}

var programs = []program{
	{
		lang: Java, dir: "java", source: "demo/Main.java", needs: []string{"javac", "java"},
		install: "apt-get install default-jdk-headless",
		run: func(t *testing.T, tmp, dir string) []byte {
			runCommand(t, dir, "javac", "-d", tmp, "demo/Main.java")
			return runCommand(t, dir, "java", "-cp", tmp, "demo.Main")
		},
		cases: map[string][]wantException{"main": {
			{"IllegalStateException", "java.lang", "inner failed at depth 3", []wantFrame{
				{"main", "demo.Main", "main"}, {"outer", "demo.Main", "outer"}, {"lambda$outer$0", "demo.Main", "lambda"},
				{"reflected", "demo.Main", "reflected"}, {"middle", "demo.Main", "middle-call"}, {"inner", "demo.Main", "inner"}}},
			{"RuntimeException", "java.lang", "middle wrapped", []wantFrame{
				{"main", "demo.Main", "main"}, {"outer", "demo.Main", "outer"}, {"lambda$outer$0", "demo.Main", "lambda"},
				{"reflected", "demo.Main", "reflected"}, {"middle", "demo.Main", "middle"}}},
			{"InvocationTargetException", "java.lang.reflect", "", []wantFrame{
				{"main", "demo.Main", "main"}, {"outer", "demo.Main", "outer"}, {"lambda$outer$0", "demo.Main", "lambda"}}},
			{"UnsupportedOperationException", "java.lang", "outer failed\nsecond line", []wantFrame{
				{"main", "demo.Main", "main"}, {"outer", "demo.Main", "outer"}, {"lambda$outer$0", "demo.Main", "lambda-throw"}}},
		}},
	},
	{
		lang: Python, dir: "python", source: "app.py", needs: []string{"python3"},
		install: "apt-get install python3",
		run: func(t *testing.T, _, dir string) []byte {
			return runCommand(t, dir, "python3", filepath.Join(dir, "app.py"))
		},
		cases: map[string][]wantException{"main": {
			{"JSONDecodeError", "json.decoder", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
				[]wantFrame{{"load", "", "load-call"}, {"parse", "", "parse"}}},
			{"AppError", "", "cannot load config", []wantFrame{{"handle", "", "handle-call"}, {"load", "", "load"}}},
			{"KeyError", "", "'missing'", []wantFrame{{"main", "", "main"}, {"handle", "", "handle"}}},
		},
			// countdown(30) recurses 30 times before countdown(0) raises;
			// Python prints three of the 30 and "[Previous line repeated 27
			// more times]". The notes join the message.
			"recursion": {{"ValueError", "", "reached zero\nafter counting down\nnote: counted from 30", append(append(
				[]wantFrame{{"main", "", "main-lambda"}, {"<lambda>", "", "main-lambda"}},
				repeatFrame(wantFrame{"countdown", "", "countdown"}, 30)...),
				wantFrame{"countdown", "", "countdown-raise"})}},
		},
	},
	{
		lang: JavaScript, dir: "node", source: "app.js", needs: []string{"node"},
		install: "apt-get install nodejs",
		run: func(t *testing.T, _, dir string) []byte {
			return runCommand(t, dir, "node", filepath.Join(dir, "app.js"))
		},
		cases: map[string][]wantException{
			"async": {{"TypeError", "", "rows must be an array", []wantFrame{
				{"main", "", "main-await"}, {"handler", "", "handler"}, {"fetchRow", "", "fetchRow"},
				{"Object.load [as fetch]", "", "load"}, {"new Repository", "", "constructor"}}}},
			"cause-stack": {{"Error", "", "lookup failed for A", []wantFrame{
				{"main", "", "main-get"}, {"Object.get", "", "get"}, {"lookup", "", "lookup-throw"}}}},
			"cause-inspect": {
				{"TypeError", "", "row.id.toUpperCase is not a function", []wantFrame{
					{"main", "", "main-get"}, {"Object.get", "", "get"}, {"lookup", "", "lookup"},
					{"Repository.find", "", "find"}, {"", "", "find"}}},
				{"Error", "", "lookup failed for A", []wantFrame{
					{"main", "", "main-get"}, {"Object.get", "", "get"}, {"lookup", "", "lookup-throw"}}},
			},
			"eval": {{"TypeError", "", "rows must be an array", []wantFrame{
				{"main", "", "main-eval"}, {"evaluate", "", "evaluate"}, {"eval", "", "evaluate"},
				{"Object.load [as fetch]", "", "load"}, {"new Repository", "", "constructor"}}}},
		},
	},
	{
		lang: Go, dir: "go", source: "main.go", needs: []string{"go"},
		install: "https://go.dev/dl",
		run: func(t *testing.T, tmp, dir string) []byte {
			bin := filepath.Join(tmp, "main")
			runCommand(t, dir, "go", "build", "-o", bin, "main.go")
			return runCommand(t, dir, bin)
		},
		cases: map[string][]wantException{
			"main": {{"", "", "", []wantFrame{
				{"main", "main", "main"}, {"handle", "main", "handle"}, {"box[...].open", "main", "open"},
				{"(*store).get", "main", "get"}}}},
			"panic": {{"panic", "", "assignment to entry in nil map", []wantFrame{
				{"main", "main", "main-closure"}, {"main.func1", "main", "main.func1"}, {"handle", "main", "handle"},
				{"box[...].open", "main", "open"}, {"(*store).get", "main", "get-panic"}}}},
		},
		custom: map[string]func(*testing.T, []Exception, map[string]int){
			// runtime.Stack into the SDK's 2048 bytes keeps the innermost
			// frames of the 40 calls of deep and cuts the text mid-frame.
			"otel-cut": func(t *testing.T, chain []Exception, lines map[string]int) {
				if len(chain) != 1 {
					t.Fatalf("%d exceptions, want 1", len(chain))
				}
				frames := chain[0].Frames
				if len(frames) < 10 || len(frames) > 41 {
					t.Fatalf("%d frames, want the 10 to 41 innermost", len(frames))
				}
				for i, f := range frames {
					want, wantLine := "deep", lines["deep"]
					switch i {
					case len(frames) - 1:
						want, wantLine = "recordStackTrace", lines["record"]
					case len(frames) - 2:
						wantLine = lines["deep-bottom"]
					case 0:
						wantLine = f.Lineno // where the text was cut: the file line may be lost
					}
					if f.Module != "main" || f.Function != want || f.Lineno != wantLine {
						t.Errorf("frame %d: %s.%s line %d, want main.%s line %d", i, f.Module, f.Function, f.Lineno, want, wantLine)
					}
				}
			},
		},
	},
	{
		lang: Ruby, dir: "ruby", source: "app.rb", needs: []string{"ruby"},
		install: "apt-get install ruby",
		run: func(t *testing.T, _, dir string) []byte {
			return runCommand(t, dir, "ruby", filepath.Join(dir, "app.rb"))
		},
		cases: map[string][]wantException{"main": {
			{"ArgumentError", "", `invalid value for Integer(): "x"`, []wantFrame{
				{"<main>", "", "main"}, {"report", "", "report"}, {"open", "", "open"}, {"total", "", "total-block"},
				{"sum", "", "total-block"}, {"block in total", "", "total-block"}, {"Integer", "", "total-block"}}},
			{"RuntimeError", "", "report failed", []wantFrame{
				{"<main>", "", "main"}, {"report", "", "report-def"}, {"rescue in report", "", "report-raise"}}},
		}},
	},
	{
		lang: DotNet, dir: "dotnet", source: "App.cs", needs: []string{"mcs", "mono"},
		install: "apt-get install mono-devel",
		run: func(t *testing.T, tmp, dir string) []byte {
			exe := filepath.Join(tmp, "App.exe")
			runCommand(t, dir, "mcs", "-debug", "-out:"+exe, "App.cs")
			return runCommand(t, dir, "mono", "--debug", exe)
		},
		cases: map[string][]wantException{"main": {
			{"System.FormatException", "", "Input string was not in a correct format.", []wantFrame{
				{"Parse", "Demo.Orders.Service", "Parse-call"}}},
			{"System.ArgumentException", "", "bad quantity: x42\nParameter name: text", []wantFrame{
				{"Load", "Demo.Orders.Service", "Load-parse"}, {"<Load>m__0", "Demo.Orders.Service", "lambda"},
				{"Parse", "Demo.Orders.Service", "Parse"}}},
			{"System.InvalidOperationException", "", "order 42 cannot be loaded", []wantFrame{
				{"Main", "Demo.Orders.Program", "Main"}, {"Load", "Demo.Orders.Service", "Load"}}},
		}},
	},
}

// TestCapturedTraces parses the outputs the runtimes printed here, kept in
// testdata so that the table runs without them.
func TestCapturedTraces(t *testing.T) {
	for _, p := range programs {
		t.Run(string(p.lang), func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", p.dir, "output.txt"))
			if err != nil {
				t.Fatalf("reading the captured output: %v (regenerate with -update)", err)
			}
			checkProgram(t, p, out)
		})
	}
}

// TestRuntimeTraces runs each test program with its runtime, when it is
// installed, and checks what it prints now.
func TestRuntimeTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("runs javac, mcs and go build: not in -short mode")
	}
	for _, p := range programs {
		t.Run(string(p.lang), func(t *testing.T) {
			for _, exe := range p.needs {
				if _, err := exec.LookPath(exe); err != nil {
					testenv.MissingTool(t, "%s is not installed (%s); TestCapturedTraces still checks the output captured in testdata/%s", exe, p.install, p.dir)
				}
			}
			dir, err := filepath.Abs(filepath.Join("testdata", p.dir))
			if err != nil {
				t.Fatal(err)
			}
			out := p.run(t, t.TempDir(), dir)
			checkProgram(t, p, out)
			if *update {
				if err := os.WriteFile(filepath.Join(dir, "output.txt"), out, 0o644); err != nil {
					t.Fatalf("writing the captured output: %v", err)
				}
			}
		})
	}
}

func checkProgram(t *testing.T, p program, out []byte) {
	t.Helper()
	lines := markers(t, filepath.Join("testdata", p.dir, p.source))
	sections := splitSections(out)
	if len(sections) != len(p.cases)+len(p.custom) {
		t.Errorf("output has cases %v, want %d", keys(sections), len(p.cases)+len(p.custom))
	}
	for name, check := range p.custom {
		chain, lang, ok := Parse(sections[name])
		if !ok || lang != p.lang {
			t.Errorf("case %q: Parse = lang %q, ok %v; want %q, true", name, lang, ok, p.lang)
			continue
		}
		check(t, chain, lines)
		t.Logf("%s %s: %d frames parsed / %d frame lines printed", p.lang, name, len(chain[0].Frames), countFrameLines(p.lang, sections[name]))
	}
	for name, want := range p.cases {
		text, found := sections[name]
		if !found {
			t.Errorf("case %q missing from the output", name)
			continue
		}
		chain, lang, ok := Parse(text)
		if !ok || lang != p.lang {
			t.Errorf("case %q: Parse = lang %q, ok %v; want %q, true\n%s", name, lang, ok, p.lang, text)
			continue
		}
		checkChain(t, name, filepath.Base(p.source), lines, chain, want)
		parsed, printed := 0, countFrameLines(p.lang, text)
		for _, e := range chain {
			parsed += len(e.Frames)
		}
		t.Logf("%s %s: %d frames parsed / %d frame lines printed, %d exceptions", p.lang, name, parsed, printed, len(chain))
	}
}

func checkChain(t *testing.T, name, file string, lines map[string]int, chain []Exception, want []wantException) {
	t.Helper()
	if len(chain) != len(want) {
		t.Errorf("case %q: %d exceptions, want %d: %+v", name, len(chain), len(want), chain)
		return
	}
	for i, w := range want {
		e := chain[i]
		if e.Type != w.typ || e.Module != w.module || e.Value != w.value {
			t.Errorf("case %q exception %d: type %q module %q value %q; want %q %q %q",
				name, i, e.Type, e.Module, e.Value, w.typ, w.module, w.value)
		}
		var own []Frame
		for _, f := range e.Frames {
			if filepath.Base(f.Filename) == file {
				own = append(own, f)
			}
		}
		if len(own) != len(w.frames) {
			t.Errorf("case %q exception %d (%s): %d frames in %s, want %d: %+v", name, i, w.typ, len(own), file, len(w.frames), own)
			continue
		}
		for j, wf := range w.frames {
			f := own[j]
			if f.Function != wf.function || f.Module != wf.module || f.Lineno != lines[wf.marker] {
				t.Errorf("case %q exception %d frame %d: %q %q line %d; want %q %q line %d (frame:%s)",
					name, i, j, f.Function, f.Module, f.Lineno, wf.function, wf.module, lines[wf.marker], wf.marker)
			}
		}
	}
}

var markerRE = regexp.MustCompile(`frame:([\w.\-]+)`)

// markers maps each "frame:NAME" comment of a source file to its line.
func markers(t *testing.T, path string) map[string]int {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the program: %v", err)
	}
	lines := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		if m := markerRE.FindStringSubmatch(sc.Text()); m != nil {
			lines[m[1]] = n
		}
	}
	return lines
}

var sectionRE = regexp.MustCompile(`(?m)^=====([\w-]+)=====\n`)

// splitSections cuts a program's output at its "=====name=====" lines; what
// comes before the first is the case "main".
func splitSections(out []byte) map[string]string {
	s := string(out)
	sections := map[string]string{}
	idx := sectionRE.FindAllStringSubmatchIndex(s, -1)
	if first := len(s); len(idx) == 0 || idx[0][0] > 0 {
		if len(idx) > 0 {
			first = idx[0][0]
		}
		if strings.TrimSpace(s[:first]) != "" {
			sections["main"] = s[:first]
		}
	}
	for i, m := range idx {
		end := len(s)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		sections[s[m[2]:m[3]]] = s[m[1]:end]
	}
	return sections
}

func keys(m map[string]string) []string {
	var k []string
	for name := range m {
		k = append(k, name)
	}
	return k
}

// countFrameLines counts the frame lines of a trace by the shape of the line
// alone, as a yardstick for the parser's count.
func countFrameLines(lang Language, text string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimLeft(l, " \t")
		switch lang {
		case Java, JavaScript, DotNet:
			if strings.HasPrefix(t, "at ") {
				n++
			}
		case Python:
			if strings.HasPrefix(l, `  File "`) {
				n++
			}
		case Go:
			if strings.HasPrefix(l, "\t") && strings.Contains(l, ".go:") {
				n++
			}
		case Ruby:
			if strings.HasPrefix(l, "\tfrom ") || (strings.Contains(l, ":in ") && !strings.HasPrefix(l, "\t")) {
				n++
			}
		}
	}
	return n
}
