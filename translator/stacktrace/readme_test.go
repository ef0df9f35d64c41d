package stacktrace

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestReadmeLimits keeps the Limits table of README.md true: each limit's
// row names the constant and its value.
func TestReadmeLimits(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, value := range map[string]int{"MaxFrames": MaxFrames, "MaxExceptions": MaxExceptions} {
		row := regexp.MustCompile("(?m)^\\| `" + name + "`[^|]*\\| ([0-9]+) \\|").FindSubmatch(readme)
		if row == nil {
			t.Errorf("README.md has no Limits row for %s", name)
			continue
		}
		if got, _ := strconv.Atoi(string(row[1])); got != value {
			t.Errorf("README.md gives %s as %d, the code as %d", name, got, value)
		}
	}
}
