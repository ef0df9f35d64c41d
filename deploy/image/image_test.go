package image

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// standInBinary builds a tiny static Go program to stand in for the
// collector: the builder's checks and layout do not depend on what the
// binary does. (TestBuiltImage checks the real one.)
func standInBinary(t *testing.T, cgo bool) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	body := "package main\n\nfunc main() { println(\"stand-in\") }\n"
	if cgo {
		body = "package main\n\n// int answer(void) { return 42; }\nimport \"C\"\n\nfunc main() { println(C.answer()) }\n"
	}
	require.NoError(t, os.WriteFile(src, []byte(body), 0o644))
	out := filepath.Join(dir, "collector")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GO111MODULE=off", "GOFLAGS=")
	if cgo {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=1")
	} else {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		if cgo {
			t.Skipf("no C toolchain for a dynamically linked stand-in: %v\n%s", err, msg)
		}
		t.Fatalf("building the stand-in: %v\n%s", err, msg)
	}
	return out
}

// testInputs writes a configuration and a CA bundle beside the binary.
func testInputs(t *testing.T, binary string) Inputs {
	t.Helper()
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	certs := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(config, []byte("receivers: {}\n"), 0o600))
	require.NoError(t, os.WriteFile(certs, []byte("-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n"), 0o600))
	return Inputs{Binary: binary, Config: config, CACerts: certs, Architecture: runtime.GOARCH}
}

// archiveOf builds the image and writes it as an archive, returning the
// archive's bytes and the manifest digest.
func archiveOf(t *testing.T, in Inputs) ([]byte, v1.Hash) {
	t.Helper()
	img, err := Build(in)
	require.NoError(t, err)
	var buf bytes.Buffer
	digest, err := WriteArchive(&buf, img, "otelcol-sentryprofile:test")
	require.NoError(t, err)
	return buf.Bytes(), digest
}

func TestBuildIsReproducible(t *testing.T) {
	in := testInputs(t, standInBinary(t, false))
	first, d1 := archiveOf(t, in)
	second, d2 := archiveOf(t, in)
	assert.Equal(t, d1, d2, "digest of two builds of the same inputs")
	assert.Equal(t, first, second, "archive bytes of two builds of the same inputs")

	later := in
	later.Created = time.Unix(1_700_000_000, 0)
	_, d3 := archiveOf(t, later)
	assert.NotEqual(t, d1, d3, "a different creation time must change the digest")

	changed := in
	require.NoError(t, os.WriteFile(changed.Config, []byte("receivers: {x: 1}\n"), 0o600))
	_, d4 := archiveOf(t, changed)
	assert.NotEqual(t, d1, d4, "a different configuration must change the digest")
}

