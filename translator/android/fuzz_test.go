package android_test

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/android"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/art"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/art/arttest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
)

// FuzzDecodeARTTrace feeds arbitrary bytes as an ART method trace file
// (either form) through the Android decoder to the builder: whatever
// decodes, undeclared methods included, gives pdata whose indices hold.
func FuzzDecodeARTTrace(f *testing.F) {
	f.Add(proxyTrace(arttest.Write))
	f.Add(proxyTrace(arttest.WriteStreaming))
	end := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, _, err := android.DecodeARTTrace(data, end, art.Limits{MaxEvents: 10_000, MaxMethods: 1000, MaxThreads: 1000})
		if err != nil {
			return
		}
		pd := profilestest.ToProfiles([]profilesin.DecodedProfile{{Profile: p}}, profilesin.ReceiveOptions{})
		if err := pd.MergeTo(pprofile.NewProfiles()); err != nil {
			t.Fatalf("out-of-range index: %v", err)
		}
	})
}
