package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesout"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// Identity written as client_sdk when the OTLP input does not say which SDK
// produced the profiles.
const (
	toolName    = "sentryprof"
	toolVersion = "0.1.0"
)

const exportHelp = `Usage: sentryprof export [-in FILE|-] [-out FILE|-] [-platform PLATFORM]

Reads OpenTelemetry profiles and writes Sentry V2 profile chunk JSON, one
chunk per line, as the Sentry exporter would send them. The input is OTLP
protobuf (an ExportProfilesServiceRequest) or OTLP JSON, plain or gzip'd; JSON
may hold several requests, one per line, as the file exporter writes them.
Input starting with '{' is JSON.

Samples that cannot become a valid chunk are dropped and reported on standard
error with their Relay reason; the command fails only when nothing is left.

Examples:
  sentryprof export -in profiles.pb -out chunks.jsonl
  sentryprof export -in collector-out.json -platform python
  sentryprof convert -in chunk.envelope | sentryprof export
`

func runExport(args []string, e *env) error {
	var in, out, platform string
	fs := newFlagSet("export", exportHelp, e)
	fs.StringVar(&in, "in", "-", "input `file` of OTLP profiles (protobuf or JSON, optionally gzip'd); - is standard input")
	fs.StringVar(&out, "out", "-", "output `file` for the chunks, one JSON document per line; - is standard output")
	fs.StringVar(&platform, "platform", "", "Sentry `platform` for profiles whose attributes do not name one")
	if err := parseFlags(fs, args); err != nil {
		return err
	}

	prog := newProgress(e.stderr, "export")
	data, err := readInput(in, e, prog, gunzip)
	if err != nil {
		return err
	}
	requests, err := decodeOTLP(data)
	if err != nil {
		return err
	}

	opts := profilesout.ExportOptions{DefaultPlatform: platform, SDKName: toolName, SDKVersion: toolVersion}
	w := chunkWriter{stderr: e.stderr, prog: prog}
	for ri, pd := range requests {
		w.request(ri, pd, opts)
	}
	prog.done(w.chunks, w.samples)
	if err := w.nothingWritten(); err != nil {
		return err
	}
	return writeOutput(out, w.lines, e)
}

// chunkWriter writes the chunks of every request as JSON lines and
// reports the drops.
type chunkWriter struct {
	stderr                         io.Writer
	prog                           *progress
	lines                          []byte
	chunks, samples, droppedChunks int
}

// request writes one request's chunks.
func (w *chunkWriter) request(ri int, pd pprofile.Profiles, opts profilesout.ExportOptions) {
	cs, drops := profilesout.FromProfiles(pd, opts)
	for _, d := range drops {
		w.droppedChunks++
		w.reportDrop(ri, d)
	}
	for _, c := range cs {
		w.lines = sentry.AppendChunkJSON(w.lines, c.Profile)
		w.lines = append(w.lines, '\n')
		w.chunks++
		w.samples += len(c.Profile.Samples)
		w.prog.item(w.chunks-1, "chunk", len(c.Profile.Samples))
	}
}

func (w *chunkWriter) reportDrop(ri int, d profilesout.Drop) {
	fmt.Fprintf(w.stderr, "sentryprof export: request %d: dropped %d samples: %s", ri, d.Samples, d.Reason)
	if d.Err != nil {
		fmt.Fprintf(w.stderr, ": %v", d.Err)
	}
	fmt.Fprintln(w.stderr)
}

// nothingWritten fails a run that leaves no chunk, saying whether drops
// took them all.
func (w *chunkWriter) nothingWritten() error {
	switch {
	case w.chunks > 0:
		return nil
	case w.droppedChunks > 0:
		return fmt.Errorf("every profile was dropped (%d drops reported above); nothing to write", w.droppedChunks)
	}
	return errors.New("the input holds no profiles with samples; nothing to write")
}

// decodeOTLP decodes OTLP profiles: JSON when the first non-space byte is
// '{' (one or more requests back to back, as a JSON-lines file holds them),
// protobuf otherwise.
func decodeOTLP(data []byte) ([]pprofile.Profiles, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return decodeOTLPJSON(trimmed)
	}
	pd, err := (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles(data)
	if err != nil {
		return nil, fmt.Errorf("decoding OTLP protobuf (input does not start with '{', so it is not JSON): %w", err)
	}
	return []pprofile.Profiles{pd}, nil
}

// decodeOTLPJSON decodes JSON requests back to back.
func decodeOTLPJSON(data []byte) ([]pprofile.Profiles, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []pprofile.Profiles
	for i := 0; ; i++ {
		var doc json.RawMessage
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("OTLP JSON request %d at offset %d: %w", i, dec.InputOffset(), err)
		}
		pd, err := (&pprofile.JSONUnmarshaler{}).UnmarshalProfiles(doc)
		if err != nil {
			return nil, fmt.Errorf("OTLP JSON request %d: %w", i, err)
		}
		out = append(out, pd)
	}
}
