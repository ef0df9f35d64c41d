package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/android"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/itemrules"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"

	"github.com/google/pprof/profile"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/pprofconv"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/art"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

// Output formats of convert.
const (
	formatOTLPProto = "otlp-proto"
	formatOTLPJSON  = "otlp-json"
	formatPprof     = "pprof"
)

const convertHelp = `Usage: sentryprof convert [-in FILE|-] [-out FILE|-] [-format FORMAT]
                          [-project ID] [-service NAME] [-split]
                          [-validation lenient|relay]

Reads a Sentry envelope, a bare V1/V2 profile JSON document or an Android
ART method trace file (.trace, as Debug.startMethodTracing writes it or
Android Studio saves it), plain or compressed as Sentry SDKs send requests
(gzip, zstd, zlib/deflate or brotli, told apart by their bytes), and writes
OpenTelemetry profiles or pprof. Every profile and profile_chunk item is
read by the receiver's rules: decoded, normalized and validated; a V1
profile is linked to the trace of the transaction item it names (else the
envelope's first transaction) and, without a timestamp of its own, starts
at the envelope's sent_at. As in Relay an envelope holds one V1 profile: a
second is invalid. Any invalid profile item fails the whole conversion and
names the item and the reason.

A bare ART trace carries none of a Sentry payload's metadata (release,
device, transaction): its samples and threads are converted, placed in time
so that the trace ends when the conversion runs (the trace's own clock
starts at the device's boot).

-validation lenient (the default, as in the receiver) refuses an item only
when its samples cannot be read and prints a warning for each Relay rule it
breaks besides; -validation relay refuses what Sentry's Relay refuses.

The format defaults from -out: .pb.gz or .pprof is pprof, .json is otlp-json,
anything else (and standard output) is otlp-proto.

pprof output merges all profiles of the input into one file per sample type
(FILE; an Android trace's CPU view goes to FILE.cpu), which is what
'go tool pprof' shows for several files anyway; -split writes one file per
profile instead: FILE, FILE.1, FILE.2, ...

Examples:
  sentryprof convert -in chunk.envelope -out chunk.pb.gz
  go tool pprof -top chunk.pb.gz
  sentryprof convert -in request.gz -format otlp-json -service checkout > profiles.json
  sentryprof convert -in profile.json -out profile.pb.gz -split
`

type convertOptions struct {
	in, out, format  string
	project, service string
	split            bool
	validation       string
}

