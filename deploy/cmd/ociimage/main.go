// Command ociimage writes the distribution's container image, built FROM
// scratch without a container daemon, to an OCI archive and prints its
// digest. `make image` runs it:
//
//	ociimage -binary bin/image/otelcol-sentryprofile \
//	    -config deploy/image/config.yaml \
//	    -cacerts /etc/ssl/certs/ca-certificates.crt \
//	    -ref otelcol-sentryprofile:0.1.0 -out bin/otelcol-sentryprofile-oci.tar
//
// The image's creation time is SOURCE_DATE_EPOCH when set, else the Unix
// epoch: the same inputs give the same digest.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/deploy/image"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("ociimage", flag.ContinueOnError)
	binary := fs.String("binary", "", "the statically linked collector")
	config := fs.String("config", "", "the image's default configuration")
	cacerts := fs.String("cacerts", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle of CA certificates")
	ref := fs.String("ref", "otelcol-sentryprofile:latest", "name:tag recorded in the archive")
	out := fs.String("out", "", "the OCI archive (tar) to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *binary == "" || *config == "" || *out == "" {
		return errors.New("-binary, -config and -out are required")
	}
	created, err := sourceDateEpoch()
	if err != nil {
		return err
	}
	arch, err := image.ArchOf(*binary)
	if err != nil {
		return err
	}
	img, err := image.Build(image.Inputs{Binary: *binary, Config: *config, CACerts: *cacerts,
		Created: created, Architecture: arch})
	if err != nil {
		return err
	}
	return writeAtomically(*out, func(f *os.File) error {
		digest, err := image.WriteArchive(f, img, *ref)
		if err != nil {
			return err
		}
		fmt.Printf("%s %s %s\n", *ref, digest, *out)
		return nil
	})
}

// sourceDateEpoch reads SOURCE_DATE_EPOCH (seconds), the convention of
// reproducible builds; unset, the zero time (the Unix epoch in the image).
func sourceDateEpoch() (time.Time, error) {
	v := os.Getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return time.Time{}, nil
	}
	sec, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", v, err)
	}
	return time.Unix(sec, 0), nil
}

// writeAtomically writes path through a temporary file in the same
// directory, so that a failed build never leaves a truncated archive.
func writeAtomically(path string, write func(*os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ociimage-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
