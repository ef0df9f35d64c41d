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

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/sentryprofile/otelcol-sentryprofile/deploy/image"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	binary, config, cacerts, ref, out string
}

func run(args []string) error {
	o, err := parseOptions(args)
	if err != nil {
		return err
	}
	img, err := buildImage(o)
	if err != nil {
		return err
	}
	return writeAtomically(o.out, func(f *os.File) error {
		digest, err := image.WriteArchive(f, img, o.ref)
		if err != nil {
			return err
		}
		fmt.Printf("%s %s %s\n", o.ref, digest, o.out)
		return nil
	})
}

func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("ociimage", flag.ContinueOnError)
	fs.StringVar(&o.binary, "binary", "", "the statically linked collector")
	fs.StringVar(&o.config, "config", "", "the image's default configuration")
	fs.StringVar(&o.cacerts, "cacerts", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle of CA certificates")
	fs.StringVar(&o.ref, "ref", "otelcol-sentryprofile:latest", "name:tag recorded in the archive")
	fs.StringVar(&o.out, "out", "", "the OCI archive (tar) to write")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.binary == "" || o.config == "" || o.out == "" {
		return o, errors.New("-binary, -config and -out are required")
	}
	return o, nil
}

// buildImage builds the image of the binary's architecture, created at
// SOURCE_DATE_EPOCH.
func buildImage(o options) (v1.Image, error) {
	created, err := sourceDateEpoch()
	if err != nil {
		return nil, err
	}
	arch, err := image.ArchOf(o.binary)
	if err != nil {
		return nil, err
	}
	return image.Build(image.Inputs{Binary: o.binary, Config: o.config, CACerts: o.cacerts,
		Created: created, Architecture: arch})
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
	if err := writeAndClose(tmp, write); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// writeAndClose writes f and closes it, reporting the first failure.
func writeAndClose(f *os.File, write func(*os.File) error) error {
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
