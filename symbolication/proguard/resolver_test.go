package proguard

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
)

const testUUID = "0b5ba1d2-1111-4c4e-9a55-5f2a4b8f0e11"

// TestResolverFindsMappings: a mapping is found by the UUID it is named
// by (<uuid>.txt, <uuid>/mapping.txt) or by its content UUID, and a frame
// is remapped with it; what is not found or not readable fails with the
// failure the cache remembers it as.
func TestResolverFindsMappings(t *testing.T) {
	frame := symbolication.Frame{Module: "a.a", Function: "a", Line: 2}
	contentUUID := UUIDOf([]byte(shopMapping))
	tests := []struct {
		name        string
		files       map[string]string // path in the directory → content
		uuid        string
		wantFailure symbolication.Failure
	}{
		{name: "named <uuid>.txt", files: map[string]string{testUUID + ".txt": shopMapping}, uuid: testUUID},
		{name: "named <uuid>/mapping.txt, upper-case uuid asked", files: map[string]string{testUUID + "/mapping.txt": shopMapping}, uuid: "0B5BA1D2-1111-4C4E-9A55-5F2A4B8F0E11"},
		{name: "by content uuid", files: map[string]string{"release/mapping.txt": shopMapping}, uuid: contentUUID},
		{name: "no such uuid", files: map[string]string{testUUID + ".txt": shopMapping}, uuid: "00000000-0000-4000-8000-000000000000", wantFailure: symbolication.FailureNotFound},
		{name: "no uuid", files: map[string]string{testUUID + ".txt": shopMapping}, wantFailure: symbolication.FailureNotFound},
		{name: "not a mapping", files: map[string]string{testUUID + ".txt": "\x00\x01 binary"}, uuid: testUUID, wantFailure: symbolication.FailureMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				p := filepath.Join(dir, name)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
			}
			r, err := NewResolver(Options{Dirs: []string{dir}, MaxCacheBytes: 1 << 20, MaxArtifactBytes: 1 << 20, RescanInterval: time.Hour})
			require.NoError(t, err)
			defer r.Close()
			frames, err := r.Resolve(context.Background(), symbolication.Lookup{Frame: frame, DebugID: tt.uuid})
			if tt.wantFailure != symbolication.FailureNone {
				require.Error(t, err)
				assert.Equal(t, tt.wantFailure, symbolication.FailureOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []symbolication.Frame{{Function: "total", Module: "com.example.shop.Cart", File: "Cart.kt", Line: 13}}, frames)
		})
	}
}

// TestResolverFindsAMappingDeployedLater: a UUID no scan saw makes the
// directories be scanned again after the rescan interval.
func TestResolverFindsAMappingDeployedLater(t *testing.T) {
	dir := t.TempDir()
	r, err := NewResolver(Options{Dirs: []string{dir}, MaxCacheBytes: 1 << 20, MaxArtifactBytes: 1 << 20, RescanInterval: 30 * time.Millisecond})
	require.NoError(t, err)
	defer r.Close()
	in := symbolication.Lookup{Frame: symbolication.Frame{Module: "a.a", Function: "a", Line: 2}, DebugID: testUUID}
	_, err = r.Resolve(context.Background(), in)
	require.ErrorIs(t, err, symbolication.ErrNoArtifact)

	require.NoError(t, os.WriteFile(filepath.Join(dir, testUUID+".txt"), []byte(shopMapping), 0o644))
	require.Eventually(t, func() bool {
		frames, err := r.Resolve(context.Background(), in)
		return err == nil && len(frames) == 1 && frames[0].Function == "total"
	}, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, int64(1), r.CacheStats().Misses, "the mapping was parsed once")
}
