// Package image builds the distribution's container image without a
// container daemon: one layer written file by file from the static
// collector binary, its default configuration and a CA bundle, on top of
// nothing (FROM scratch), with every timestamp and owner fixed so that the
// same inputs give the same digest.
package image

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's layout. The documentation (docs/operations.md, the
// manifests under deploy/kubernetes) names these paths, ports and ids; the
// tests read them back from the built image.
const (
	BinaryPath  = "/otelcol-sentryprofile"
	ConfigPath  = "/etc/otelcol-sentryprofile/config.yaml"
	CACertsPath = "/etc/ssl/certs/ca-certificates.crt"
	// DataDir is where a file_storage extension (the forward spool, a
	// persistent exporter queue) keeps its files; owned by the runtime
	// user so that it is writable without a volume too.
	DataDir = "/var/lib/otelcol-sentryprofile"
	// UID and GID of the unprivileged user the collector runs as (the
	// "nonroot" id of distroless images, which Kubernetes policies know).
	UID = 65532
	GID = 65532
	// FeatureGates is passed by the default command: profiles pipelines
	// are refused without it.
	FeatureGates = "--feature-gates=service.profilesSupport"
)

// Ports the default configuration listens on, all TCP.
var (
	SentryPort    = 8000  // the sentryprofile receiver
	HealthPort    = 13133 // the health_check extension (readiness, liveness)
	TelemetryPort = 8888  // the collector's own metrics, Prometheus format
)

// Inputs are the files an image is built from.
type Inputs struct {
	Binary  string // the collector, statically linked
	Config  string // the default configuration
	CACerts string // a PEM bundle of CA certificates, for https upstreams
	// Created is the image's creation time; the zero value means the
	// Unix epoch, for reproducible digests.
	Created time.Time
	// Architecture is the GOARCH the binary was built for.
	Architecture string
}

// Build assembles the image. It refuses a binary that is not a static ELF
// executable: on scratch there is no dynamic loader or libc to run it.
func Build(in Inputs) (v1.Image, error) {
	if err := checkStatic(in.Binary); err != nil {
		return nil, err
	}
	if in.Architecture == "" {
		return nil, errors.New("image: the binary's architecture is not set")
	}
	layer, err := buildLayer(in)
	if err != nil {
		return nil, err
	}
	created := createdTime(in.Created)
	img, err := mutate.Append(empty.Image, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: created, CreatedBy: "deploy/cmd/ociimage", Comment: "collector, default configuration, CA certificates"},
	})
	if err != nil {
		return nil, fmt.Errorf("image: appending the layer: %w", err)
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	return withRuntimeConfig(img, created, in.Architecture)
}

// buildLayer is the image's one layer: the collector, its configuration,
// the CA certificates and the user database.
func buildLayer(in Inputs) (v1.Layer, error) {
	files, err := layerFiles(in)
	if err != nil {
		return nil, err
	}
	layerTar, err := writeTar(files)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}
	return layer, nil
}

// createdTime is the image's creation time: the one given, else the Unix
// epoch, for reproducible digests.
func createdTime(t time.Time) v1.Time {
	if t.IsZero() {
		return v1.Time{Time: time.Unix(0, 0).UTC()}
	}
	return v1.Time{Time: t.UTC()}
}

// withRuntimeConfig sets the config file: creation time, platform and
// RuntimeConfig.
func withRuntimeConfig(img v1.Image, created v1.Time, arch string) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image: config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.Created = created
	cf.OS = "linux"
	cf.Architecture = arch
	cf.Config = RuntimeConfig()
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("image: setting the config: %w", err)
	}
	return img, nil
}

// RuntimeConfig is how the image runs: as UID:GID, the collector as
// entrypoint and the default configuration with the profiles feature gate
// as its arguments (replace the arguments to use another configuration,
// and keep the gate).
func RuntimeConfig() v1.Config {
	exposed := map[string]struct{}{}
	for _, p := range []int{SentryPort, HealthPort, TelemetryPort} {
		exposed[fmt.Sprintf("%d/tcp", p)] = struct{}{}
	}
	return v1.Config{
		Entrypoint:   []string{BinaryPath},
		Cmd:          []string{"--config=" + ConfigPath, FeatureGates},
		User:         fmt.Sprintf("%d:%d", UID, GID),
		WorkingDir:   DataDir,
		ExposedPorts: exposed,
		Env:          []string{"SSL_CERT_FILE=" + CACertsPath},
		Labels: map[string]string{
			"org.opencontainers.image.title":       "otelcol-sentryprofile",
			"org.opencontainers.image.description": "OpenTelemetry Collector with the Sentry profiling receiver and exporter",
		},
		StopSignal: "SIGTERM",
	}
}

