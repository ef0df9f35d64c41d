package collectorversion

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRepositoryNamesOneRelease fails while go.mod, the ocb manifest and
// the Makefile name different collector releases: a half-done upgrade.
func TestRepositoryNamesOneRelease(t *testing.T) {
	refs, err := Read("../..")
	require.NoError(t, err)
	files := map[string]int{}
	for _, r := range refs {
		files[r.File]++
	}
	for _, f := range []string{"go.mod", BuilderFile, Makefile} {
		require.Positive(t, files[f], "%s names no collector module", f)
	}
	rel, problems := Check(refs)
	assert.Empty(t, problems, "every file must name collector release %s", rel)
	t.Logf("collector release %s, %d references in %d files", rel, len(refs), len(files))
}

func TestCheck(t *testing.T) {
	core := func(file, mod, v string) Reference {
		return Reference{File: file, Module: "go.opentelemetry.io/collector/" + mod, Version: v}
	}
	contrib := func(file, mod, v string) Reference {
		return Reference{File: file, Module: "github.com/open-telemetry/opentelemetry-collector-contrib/" + mod, Version: v}
	}
	agreeing := []Reference{
		core("go.mod", "pdata", "v1.71.0"),
		core("go.mod", "config/confighttp", "v1.71.0"),
		core("go.mod", "pdata/pprofile", "v0.165.0"),
		core("go.mod", "receiver/xreceiver", "v0.165.0"),
		contrib("go.mod", "pkg/pdatatest", "v0.165.1"),
		core(BuilderFile, "receiver/otlpreceiver", "v0.165.0"),
		contrib(BuilderFile, "exporter/fileexporter", "v0.165.0"),
		core(Makefile, "cmd/builder", "v0.165.0"),
	}
	tests := []struct {
		name    string
		refs    []Reference
		problem string
	}{
		{name: "one release, contrib patch", refs: agreeing},
		{name: "manifest left behind", refs: append(clone(agreeing), core(BuilderFile, "exporter/debugexporter", "v0.164.0")), problem: "debugexporter v0.164.0"},
		{name: "Makefile left behind", refs: append(clone(agreeing[:7]), core(Makefile, "cmd/builder", "v0.164.0")), problem: "cmd/builder v0.164.0"},
		{name: "stable module of another release", refs: append(clone(agreeing), core("go.mod", "consumer", "v1.70.0")), problem: "consumer v1.70.0"},
		{name: "contrib of another release", refs: append(clone(agreeing), contrib("go.mod", "extension/storage/filestorage", "v0.166.0")), problem: "filestorage v0.166.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel, problems := Check(tt.refs)
			assert.Equal(t, Release{Unstable: 165, Stable: 71}, rel)
			if tt.problem == "" {
				assert.Empty(t, problems)
				return
			}
			require.Len(t, problems, 1)
			assert.Contains(t, problems[0], tt.problem)
		})
	}
}

func TestIsCollectorModule(t *testing.T) {
	for path, want := range map[string]bool{
		"go.opentelemetry.io/collector/pdata":                                     true,
		"go.opentelemetry.io/collector/cmd/mdatagen":                              false,
		"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest": true,
		"go.opentelemetry.io/otel":                                                false,
		"go.opentelemetry.io/collectorx/thing":                                    false,
		"github.com/sentryprofile/otelcol-sentryprofile":                          false,
		"go.opentelemetry.io/proto/otlp/collector/profiles/v1development":         false,
	} {
		assert.Equal(t, want, IsCollectorModule(path), path)
	}
}

func clone(refs []Reference) []Reference { return append([]Reference(nil), refs...) }
