package profilesin

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/translatortest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// TestProfilesBuilderReset builds a run of envelopes, each a few items,
// once with a new builder per envelope and once with one builder Reset
// between them: the OTLP bytes must be the same, so nothing of an earlier
// envelope (dictionary entries, scratch space, thread numbers) leaks into a
// later one.
func TestProfilesBuilderReset(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	var items []DecodedProfile
	for _, path := range paths {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		p, err := sentry.DecodeProfile(data)
		require.NoError(t, err, path)
		sentry.Normalize(p)
		require.NoError(t, sentry.Validate(p, sentry.DefaultLimits()), path)
		items = append(items, DecodedProfile{Profile: p, Payload: data})
	}
	items = append(items, DecodedProfile{Profile: nodeChunk()})

	envelopes := [][]DecodedProfile{
		{items[0]},
		items,
		{items[len(items)-1], items[0]},
		{},
		{items[1], items[1]},
	}
	opts := []ReceiveOptions{
		{},
		{ProjectID: "42", KeepOriginalPayload: true},
		{ServiceName: "checkout"},
	}
	marshal := func(pd pprofile.Profiles) []byte {
		buf, err := (&pprofile.ProtoMarshaler{}).MarshalProfiles(pd)
		require.NoError(t, err)
		return buf
	}
	reused := NewProfilesBuilder(ReceiveOptions{})
	for round := range 2 {
		for i, env := range envelopes {
			o := opts[(i+round)%len(opts)]
			fresh := NewProfilesBuilder(o)
			reused.Reset(o)
			for _, it := range env {
				require.Equal(t, fresh.Add(it), reused.Add(it))
			}
			require.Equal(t, fresh.SampleCount(), reused.SampleCount())
			want, got := fresh.Profiles(), reused.Profiles()
			translatortest.RequireValidPdata(t, got)
			if !bytes.Equal(marshal(want), marshal(got)) {
				t.Fatalf("round %d, envelope %d: a reused builder builds other profiles than a new one", round, i)
			}
		}
	}
}