// checkStatic opens path as an ELF executable and refuses one that asks
// for a dynamic loader.
func checkStatic(binary string) error {
	f, err := elf.Open(binary)
	if err != nil {
		return fmt.Errorf("image: the collector binary %s: %w", binary, err)
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("image: %s is not an executable (ELF type %s)", binary, f.Type)
	}
	if hasInterpreter(f) {
		return fmt.Errorf("image: %s is dynamically linked (it needs a loader); build it with CGO_ENABLED=0", binary)
	}
	return nil
}

// hasInterpreter reports whether an ELF file asks for a dynamic loader.
func hasInterpreter(f *elf.File) bool {
	return slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP })
}

// ArchOf maps the ELF machine of a binary to a GOARCH.
func ArchOf(binary string) (string, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return "", fmt.Errorf("image: %s: %w", binary, err)
	}
	defer f.Close()
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	default:
		return "", fmt.Errorf("image: %s: unsupported machine %s", binary, f.Machine)
	}
}

// file is one entry of the layer.
type file struct {
	name     string // absolute path in the image
	mode     int64
	uid, gid int
	dir      bool
	body     []byte
}

// layerFiles lists the layer's entries: the three input files, the
// directories above them, the data directory and the user database.
func layerFiles(in Inputs) ([]file, error) {
	binary, err := readInput(in.Binary, "collector binary")
	if err != nil {
		return nil, err
	}
	config, err := readInput(in.Config, "default configuration")
	if err != nil {
		return nil, err
	}
	certs, err := readInput(in.CACerts, "CA certificate bundle")
	if err != nil {
		return nil, err
	}
	files := []file{
		{name: BinaryPath, mode: 0o755, body: binary},
		{name: ConfigPath, mode: 0o644, body: config},
		{name: CACertsPath, mode: 0o644, body: certs},
		{name: "/etc/passwd", mode: 0o644, body: fmt.Appendf(nil,
			"root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", UID, GID, DataDir)},
		{name: "/etc/group", mode: 0o644, body: fmt.Appendf(nil, "root:x:0:\nnonroot:x:%d:\n", GID)},
		{name: DataDir, mode: 0o750, dir: true, uid: UID, gid: GID},
		{name: "/tmp", mode: 0o1777, dir: true},
	}
	return withParents(files), nil
}

// readInput reads one input file, which must not be empty.
func readInput(p, what string) ([]byte, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("image: reading the %s: %w", what, err)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("image: the %s %s is empty", what, p)
	}
	return b, nil
}

// withParents adds the directories every entry needs, root-owned 0755,
// and sorts the entries so that a parent precedes its children.
func withParents(files []file) []file {
	have := map[string]bool{}
	for _, f := range files {
		have[f.name] = true
	}
	for _, f := range files {
		files = appendMissingParents(files, f.name, have)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files
}

// appendMissingParents adds the directories above name not in have.
func appendMissingParents(files []file, name string, have map[string]bool) []file {
	for dir := path.Dir(name); dir != "/"; dir = path.Dir(dir) {
		if !have[dir] {
			have[dir] = true
			files = append(files, file{name: dir, mode: 0o755, dir: true})
		}
	}
	return files
}

// writeTar writes the entries as a tar stream with fixed times and owners
// (by number, no names), PAX-free, so that equal inputs give equal bytes.
func writeTar(files []file) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if err := writeEntry(tw, layerHeader(f), f.body); err != nil {
			return nil, fmt.Errorf("image: layer entry %s: %w", f.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("image: closing the layer: %w", err)
	}
	return buf.Bytes(), nil
}

// layerHeader is the tar header of a layer entry: by number, no names,
// the epoch as time.
func layerHeader(f file) *tar.Header {
	hdr := &tar.Header{
		Name:     f.name[1:],
		Mode:     f.mode,
		Uid:      f.uid,
		Gid:      f.gid,
		ModTime:  time.Unix(0, 0),
		Format:   tar.FormatUSTAR,
		Typeflag: tar.TypeReg,
		Size:     int64(len(f.body)),
	}
	if f.dir {
		hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		hdr.Name += "/"
	}
	return hdr
}

// writeEntry writes one tar entry.
func writeEntry(tw *tar.Writer, hdr *tar.Header, body []byte) error {
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err := tw.Write(body)
	return err
}