func TestBuildRefuses(t *testing.T) {
	static := standInBinary(t, false)
	notELF := filepath.Join(t.TempDir(), "script")
	require.NoError(t, os.WriteFile(notELF, []byte("#!/bin/sh\necho hi\n"), 0o755))
	cases := []struct {
		name string
		edit func(*testing.T, *Inputs)
		want string
	}{
		{"missing binary", func(t *testing.T, in *Inputs) { in.Binary = filepath.Join(t.TempDir(), "absent") }, "collector binary"},
		{"not an ELF binary", func(_ *testing.T, in *Inputs) { in.Binary = notELF }, "collector binary"},
		{"dynamically linked", func(t *testing.T, in *Inputs) { in.Binary = standInBinary(t, true) }, "dynamically linked"},
		{"missing config", func(t *testing.T, in *Inputs) { in.Config = filepath.Join(t.TempDir(), "absent.yaml") }, "default configuration"},
		{"empty CA bundle", func(t *testing.T, in *Inputs) {
			in.CACerts = filepath.Join(t.TempDir(), "empty.pem")
			require.NoError(t, os.WriteFile(in.CACerts, nil, 0o600))
		}, "CA certificate bundle"},
		{"no architecture", func(_ *testing.T, in *Inputs) { in.Architecture = "" }, "architecture"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := testInputs(t, static)
			tc.edit(t, &in)
			_, err := Build(in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestArchiveLoadsAsOCILayout(t *testing.T) {
	binary := standInBinary(t, false)
	in := testInputs(t, binary)
	archive, digest := archiveOf(t, in)
	img := loadArchive(t, archive, digest)

	cf, err := img.ConfigFile()
	require.NoError(t, err)
	checkRuntimeConfig(t, cf)
	assert.Equal(t, runtime.GOARCH, cf.Architecture)
	assert.Equal(t, time.Unix(0, 0).UTC(), cf.Created.UTC())

	files := layerContents(t, img)
	want, err := os.ReadFile(binary)
	require.NoError(t, err)
	assert.Equal(t, want, files[BinaryPath[1:]].body, "the binary, byte for byte")
	checkLayout(t, files)
}

// loadArchive unpacks an archive and reads it back with
// go-containerregistry's OCI layout reader (not this package's writer),
// validating every blob against its digest.
func loadArchive(t *testing.T, archive []byte, digest v1.Hash) v1.Image {
	t.Helper()
	dir := t.TempDir()
	tr := tar.NewReader(bytes.NewReader(archive))
	names := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		names[hdr.Name] = true
		assert.Equal(t, time.Unix(0, 0), hdr.ModTime, "archive entry %s time", hdr.Name)
		target := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if hdr.Typeflag == tar.TypeDir {
			require.NoError(t, os.MkdirAll(target, 0o755))
			continue
		}
		body, err := io.ReadAll(tr)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
		require.NoError(t, os.WriteFile(target, body, 0o644))
	}
	for _, n := range []string{"oci-layout", "index.json", "manifest.json"} {
		assert.True(t, names[n], "archive has %s", n)
	}
	idx, err := layout.ImageIndexFromPath(dir)
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 1)
	assert.Equal(t, digest, im.Manifests[0].Digest)
	assert.Equal(t, types.OCIManifestSchema1, im.Manifests[0].MediaType)
	img, err := idx.Image(digest)
	require.NoError(t, err)
	require.NoError(t, validate.Image(img), "every blob matches its digest and size")
	return img
}

// checkRuntimeConfig asserts what docs/operations.md and the manifests
// rely on: entrypoint, arguments, user, ports.
func checkRuntimeConfig(t *testing.T, cf *v1.ConfigFile) {
	t.Helper()
	assert.Equal(t, "linux", cf.OS)
	assert.Equal(t, []string{"/otelcol-sentryprofile"}, cf.Config.Entrypoint)
	assert.Equal(t, []string{"--config=/etc/otelcol-sentryprofile/config.yaml", "--feature-gates=service.profilesSupport"}, cf.Config.Cmd)
	assert.Equal(t, "65532:65532", cf.Config.User)
	assert.Equal(t, map[string]struct{}{"8000/tcp": {}, "13133/tcp": {}, "8888/tcp": {}}, cf.Config.ExposedPorts)
	assert.Contains(t, cf.Config.Env, "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt")
	assert.Equal(t, "/var/lib/otelcol-sentryprofile", cf.Config.WorkingDir)
}

type layerFile struct {
	hdr  *tar.Header
	body []byte
}

// layerContents reads every entry of the image's single layer.
func layerContents(t *testing.T, img v1.Image) map[string]layerFile {
	t.Helper()
	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 1, "one layer on top of nothing")
	mt, err := layers[0].MediaType()
	require.NoError(t, err)
	assert.Equal(t, types.OCILayer, mt)
	rc, err := layers[0].Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	files := map[string]layerFile{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		body, err := io.ReadAll(tr)
		require.NoError(t, err)
		files[strings.TrimSuffix(hdr.Name, "/")] = layerFile{hdr: hdr, body: body}
	}
	return files
}

// checkLayout asserts the layer's files, their modes and owners.
func checkLayout(t *testing.T, files map[string]layerFile) {
	t.Helper()
	want := []struct {
		name     string
		mode     int64
		uid, gid int
		dir      bool
	}{
		{"otelcol-sentryprofile", 0o755, 0, 0, false},
		{"etc/otelcol-sentryprofile/config.yaml", 0o644, 0, 0, false},
		{"etc/ssl/certs/ca-certificates.crt", 0o644, 0, 0, false},
		{"etc/passwd", 0o644, 0, 0, false},
		{"etc/group", 0o644, 0, 0, false},
		{"var/lib/otelcol-sentryprofile", 0o750, 65532, 65532, true},
		{"tmp", 0o1777, 0, 0, true},
		{"etc", 0o755, 0, 0, true},
	}
	for _, w := range want {
		f, ok := files[w.name]
		if !assert.True(t, ok, "layer has /%s", w.name) {
			continue
		}
		assert.Equal(t, w.mode, f.hdr.Mode, "/%s mode", w.name)
		assert.Equal(t, w.uid, f.hdr.Uid, "/%s owner", w.name)
		assert.Equal(t, w.gid, f.hdr.Gid, "/%s group", w.name)
		assert.Equal(t, w.dir, f.hdr.Typeflag == tar.TypeDir, "/%s is a directory", w.name)
		assert.Equal(t, time.Unix(0, 0), f.hdr.ModTime, "/%s time", w.name)
	}
	assert.Contains(t, string(files["etc/passwd"].body), "nonroot:x:65532:65532:")
	assert.NotContains(t, files, "bin/sh", "no shell on scratch")
}
