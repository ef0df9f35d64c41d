package profilesin

import (
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// FuzzToProfiles feeds arbitrary JSON through the decoder to the builder
// without validation: the builder skips what is out of range and never
// produces pdata that fails the index checks.
func FuzzToProfiles(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := sentry.DecodeProfile(data)
		if err != nil {
			return
		}
		pd := toProfiles([]DecodedProfile{{Profile: p, Payload: data}}, ReceiveOptions{KeepOriginalPayload: true})
		if err := pd.MergeTo(pprofile.NewProfiles()); err != nil {
			t.Fatalf("out-of-range index: %v", err)
		}
	})
}
