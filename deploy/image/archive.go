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
	if err := writeArchiveEntries(w, entries); err != nil {
		return v1.Hash{}, err
	}
	return digest, nil
}

// writeArchiveEntries writes the entries with a fixed time and owner.
func writeArchiveEntries(w io.Writer, entries []archiveEntry) error {
	tw := tar.NewWriter(w)
	for _, e := range entries {
		if err := writeEntry(tw, e.header(), e.body); err != nil {
			return fmt.Errorf("image: archive entry %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("image: closing the archive: %w", err)
	}
	return nil
}

func (e archiveEntry) header() *tar.Header {
	hdr := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)),
		ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
	if e.dir {
		hdr.Mode, hdr.Size, hdr.Typeflag = 0o755, 0, tar.TypeDir
	}
	return hdr
}

type archiveEntry struct {
	name string
	dir  bool
	body []byte
}

// archiveEntries lays out the blobs (layer, config, manifest), the OCI
// index naming the manifest, and Docker's manifest.json.
func archiveEntries(img v1.Image, ref string, digest v1.Hash) ([]archiveEntry, error) {
	parts, err := readImageParts(img)
	if err != nil {
		return nil, err
	}
	entries := []archiveEntry{
		{name: "blobs/", dir: true},
		{name: "blobs/sha256/", dir: true},
	}
	layerEntries, layerNames, err := layerBlobs(parts.layers)
	if err != nil {
		return nil, err
	}
	entries = append(entries, layerEntries...)
	entries = append(entries,
		archiveEntry{name: blobPath(parts.configName), body: parts.config},
		archiveEntry{name: blobPath(digest), body: parts.manifest})
	index, err := indexJSON(digest, len(parts.manifest), ref)
	if err != nil {
		return nil, err
	}
	dockerManifest, err := dockerManifestJSON(blobPath(parts.configName), ref, layerNames)
	if err != nil {
		return nil, err
	}
	return append(entries,
		archiveEntry{name: "index.json", body: index},
		archiveEntry{name: "manifest.json", body: dockerManifest},
		archiveEntry{name: "oci-layout", body: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
	), nil
}

// blobPath is where the OCI layout keeps a blob.
func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

// imageParts are the raw pieces of an image the archive holds.
type imageParts struct {
	manifest, config []byte
	configName       v1.Hash
	layers           []v1.Layer
}

func readImageParts(img v1.Image) (imageParts, error) {
	var p imageParts
	var err error
	if p.manifest, err = img.RawManifest(); err != nil {
		return p, fmt.Errorf("image: manifest: %w", err)
	}
	if p.config, err = img.RawConfigFile(); err != nil {
		return p, fmt.Errorf("image: config: %w", err)
	}
	if p.configName, err = img.ConfigName(); err != nil {
		return p, fmt.Errorf("image: config digest: %w", err)
	}
	if p.layers, err = img.Layers(); err != nil {
		return p, fmt.Errorf("image: layers: %w", err)
	}
	return p, nil
}

// layerBlobs are the layers as blob entries, and their paths.
func layerBlobs(layers []v1.Layer) ([]archiveEntry, []string, error) {
	var entries []archiveEntry
	var names []string
	for _, l := range layers {
		h, err := l.Digest()
		if err != nil {
			return nil, nil, fmt.Errorf("image: layer digest: %w", err)
		}
		body, err := readLayer(l)
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, archiveEntry{name: blobPath(h), body: body})
		names = append(names, blobPath(h))
	}
	return entries, names, nil
}

// indexJSON is the OCI index naming the manifest under ref.
func indexJSON(digest v1.Hash, manifestSize int, ref string) ([]byte, error) {
	index, err := json.Marshal(v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: types.OCIManifestSchema1,
			Digest:    digest,
			Size:      int64(manifestSize),
			Annotations: map[string]string{
				"org.opencontainers.image.ref.name": ref,
				"io.containerd.image.name":          ref,
			},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("image: index: %w", err)
	}
	return index, nil
}

// dockerManifestJSON is Docker's manifest.json, as `docker save` writes it.
func dockerManifestJSON(config, ref string, layers []string) ([]byte, error) {
	dockerManifest, err := json.Marshal([]struct {
		Config   string
		RepoTags []string
		Layers   []string
	}{{Config: config, RepoTags: []string{ref}, Layers: layers}})
	if err != nil {
		return nil, fmt.Errorf("image: manifest.json: %w", err)
	}
	return dockerManifest, nil
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
