package proguard

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
)

// TestRealProGuard compiles a small Java program, shrinks and obfuscates it
// with ProGuard (which inlines three methods into one and writes the
// mapping), runs both the original and the obfuscated program (each prints
// its own stack trace from the innermost method) and checks that remapping
// the obfuscated trace gives exactly the original trace. Needs Debian's
// proguard-cli and a JDK.
func TestRealProGuard(t *testing.T) {
	for _, tool := range []string{"proguard", "javac", "java"} {
		testenv.LookPath(t, tool, "proguard-cli, default-jdk-headless")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src", "shop", "Main.java")
	require.NoError(t, os.MkdirAll(filepath.Dir(src), 0o755))
	program, err := os.ReadFile(filepath.Join("testdata", "Shop.java.txt"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(src, program, 0o644))
	run(t, dir, "javac", "--release", "8", "-d", "classes", src)

	// No -libraryjars: this ProGuard cannot read the JDK 17 runtime's class
	// files, and the program only calls java.lang, which ProGuard then
	// treats as unknown library code.
	conf := strings.Join([]string{
		"-injars classes", "-outjars out", "-printmapping mapping.txt",
		"-keep public class shop.Main { public static void main(java.lang.String[]); }",
		"-keepattributes SourceFile,LineNumberTable",
		"-optimizationpasses 5", "-allowaccessmodification", "-ignorewarnings",
	}, "\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pg.conf"), []byte(conf), 0o644))
	run(t, dir, "proguard", "@pg.conf")

	original := stackOf(t, run(t, dir, "java", "-cp", "classes", "shop.Main"))
	obfuscated := stackOf(t, run(t, dir, "java", "-cp", "out", "shop.Main"))
	require.Len(t, original, 4, "dump, applyDiscount, total, main")
	require.Less(t, len(obfuscated), len(original), "ProGuard inlined something: %v", obfuscated)

	content, err := os.ReadFile(filepath.Join(dir, "mapping.txt"))
	require.NoError(t, err)
	m, err := Parse(bytes.NewReader(content))
	require.NoError(t, err)
	require.Zero(t, m.SkippedLines(), "ProGuard's own output reads cleanly:\n%s", content)

	var remapped []Frame
	for _, f := range obfuscated {
		frames := m.Remap(f.Class, f.Method, f.Line)
		require.NotEmpty(t, frames, "%+v is in the mapping", f)
		for i := range frames {
			frames[i].File = "" // the JVM reports Main.java; the mapping has no file names
		}
		remapped = append(remapped, frames...)
	}
	assert.Equal(t, original, remapped)
}

// stackOf reads the FRAME lines the Java program prints, innermost first.
func stackOf(t *testing.T, out string) []Frame {
	t.Helper()
	var frames []Frame
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 4 || fields[0] != "FRAME" {
			continue
		}
		line, err := strconv.Atoi(fields[3])
		require.NoError(t, err)
		frames = append(frames, Frame{Class: fields[1], Method: fields[2], Line: line})
	}
	return frames
}

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v:\n%s", name, args, out)
	return string(out)
}
