package image

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuiltImage inspects the archive `make image` wrote (IMAGE_ARCHIVE,
// its digest in IMAGE_DIGEST): the runtime configuration and the layer's
// files, the binary static, the default configuration byte for byte the
// one in this directory and accepted by the binary it ships with. Where
// podman is installed (or IMAGE_RUN=1 requires it), it also runs the image
// and waits for the health check.
func TestBuiltImage(t *testing.T) {
	archivePath := os.Getenv("IMAGE_ARCHIVE")
	if archivePath == "" {
		t.Skip("IMAGE_ARCHIVE is not set: `make image-test` builds the image and runs this test")
	}
	archive, err := os.ReadFile(archivePath)
	require.NoError(t, err)
	digest, err := v1.NewHash(os.Getenv("IMAGE_DIGEST"))
	require.NoError(t, err, "IMAGE_DIGEST must hold the digest make image printed")
	img := loadArchive(t, archive, digest)

	cf, err := img.ConfigFile()
	require.NoError(t, err)
	checkRuntimeConfig(t, cf)
	files := layerContents(t, img)
	checkLayout(t, files)

	wantConfig, err := os.ReadFile("config.yaml")
	require.NoError(t, err)
	assert.Equal(t, string(wantConfig), string(files["etc/otelcol-sentryprofile/config.yaml"].body))

	dir := t.TempDir()
	binary := filepath.Join(dir, "otelcol-sentryprofile")
	config := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(binary, files["otelcol-sentryprofile"].body, 0o755))
	require.NoError(t, os.WriteFile(config, wantConfig, 0o644))
	assertStatic(t, binary)
	out, err := exec.Command(binary, "validate", "--config="+config, FeatureGates).CombinedOutput()
	require.NoError(t, err, "the image's binary validates its default configuration:\n%s", out)

	t.Run("podman", func(t *testing.T) { runWithPodman(t, archivePath, digest) })
}

func assertStatic(t *testing.T, binary string) {
	t.Helper()
	f, err := elf.Open(binary)
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "the binary asks for a dynamic loader")
	}
	libs, err := f.ImportedLibraries()
	require.NoError(t, err)
	assert.Empty(t, libs, "shared libraries the binary needs")
}

// runWithPodman loads the archive into podman and reads the image back
// from podman's store; then starts it with its default command (ports
// published on loopback only) and waits for the health check to answer
// 200 and the receiver to accept an envelope. A sandbox that lets podman
// load but not run containers (no setrlimit, no namespaces) skips the run
// unless IMAGE_RUN=1 requires it.
func runWithPodman(t *testing.T, archivePath string, digest v1.Hash) {
	podman, err := exec.LookPath("podman")
	if err != nil {
		if os.Getenv("IMAGE_RUN") == "1" {
			t.Fatal("IMAGE_RUN=1 but podman is not installed")
		}
		t.Skip("podman is not installed: the image was inspected, not run")
	}
	podmanRun := func(args ...string) (string, error) {
		out, err := exec.Command(podman, args...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	must := func(args ...string) string {
		out, err := podmanRun(args...)
		require.NoError(t, err, "podman %s:\n%s", strings.Join(args, " "), out)
		return out
	}
	t.Logf("podman load: %s", must("load", "--quiet", "--input", archivePath))
	ref := "otelcol-sentryprofile@" + digest.String()
	assert.Equal(t, `65532:65532 ["/otelcol-sentryprofile"] ["--config=/etc/otelcol-sentryprofile/config.yaml","--feature-gates=service.profilesSupport"]`,
		must("image", "inspect", "--format", "{{.Config.User}} {{json .Config.Entrypoint}} {{json .Config.Cmd}}", ref),
		"the image as podman's store reads it")

	sentry, health := freePort(t), freePort(t)
	name := fmt.Sprintf("otelcol-sentryprofile-test-%d", os.Getpid())
	out, err := podmanRun("run", "--detach", "--rm", "--name", name,
		"--publish", fmt.Sprintf("127.0.0.1:%d:8000", sentry),
		"--publish", fmt.Sprintf("127.0.0.1:%d:13133", health), ref)
	if err != nil && os.Getenv("IMAGE_RUN") != "1" && strings.Contains(out, "Operation not permitted") {
		t.Skipf("podman loaded the image but cannot run containers here: %s", out)
	}
	require.NoError(t, err, "podman run:\n%s", out)
	t.Cleanup(func() { _ = exec.Command(podman, "rm", "--force", "--time=10", name).Run() })

	require.Eventually(t, func() bool {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", health))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 200*time.Millisecond, "the health check of the running image")
	assert.Contains(t, must("top", name, "user"), "nonroot", "the collector's process runs as the image's user")

	envelope := `{}` + "\n" + `{"type":"event"}` + "\n" + `{}` + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		fmt.Sprintf("http://127.0.0.1:%d/api/1/envelope/?sentry_key=k", sentry), bytes.NewBufferString(envelope))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the receiver in the container answers an envelope")
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
