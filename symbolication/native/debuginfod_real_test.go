package native

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sources"
)

// TestRealDebuginfod serves a split debug file with elfutils' debuginfod
// (started on 127.0.0.1 over a directory holding only that file) and
// resolves the program's functions through the client: the frames equal
// those resolved from the same file on disk, and the file lands in the
// cache directory. Needs Debian's debuginfod package.
func TestRealDebuginfod(t *testing.T) {
	requireTools(t, "gcc", "objcopy")
	testenv.LookPath(t, "debuginfod", "debuginfod")
	dir := t.TempDir()
	prog := compile(t, dir, "gcc", "prof.c")
	served := filepath.Join(dir, "served")
	require.NoError(t, os.MkdirAll(served, 0o755))
	copyFile(t, prog.debug, filepath.Join(served, "prof.debug"))

	addr := testnet.FreeLoopbackAddr(t)
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	cmd := exec.Command("debuginfod", "-F", "-d", filepath.Join(dir, "index.sqlite"), "-p", port, "-t", "0", "-g", "0", served)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("debuginfod's log:\n%s", log.String())
		}
	})
	server := "http://" + addr
	waitServed(t, server+"/buildid/"+prog.buildID+"/debuginfo")

	cache := filepath.Join(dir, "cache")
	remote, err := NewResolver(Options{DebuginfodURLs: []string{server}, CacheDir: cache, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	require.NoError(t, err)
	defer remote.Close()
	layoutDir := filepath.Join(dir, "layout")
	layout(t, layoutDir, prog.buildID, prog.debug)
	local, err := NewResolver(Options{DebugDirs: []string{layoutDir}})
	require.NoError(t, err)
	defer local.Close()

	ctx := context.Background()
	for _, name := range []string{"work", "run", "main", "on_prof"} {
		a := symbolOf(t, prog.binary, name) + 8
		want, err := local.ResolveAddress(ctx, prog.buildID, a)
		require.NoError(t, err)
		got, err := remote.ResolveAddress(ctx, prog.buildID, a)
		require.NoError(t, err)
		require.NotEmpty(t, got)
		assert.Equal(t, want, got, name)
		assert.Equal(t, name, got[len(got)-1].Function)
	}
	assert.FileExists(t, filepath.Join(cache, prog.buildID+sources.CacheSuffix))
	_, err = remote.ResolveAddress(ctx, "00"+prog.buildID[2:], 0x1000)
	assert.ErrorIs(t, err, ErrNotFound, "debuginfod answers 404 for an unknown build id")
}

// waitServed polls until debuginfod has indexed the file (its scan runs in
// the background after start).
func waitServed(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url) //nolint:noctx // a local test server
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("debuginfod did not serve %s within 30 s", url)
}
