// Package translatortest holds the checks the tests of every translator
// direction run on what they produce: valid pdata (contrib's validator, the
// index bounds, a pprof conversion) without duplicate dictionary entries,
// and chunks that pass Relay's rules and read back as written. It imports
// neither direction, so that the tests of both can use it.
package translatortest

import (
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pprofiletest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/pprofconv"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// RequireValidPdata runs the three checks every produced pdata must pass:
// contrib's ValidateProfile, the index bounds check of MergeTo into an empty
// Profiles, and a pprof conversion that passes CheckValid.
func RequireValidPdata(t testing.TB, pd pprofile.Profiles) {
	t.Helper()
	dict := pd.Dictionary()
	for ri, rp := range pd.ResourceProfiles().All() {
		for si, sp := range rp.ScopeProfiles().All() {
			for pi, prof := range sp.Profiles().All() {
				require.NoError(t, pprofiletest.ValidateProfile(dict, prof), "resource %d scope %d profile %d", ri, si, pi)
			}
		}
	}
	RequireNoDuplicates(t, dict)

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

// RequireNoDuplicates checks the dictionary promise: index 0 of every table
// is the zero entry and no entry appears twice.
func RequireNoDuplicates(t testing.TB, dict pprofile.ProfilesDictionary) {
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
	type functionKey struct {
		name, systemName, filename int32
		startLine                  int64
	}
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
	type linkKey struct {
		trace pcommon.TraceID
		span  pcommon.SpanID
	}
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

// RequireValidChunk checks that chunk i (p, with the size bound the
// exporter gave it) passes Relay's rules and survives the V2 writer and
// decoder unchanged.
func RequireValidChunk(t testing.TB, i int, p *sentry.Profile, sizeBound int64) {
	t.Helper()
	require.NoError(t, sentry.Validate(p, sentry.DefaultLimits()), "chunk %d", i)
	data := sentry.AppendChunkJSON(nil, p)
	require.LessOrEqual(t, int64(len(data)), sizeBound, "chunk %d: SizeBound is a bound of its JSON", i)
	back, err := sentry.DecodeProfile(data)
	require.NoError(t, err, "chunk %d: %s", i, data)
	back.Present = p.Present // presence is the decoder's record of the JSON, not part of the chunk
	require.Equal(t, p, back, "chunk %d reads back as written", i)
}

// DecodeBenchChunk is the generated V2 chunk of cfg, decoded, normalized
// and valid, with b counting its JSON bytes.
func DecodeBenchChunk(b *testing.B, cfg benchdata.ChunkConfig) *sentry.Profile {
	b.Helper()
	data := benchdata.ChunkV2(cfg)
	p, err := sentry.DecodeProfile(data)
	require.NoError(b, err)
	sentry.Normalize(p)
	require.NoError(b, sentry.Validate(p, sentry.DefaultLimits()))
	b.SetBytes(int64(len(data)))
	return p
}

// SampleAttrs are the attributes of sample s of pd, as raw values.
func SampleAttrs(t *testing.T, pd pprofile.Profiles, s pprofile.Sample) map[string]any {
	t.Helper()
	m, err := pprofile.FromAttributeIndices(pd.Dictionary().AttributeTable(), s, pd.Dictionary())
	require.NoError(t, err)
	return m.AsRaw()
}

// ProfileAttrs are the attributes of profile prof of pd, as raw values.
func ProfileAttrs(pd pprofile.Profiles, prof pprofile.Profile) map[string]any {
	out := map[string]any{}
	dict := pd.Dictionary()
	for _, i := range prof.AttributeIndices().All() {
		a := dict.AttributeTable().At(int(i))
		out[dict.StringTable().At(int(a.KeyStrindex()))] = a.Value().AsRaw()
	}
	return out
}