func runConvert(args []string, e *env) error {
	var o convertOptions
	fs := newFlagSet("convert", convertHelp, e)
	fs.StringVar(&o.in, "in", "-", "input `file`: an envelope, a profile JSON document or an ART trace, optionally compressed; - is standard input")
	fs.StringVar(&o.out, "out", "-", "output `file`; - is standard output")
	fs.StringVar(&o.format, "format", "", "output `format`: otlp-proto, otlp-json or pprof (default: from the -out extension)")
	fs.StringVar(&o.project, "project", "", "Sentry project `id` recorded on the resource")
	fs.StringVar(&o.service, "service", "", "service.name of the resource (`name`)")
	fs.BoolVar(&o.split, "split", false, "pprof only: write one file per profile (FILE, FILE.1, ...) instead of merging")
	fs.StringVar(&o.validation, "validation", "lenient", "`rules` that refuse a profile: lenient (only unreadable samples) or relay (what Sentry refuses)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	mode, err := o.check()
	if err != nil {
		return err
	}

	prog := newProgress(e.stderr, "convert")
	data, err := readInput(o.in, e, prog, decompress)
	if err != nil {
		return err
	}
	b := profilesin.NewProfilesBuilder(profilesin.ReceiveOptions{ServiceName: o.service, ProjectID: o.project})
	items, samples, err := decodeSentry(data, itemrules.ItemDecoder{Mode: mode, MaxSize: itemrules.MaxProfileItemBytes}, b, e.stderr, prog)
	if err != nil {
		return err
	}
	prog.done(items, samples)
	return writeProfiles(b.Profiles(), o, e)
}

// check fills in the format from -out and checks the flags together; the
// validation mode they name.
func (o *convertOptions) check() (sentry.Mode, error) {
	if o.format == "" {
		o.format = formatFromPath(o.out)
	}
	switch o.format {
	case formatOTLPProto, formatOTLPJSON, formatPprof:
	default:
		return 0, usageErrorf("unknown -format %q (want otlp-proto, otlp-json or pprof)", o.format)
	}
	mode, err := validationMode(o.validation)
	if err != nil {
		return 0, err
	}
	if o.split && (o.format != formatPprof || isStdio(o.out)) {
		return 0, usageErrorf("-split needs -format pprof and an -out file")
	}
	return mode, nil
}

// validationMode is the sentry.Mode of -validation.
func validationMode(validation string) (sentry.Mode, error) {
	switch validation {
	case "lenient":
		return sentry.ModeLenient, nil
	case "relay":
		return sentry.ModeRelay, nil
	}
	return 0, usageErrorf("unknown -validation %q (want lenient or relay)", validation)
}

// formatFromPath picks the output format from the output file's extension.
func formatFromPath(path string) string {
	switch {
	case strings.HasSuffix(path, ".pb.gz"), strings.HasSuffix(path, ".pprof"):
		return formatPprof
	case strings.HasSuffix(path, ".json"):
		return formatOTLPJSON
	default:
		return formatOTLPProto
	}
}

// decodeSentry adds the input's profiles to b: every profile item of an
// envelope, read by the receiver's rules (itemrules.ItemDecoder.ProfileItems),
// or the one profile of a bare JSON document. It returns how many items and
// samples were added. Any refused profile item fails the conversion; warnings
// (Relay rules a kept item breaks, a transaction that cannot be read) go to
// warn.
func decodeSentry(data []byte, dec itemrules.ItemDecoder, b *profilesin.ProfilesBuilder, warn io.Writer, prog *progress) (int, int, error) {
	switch {
	case isARTTrace(data):
		return decodeARTTrace(data, b, warn, prog)
	case !isEnvelope(data):
		return decodeProfileDocument(data, dec, b, warn, prog)
	}
	return decodeEnvelope(data, dec, b, warn, prog)
}

// decodeARTTrace reads a trace file as Debug.startMethodTracing or Android
// Studio saves it: the samples without a Sentry payload's metadata.
func decodeARTTrace(data []byte, b *profilesin.ProfilesBuilder, warn io.Writer, prog *progress) (int, int, error) {
	p, warnings, err := android.DecodeARTTrace(data, time.Now(), art.DefaultLimits())
	if err != nil {
		return 0, 0, err
	}
	printWarnings(warn, warnings)
	prog.item(0, "ART method trace", len(p.Samples))
	return 1, b.Add(profilesin.DecodedProfile{Profile: p}), nil
}

// decodeProfileDocument reads a bare profile JSON document as a profile
// item.
func decodeProfileDocument(data []byte, dec itemrules.ItemDecoder, b *profilesin.ProfilesBuilder, warn io.Writer, prog *progress) (int, int, error) {
	item := envelope.Item{Header: envelope.ItemHeader{Type: itemrules.ItemTypeProfile, Length: -1}, Payload: data, Size: int64(len(data))}
	p, warnings, serr := dec.Decode(&item, time.Now())
	if serr != nil {
		return 0, 0, serr
	}
	printWarnings(warn, warnings)
	prog.item(0, "profile document", len(p.Samples))
	return 1, b.Add(profilesin.DecodedProfile{Profile: p, Payload: data}), nil
}

// decodeEnvelope reads every profile item of an envelope.
func decodeEnvelope(data []byte, dec itemrules.ItemDecoder, b *profilesin.ProfilesBuilder, warn io.Writer, prog *progress) (int, int, error) {
	header, items, err := envelope.Parse(data, envelope.Limits{MaxItemBytes: itemrules.MaxProfileItemBytes})
	if err != nil {
		// The envelope's errors already say which item and offset.
		return 0, 0, err
	}
	c := itemCollector{b: b, items: items, warn: warn, prog: prog}
	outcomes := dec.ProfileItems(itemrules.EnvelopeItems{Items: items, SentAt: header.SentAt, Arrival: time.Now(),
		TraceItems: sentrytrace.AppendItems(nil, items)})
	for o := range outcomes {
		c.collect(o)
	}
	return c.result()
}

// itemCollector adds an envelope's accepted profile items to b and keeps
// the refused ones for the error.
type itemCollector struct {
	b              *profilesin.ProfilesBuilder
	items          []envelope.Item
	warn           io.Writer
	prog           *progress
	added, samples int
	problems       []error
}

func (c *itemCollector) collect(o itemrules.ItemOutcome) {
	switch o.Kind {
	case itemrules.TransactionUnreadable:
		fmt.Fprintf(c.warn, "sentryprof convert: warning: transaction ignored, its profile has no trace link: %v\n", o.Err)
	case itemrules.ItemRefused:
		c.problems = append(c.problems, o.Err)
	case itemrules.ItemAccepted:
		printWarnings(c.warn, o.Warnings)
		c.prog.item(o.Index, c.items[o.Index].Header.Type, len(o.Decoded.Profile.Samples))
		// The profile lives in the decoder's memory until the next item is
		// decoded: it goes into the builder now.
		c.samples += c.b.Add(o.Decoded)
		c.added++
	}
}

// result fails on any refused item, and on an envelope without profiles.
func (c *itemCollector) result() (int, int, error) {
	switch len(c.problems) {
	case 0:
	case 1:
		return 0, 0, c.problems[0]
	default:
		return 0, 0, invalidItems(c.problems)
	}
	if c.added == 0 {
		return 0, 0, fmt.Errorf("envelope has no profile or profile_chunk item%s", describeItems(countByType(c.items)))
	}
	return c.added, c.samples, nil
}

// countByType counts an envelope's items by type, for the error.
func countByType(items []envelope.Item) map[string]int {
	counts := map[string]int{}
	for i := range items {
		counts[items[i].Header.Type]++
	}
	return counts
}

// printWarnings prints what is wrong with an accepted item: the Relay rules
// it breaks, or what of an ART trace was read leniently (which Relay
// accepts as it is).
func printWarnings(warn io.Writer, warnings []*sentry.Error) {
	for _, w := range warnings {
		if w.Reason == sentry.ReasonInvalidSampledProfile {
			fmt.Fprintf(warn, "sentryprof convert: warning: accepted: %v\n", w)
			continue
		}
		fmt.Fprintf(warn, "sentryprof convert: warning: accepted, but Relay would refuse it: %v\n", w)
	}
}

// isARTTrace reports whether data starts as an ART method trace file: the
// regular form with its text header, or the streaming form with "SLOW".
func isARTTrace(data []byte) bool {
	return bytes.HasPrefix(data, []byte("*version\n")) || bytes.HasPrefix(data, []byte("SLOW"))
}

// invalidItems reports every invalid profile item of an envelope, one per
// line, so that a capture with several bad items is fixed in one pass.
type invalidItems []error

func (e invalidItems) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d profile items are invalid:", len(e))
	for _, err := range e {
		b.WriteString("\n  ")
		b.WriteString(err.Error())
	}
	return b.String()
}

