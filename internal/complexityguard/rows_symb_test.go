package complexityguard

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"
)

// symbRows are the rows of the symbolication sources layer.
func symbRows() []row {
	return []row{
		{
			name: "native_build_ids_in_directories", dimension: "invented build ids in one batch, against debug directories", n: 100, clock: ProcessClock,
			// A build id no file has is looked up in the .build-id layout
			// (by path) and the scan's index; the rescan it asks for runs
			// at most once per rescan_interval whatever the batch names,
			// so the directories' size does not multiply the ids.
			build: symbolicationRow(func(tb testing.TB, dir string, _ int) {
				for i := range 50 {
					p := filepath.Join(dir, fmt.Sprintf("lib%d", i%5), fmt.Sprintf("file%d.debug", i))
					require.NoError(tb, os.MkdirAll(filepath.Dir(p), 0o755))
					require.NoError(tb, os.WriteFile(p, []byte("not an ELF file"), 0o644))
				}
			}, func(dir string) *symbolicationprocessor.Config {
				cfg := symbolicationprocessor.NewFactory().CreateDefaultConfig().(*symbolicationprocessor.Config)
				cfg.Native.Directories = []string{dir}
				return cfg
			}, nativeChunk),
		},
	}
}
