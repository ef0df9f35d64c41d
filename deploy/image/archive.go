package image

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// WriteArchive writes img as an OCI image layout in a tar stream (what
// `podman load`, `skopeo copy oci-archive:…` and `docker load` since
// Docker 25 read), tagged ref (name:tag), and returns the manifest's
// digest. It also writes Docker's manifest.json beside the layout, as
// `docker save` does, so older Docker and podman versions load it too.
// Every entry has a fixed time and owner: the same image gives the same
// archive bytes.
func WriteArchive(w io.Writer, img v1.Image, ref string) (v1.Hash, error) {
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image: manifest digest: %w", err)
	}
	entries, err := archiveEntries(img, ref, digest)
	if err != nil {
		return v1.Hash{}, err
	}
	tw := tar.NewWriter(w)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)),
			ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if e.dir {
			hdr.Mode, hdr.Size, hdr.Typeflag = 0o755, 0, tar.TypeDir
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return v1.Hash{}, fmt.Errorf("image: archive entry %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.body); err != nil {
			return v1.Hash{}, fmt.Errorf("image: archive entry %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return v1.Hash{}, fmt.Errorf("image: closing the archive: %w", err)
	}
	return digest, nil
}

type archiveEntry struct {
	name string
	dir  bool
	body []byte
}

// archiveEntries lays out the blobs (layer, config, manifest), the OCI
// index naming the manifest, and Docker's manifest.json.
func archiveEntries(img v1.Image, ref string, digest v1.Hash) ([]archiveEntry, error) {
	manifest, err := img.RawManifest()
	if err != nil {
		return nil, fmt.Errorf("image: manifest: %w", err)
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image: config: %w", err)
	}
	configName, err := img.ConfigName()
	if err != nil {
		return nil, fmt.Errorf("image: config digest: %w", err)
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("image: layers: %w", err)
	}
	blob := func(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }
	entries := []archiveEntry{
		{name: "blobs/", dir: true},
		{name: "blobs/sha256/", dir: true},
	}
	var layerNames []string
	for _, l := range layers {
		h, err := l.Digest()
		if err != nil {
			return nil, fmt.Errorf("image: layer digest: %w", err)
		}
		body, err := readLayer(l)
		if err != nil {
			return nil, err
		}
		entries = append(entries, archiveEntry{name: blob(h), body: body})
		layerNames = append(layerNames, blob(h))
	}
	entries = append(entries,
		archiveEntry{name: blob(configName), body: config},
		archiveEntry{name: blob(digest), body: manifest})
	index, err := json.Marshal(v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: types.OCIManifestSchema1,
			Digest:    digest,
			Size:      int64(len(manifest)),
			Annotations: map[string]string{
				"org.opencontainers.image.ref.name": ref,
				"io.containerd.image.name":          ref,
			},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("image: index: %w", err)
	}
	dockerManifest, err := json.Marshal([]struct {
		Config   string
		RepoTags []string
		Layers   []string
	}{{Config: blob(configName), RepoTags: []string{ref}, Layers: layerNames}})
	if err != nil {
		return nil, fmt.Errorf("image: manifest.json: %w", err)
	}
	return append(entries,
		archiveEntry{name: "index.json", body: index},
		archiveEntry{name: "manifest.json", body: dockerManifest},
		archiveEntry{name: "oci-layout", body: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
	), nil
}

func readLayer(l v1.Layer) ([]byte, error) {
	rc, err := l.Compressed()
	if err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}
	defer rc.Close()
	body, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("image: reading the layer: %w", err)
	}
	return body, nil
}
