package translator

import (
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/samplecount"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pprofiletest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/pprofconv"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// requireValidPdata runs the three checks every produced pdata must pass:
// contrib's ValidateProfile, the index bounds check of MergeTo into an empty
// Profiles, and a pprof conversion that passes CheckValid.
func requireValidPdata(t testing.TB, pd pprofile.Profiles) {
	t.Helper()
	dict := pd.Dictionary()
	for ri, rp := range pd.ResourceProfiles().All() {
		for si, sp := range rp.ScopeProfiles().All() {
			for pi, prof := range sp.Profiles().All() {
				require.NoError(t, pprofiletest.ValidateProfile(dict, prof), "resource %d scope %d profile %d", ri, si, pi)
			}
		}
	}
	requireNoDuplicates(t, dict)

	clone := pprofile.NewProfiles()
	pd.CopyTo(clone)
	require.NoError(t, clone.MergeTo(pprofile.NewProfiles()), "MergeTo checks every index")

	converted, err := pprofconv.Convert(pd)
	require.NoError(t, err)
	require.Len(t, converted, pd.ProfileCount())
	for i, p := range converted {
		require.NoError(t, p.CheckValid(), "pprof profile %d", i)
	}
}

// requireNoDuplicates checks the dictionary promise: index 0 of every table
// is the zero entry and no entry appears twice.
func requireNoDuplicates(t testing.TB, dict pprofile.ProfilesDictionary) {
	t.Helper()
	require.Positive(t, dict.StringTable().Len())
	require.Empty(t, dict.StringTable().At(0))
	strs := map[string]bool{}
	for i, s := range dict.StringTable().All() {
		require.False(t, strs[s], "string %d %q twice", i, s)
		strs[s] = true
	}

	require.Positive(t, dict.FunctionTable().Len())
	require.True(t, dict.FunctionTable().At(0).Equal(pprofile.NewFunction()), "function 0 is the zero entry")
	funcs := map[functionKey]bool{}
	for i, f := range dict.FunctionTable().All() {
		k := functionKey{f.NameStrindex(), f.SystemNameStrindex(), f.FilenameStrindex(), f.StartLine()}
		require.False(t, funcs[k], "function %d twice", i)
		funcs[k] = true
	}

	require.Positive(t, dict.LocationTable().Len())
	require.True(t, dict.LocationTable().At(0).Equal(pprofile.NewLocation()), "location 0 is the zero entry")
	for i := 1; i < dict.LocationTable().Len(); i++ {
		for j := 1; j < i; j++ {
			require.False(t, dict.LocationTable().At(i).Equal(dict.LocationTable().At(j)), "locations %d and %d are equal", j, i)
		}
		if i > 400 {
			break // quadratic: a prefix is enough
		}
	}

	require.Positive(t, dict.MappingTable().Len())
	require.True(t, dict.MappingTable().At(0).Equal(pprofile.NewMapping()), "mapping 0 is the zero entry")
	require.Positive(t, dict.StackTable().Len())
	require.Zero(t, dict.StackTable().At(0).LocationIndices().Len(), "stack 0 is empty")
	stacks := map[string]bool{}
	for i, s := range dict.StackTable().All() {
		k := int32Key(s.LocationIndices().AsRaw())
		require.False(t, stacks[k], "stack %d twice", i)
		stacks[k] = true
	}
	require.Positive(t, dict.LinkTable().Len())
	require.True(t, dict.LinkTable().At(0).Equal(pprofile.NewLink()), "link 0 is the zero entry")
	links := map[linkKey]bool{}
	for i, l := range dict.LinkTable().All() {
		k := linkKey{l.TraceID(), l.SpanID()}
		require.False(t, links[k], "link %d twice", i)
		links[k] = true
	}
	require.Positive(t, dict.AttributeTable().Len())
	require.Zero(t, dict.AttributeTable().At(0).KeyStrindex(), "attribute 0 is the zero entry")
	require.Equal(t, pcommon.ValueTypeEmpty, dict.AttributeTable().At(0).Value().Type())
	for i := 1; i < dict.AttributeTable().Len(); i++ {
		for j := 1; j < i; j++ {
			require.False(t, dict.AttributeTable().At(i).Equal(dict.AttributeTable().At(j)), "attributes %d and %d are equal", j, i)
		}
		if i > 400 {
			break
		}
	}
}

func int32Key(v []int32) string {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = append(b, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
	}
	return string(b)
}

// requireValidChunks checks that every chunk passes Relay's rules and
// survives the V2 writer and decoder unchanged.
func requireValidChunks(t testing.TB, chunks []Chunk) {
	t.Helper()
	for i, c := range chunks {
		require.NoError(t, sentry.Validate(c.Profile, sentry.DefaultLimits()), "chunk %d", i)
		data := sentry.AppendChunkJSON(nil, c.Profile)
		require.LessOrEqual(t, int64(len(data)), c.SizeBound, "chunk %d: SizeBound is a bound of its JSON", i)
		back, err := sentry.DecodeProfile(data)
		require.NoError(t, err, "chunk %d: %s", i, data)
		back.Present = c.Profile.Present // presence is the decoder's record of the JSON, not part of the chunk
		require.Equal(t, c.Profile, back, "chunk %d reads back as written", i)
	}
}

// sentOrDropped counts the sample events of the chunks and of the drops: a
// conversion accounts for every event of its input one way or the other.
func sentOrDropped(chunks []Chunk, drops []Drop) int {
	n := 0
	for _, c := range chunks {
		n += len(c.Profile.Samples)
	}
	for _, d := range drops {
		n += d.Samples
	}
	return n
}

// toProfiles converts items into one pprofile.Profiles, as a
// ProfilesBuilder that adds them in order.
func toProfiles(items []DecodedProfile, opts ReceiveOptions) pprofile.Profiles {
	b := NewProfilesBuilder(opts)
	for _, it := range items {
		b.Add(it)
	}
	return b.Profiles()
}

// countSampleEvents counts the Sentry samples pd holds.
func countSampleEvents(pd pprofile.Profiles) int { return samplecount.Events(pd) }

// sampleEvents counts the observations of one Sample.
func sampleEvents(s pprofile.Sample) int { return samplecount.OfSample(s) }
