// Package signaltest holds what the tests of the signal translators share.
package signaltest // import "github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"

import (
	"os"
	"path/filepath"
	"testing"
)

// ReadTestdata returns the file name of the calling package's testdata
// directory: the items captured from real SDKs and the ones a test wrote.
func ReadTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
