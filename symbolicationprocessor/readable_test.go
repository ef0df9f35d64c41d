package symbolicationprocessor

import (
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pprofiletest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/pprofconv"
)

// requireReadable checks the processor's output the way its readers take
// it: contrib's ValidateProfile, the index bounds check of MergeTo into an
// empty Profiles, and a pprof conversion that passes CheckValid (what `go
// tool pprof` draws, and the form Grafana Pyroscope stores). Every name in
// want must be a function of the pprof profiles.
func requireReadable(t testing.TB, pd pprofile.Profiles, want ...string) {
	t.Helper()
	dict := pd.Dictionary()
	for _, rp := range pd.ResourceProfiles().All() {
		for _, sp := range rp.ScopeProfiles().All() {
			for _, prof := range sp.Profiles().All() {
				require.NoError(t, pprofiletest.ValidateProfile(dict, prof))
			}
		}
	}
	clone := pprofile.NewProfiles()
	pd.CopyTo(clone)
	require.NoError(t, clone.MergeTo(pprofile.NewProfiles()), "MergeTo checks every index")

	converted, err := pprofconv.Convert(pd)
	require.NoError(t, err)
	names := map[string]bool{}
	for i, p := range converted {
		require.NoError(t, p.CheckValid(), "pprof profile %d", i)
		for _, f := range p.Function {
			names[f.Name] = true
		}
	}
	for _, name := range want {
		require.True(t, names[name], "pprof has no function %q: %v", name, names)
	}
}
