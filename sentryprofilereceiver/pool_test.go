package sentryprofilereceiver

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// TestPooledEnvelopeStatesKeepNoAliases posts chunks of different sizes and
// frames, gzip'd and not, from several clients at once, with the original
// payload kept. The receiver reads and translates them with pooled readers,
// decoders and builders; every profile the sink holds must still carry its
// own payload and samples once all the others have gone through the same
// memory.
func TestPooledEnvelopeStatesKeepNoAliases(t *testing.T) {
	sink := new(consumertest.ProfilesSink)
	tr := startReceiver(t, sink, func(c *Config) { c.IncludeOriginalPayload = true })

	var payloads [][]byte
	for seed := range uint64(12) {
		cfg := benchdata.SmallChunkConfig()
		cfg.Seed = seed + 10
		cfg.Frames = 40 + int(seed)*30
		cfg.Seconds = 0.2 + float64(seed)*0.3
		payloads = append(payloads, benchdata.ChunkV2(cfg))
	}
	// What each payload gives through a fresh, unpooled translation.
	want := map[string]int{} // payload → sample events
	for _, p := range payloads {
		profile, err := sentry.DecodeProfile(p)
		require.NoError(t, err)
		sentry.Normalize(profile)
		require.NoError(t, sentry.Validate(profile, sentry.DefaultLimits()))
		n := profilestest.SampleEvents(profilestest.ToProfiles([]profilesin.DecodedProfile{{Profile: profile}}, profilesin.ReceiveOptions{}))
		require.Positive(t, n)
		want[string(p)] = n
	}

	var wg sync.WaitGroup
	for client := range 4 {
		wg.Go(func() {
			for round := range 3 {
				for i, p := range payloads {
					body := envelopeOf(eventHeader, chunkItem(string(p)))
					headers := map[string]string{}
					if (i+round+client)%2 == 0 {
						body = compresstest.Bytes(t, "gzip", body)
						headers["Content-Encoding"] = "gzip"
					}
					resp := post(t, tr, body, headers)
					assert.Equal(t, http.StatusOK, resp.status, "body: %s", resp.body)
				}
			}
		})
	}
	wg.Wait()

	all := sink.AllProfiles()
	require.Len(t, all, 4*3*len(payloads))
	seen := map[string]int{}
	for _, pd := range all {
		profile := pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0)
		original := string(profile.OriginalPayload().AsRaw())
		n, ok := want[original]
		require.True(t, ok, "a profile carries a payload no client sent (%d bytes)", len(original))
		assert.Equal(t, n, profilestest.SampleEvents(pd), "the samples of a profile do not match its payload")
		seen[original]++
	}
	for _, p := range payloads {
		assert.Equal(t, 12, seen[string(p)], "each payload arrives once per client and round")
	}
}
