package profilesout

import (
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/translatortest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
)

// BenchmarkFromProfiles measures the exporter on the same chunk.
func BenchmarkFromProfiles(b *testing.B) {
	p := translatortest.DecodeBenchChunk(b, benchdata.LargeChunkConfig())
	pd := profilestest.ToProfiles([]profilesin.DecodedProfile{{Profile: p}}, profilesin.ReceiveOptions{})
	b.ReportAllocs()
	for b.Loop() {
		chunks, drops := FromProfiles(pd, ExportOptions{})
		if len(chunks) != 1 || len(drops) != 0 {
			b.Fatalf("%d chunks, drops %v", len(chunks), drops)
		}
	}
}
