package symbolicationprocessor

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/proguard"
)

// jvmFrame is a JVM stack frame as StackTraceElement gives it.
type jvmFrame struct {
	class, method string
	line          int64
}

// TestRealProGuardErrors shrinks and obfuscates the proguard package's
// Java program with ProGuard (which inlines methods), runs the original
// and the obfuscated program (each prints its stack from a Throwable,
// innermost first, what sentry-java sends as an exception's frames), and
// sends the obfuscated frames as sentry-java does: module the class,
// function the method, the proguard debug image naming the mapping by its
// content uuid (sentry-cli's, without --uuid). The processor gives back
// the original program's frames.
func TestRealProGuardErrors(t *testing.T) {
	for _, tool := range []string{"proguard", "javac", "java"} {
		testenv.LookPath(t, tool, "proguard-cli, default-jdk-headless")
	}
	dir := t.TempDir()
	program, err := os.ReadFile("../symbolication/proguard/testdata/Shop.java.txt")
	require.NoError(t, err)
	src := filepath.Join(dir, "src", "shop", "Main.java")
	require.NoError(t, os.MkdirAll(filepath.Dir(src), 0o755))
	require.NoError(t, os.WriteFile(src, program, 0o644))
	runIn(t, dir, "javac", "--release", "8", "-d", "classes", src)
	conf := strings.Join([]string{
		"-injars classes", "-outjars out", "-printmapping mappings/mapping.txt",
		"-keep public class shop.Main { public static void main(java.lang.String[]); }",
		"-keepattributes SourceFile,LineNumberTable",
		"-optimizationpasses 5", "-allowaccessmodification", "-ignorewarnings",
	}, "\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pg.conf"), []byte(conf), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "mappings"), 0o755))
	runIn(t, dir, "proguard", "@pg.conf")
	original := jvmStackOf(t, runIn(t, dir, "java", "-cp", "classes", "shop.Main"))
	obfuscated := jvmStackOf(t, runIn(t, dir, "java", "-cp", "out", "shop.Main"))
	require.Less(t, len(obfuscated), len(original), "ProGuard inlined something")
	mapping, err := os.ReadFile(filepath.Join(dir, "mappings", "mapping.txt"))
	require.NoError(t, err)

	var frames []string
	for i := len(obfuscated) - 1; i >= 0; i-- { // Sentry: outermost first
		f := obfuscated[i]
		frames = append(frames, fmt.Sprintf(`{"module":%q,"function":%q,"lineno":%d,"in_app":true}`, f.class, f.method, f.line))
	}
	event := fmt.Appendf(nil, `{"event_id":"9f1c5a0e8d3b4c2a9e7f6d5c4b3a2913","platform":"java","level":"error",
"sdk":{"name":"sentry.java.android","version":"8.0.0"},
"exception":{"values":[{"type":"IllegalStateException","value":"report failed","module":"java.lang",
"mechanism":{"type":"UncaughtExceptionHandler","handled":false},"stacktrace":{"frames":[%s]}}]},
"debug_meta":{"images":[{"type":"proguard","uuid":%q}]}}`, strings.Join(frames, ","), proguard.UUIDOf(mapping))
	sink := new(consumertest.LogsSink)
	cfg := testConfig()
	cfg.ProGuard.Directories = []string{filepath.Join(dir, "mappings")}
	newLogsProcessor(t, cfg, sink)(eventLogs(t, "java", event))

	var got, want []string
	for _, f := range exceptionFrames(t, recordOf(sink.AllLogs()[0]), 0) {
		got = append(got, fmt.Sprintf("%v.%v:%v", f["module"], f["function"], f["lineno"]))
	}
	for i := len(original) - 1; i >= 0; i-- {
		want = append(want, fmt.Sprintf("%s.%s:%d", original[i].class, original[i].method, original[i].line))
	}
	assert.Equal(t, want, got)
}

// jvmStackOf reads the FRAME lines the Java program prints, innermost
// first.
func jvmStackOf(t *testing.T, out string) []jvmFrame {
	t.Helper()
	var frames []jvmFrame
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 4 || fields[0] != "FRAME" {
			continue
		}
		line, err := strconv.ParseInt(fields[3], 10, 64)
		require.NoError(t, err)
		frames = append(frames, jvmFrame{class: fields[1], method: fields[2], line: line})
	}
	require.NotEmpty(t, frames, "the program printed its stack:\n%s", out)
	return frames
}

func runIn(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v:\n%s", name, args, out)
	return string(out)
}