func (e invalidItems) Unwrap() []error { return e }

func describeItems(counts map[string]int) string {
	if len(counts) == 0 {
		return " (it has no items)"
	}
	types := make([]string, 0, len(counts))
	for t, n := range counts {
		types = append(types, t+"×"+strconv.Itoa(n))
	}
	sort.Strings(types)
	return " (found " + strings.Join(types, ", ") + ")"
}

// isEnvelope tells an envelope from a bare profile document: an envelope's
// first line is a whole JSON object (the envelope header) and its second line
// is an item header, a JSON object with a "type". A bare document is either
// spread over many lines (its first line is not a whole object) or is one
// line with nothing after it.
func isEnvelope(data []byte) bool {
	first, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return false
	}
	first = bytes.TrimSpace(first)
	if len(first) == 0 || first[0] != '{' || !json.Valid(first) {
		return false
	}
	second, _, _ := bytes.Cut(bytes.TrimLeft(rest, " \t\r\n"), []byte("\n"))
	var h struct {
		Type *string `json:"type"`
	}
	return json.Unmarshal(second, &h) == nil && h.Type != nil
}

// writeProfiles encodes pd in the requested format and writes it out.
func writeProfiles(pd pprofile.Profiles, o convertOptions, e *env) error {
	switch o.format {
	case formatOTLPJSON:
		out, err := (&pprofile.JSONMarshaler{}).MarshalProfiles(pd)
		if err != nil {
			return fmt.Errorf("encoding OTLP JSON: %w", err)
		}
		return writeOutput(o.out, append(out, '\n'), e)
	case formatPprof:
		return writePprof(pd, o, e)
	default:
		out, err := (&pprofile.ProtoMarshaler{}).MarshalProfiles(pd)
		if err != nil {
			return fmt.Errorf("encoding OTLP protobuf: %w", err)
		}
		return writeOutput(o.out, out, e)
	}
}

func writePprof(pd pprofile.Profiles, o convertOptions, e *env) error {
	profs, err := pprofconv.Convert(pd)
	if err != nil {
		return fmt.Errorf("converting to pprof: %w", err)
	}
	if len(profs) == 0 {
		return errors.New("converting to pprof: the input produced no profiles")
	}
	if o.split {
		return writeSplitPprof(profs, o, e)
	}
	return writeMergedPprof(profs, o, e)
}

// writeMergedPprof merges the profiles of one sample type into one file; a
// second type (an Android trace's CPU view beside its wall time) goes to a
// file of its own, named after the type.
func writeMergedPprof(profs []*profile.Profile, o convertOptions, e *env) error {
	types, byType := groupBySampleType(profs)
	var written []string
	for i, typ := range types {
		merged, err := profile.Merge(byType[typ])
		if err != nil {
			return fmt.Errorf("merging %d %s profiles into one pprof file (use -split to write one file each): %w", len(byType[typ]), typ, err)
		}
		path, ok := mergedPath(o.out, typ, i, e)
		if !ok {
			continue
		}
		if err := writePprofFile(path, merged, e); err != nil {
			return err
		}
		written = append(written, path)
	}
	if len(written) > 1 {
		fmt.Fprintf(e.stderr, "sentryprof convert: one pprof file per sample type (%s): %s\n", strings.Join(types, ", "), strings.Join(written, ", "))
	}
	return nil
}

// groupBySampleType groups profiles by their first sample type, in the
// order the types first appear.
func groupBySampleType(profs []*profile.Profile) ([]string, map[string][]*profile.Profile) {
	var types []string
	byType := map[string][]*profile.Profile{}
	for _, p := range profs {
		typ := p.SampleType[0].Type
		if _, ok := byType[typ]; !ok {
			types = append(types, typ)
		}
		byType[typ] = append(byType[typ], p)
	}
	return types, byType
}

// mergedPath is the file of the i-th sample type: -out for the first,
// -out.<type> for the others, which standard output cannot take.
func mergedPath(out, typ string, i int, e *env) (string, bool) {
	if i == 0 {
		return out, true
	}
	if isStdio(out) {
		fmt.Fprintf(e.stderr, "sentryprof convert: the %s profiles are not written to standard output; give -out a file\n", typ)
		return "", false
	}
	return out + "." + typ, true
}

// writeSplitPprof writes one file per profile: FILE, FILE.1, FILE.2, ...
func writeSplitPprof(profs []*profile.Profile, o convertOptions, e *env) error {
	names := make([]string, len(profs))
	for i, p := range profs {
		names[i] = o.out
		if i > 0 {
			names[i] += "." + strconv.Itoa(i)
		}
		if err := writePprofFile(names[i], p, e); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stderr, "sentryprof convert: wrote %d pprof profiles: %s\n", len(names), strings.Join(names, ", "))
	return nil
}

func writePprofFile(path string, p *profile.Profile, e *env) error {
	if err := p.CheckValid(); err != nil {
		return fmt.Errorf("pprof profile for %s is invalid: %w", filepath.Base(path), err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return fmt.Errorf("encoding pprof: %w", err)
	}
	return writeOutput(path, buf.Bytes(), e)
}
