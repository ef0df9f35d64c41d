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

	"github.com/google/pprof/profile"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/pprofconv"
	"github.com/sentryprofile/otelcol-sentryprofile/translator"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// Output formats of convert.
const (
	formatOTLPProto = "otlp-proto"
	formatOTLPJSON  = "otlp-json"
	formatPprof     = "pprof"
)

// Envelope item types convert reads.
const (
	itemProfile        = "profile"          // V1
	itemProfileChunk   = "profile_chunk"    // V2
	itemProfileChunkUI = "profile_chunk_ui" // V2, as some Android SDKs labelled it
	itemTransaction    = "transaction"      // links a V1 profile to its trace
)

// maxProfileItemBytes is Relay's limit for one profile item.
const maxProfileItemBytes = 50 << 20

const convertHelp = `Usage: sentryprof convert [-in FILE|-] [-out FILE|-] [-format FORMAT]
                          [-project ID] [-service NAME] [-split]
                          [-validation lenient|relay]

Reads a Sentry envelope or a bare V1/V2 profile JSON document (plain or
gzip'd) and writes OpenTelemetry profiles or pprof. Every profile and
profile_chunk item is decoded, normalized and validated as the receiver does;
transaction items link V1 profiles to their trace. Any invalid profile item
fails the whole conversion and names the item and the reason.

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
	fs.StringVar(&o.in, "in", "-", "input `file`: an envelope or a profile JSON document, optionally gzip'd; - is standard input")
	fs.StringVar(&o.out, "out", "-", "output `file`; - is standard output")
	fs.StringVar(&o.format, "format", "", "output `format`: otlp-proto, otlp-json or pprof (default: from the -out extension)")
	fs.StringVar(&o.project, "project", "", "Sentry project `id` recorded on the resource")
	fs.StringVar(&o.service, "service", "", "service.name of the resource (`name`)")
	fs.BoolVar(&o.split, "split", false, "pprof only: write one file per profile (FILE, FILE.1, ...) instead of merging")
	fs.StringVar(&o.validation, "validation", "lenient", "`rules` that refuse a profile: lenient (only unreadable samples) or relay (what Sentry refuses)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.format == "" {
		o.format = formatFromPath(o.out)
	}
	switch o.format {
	case formatOTLPProto, formatOTLPJSON, formatPprof:
	default:
		return usageErrorf("unknown -format %q (want otlp-proto, otlp-json or pprof)", o.format)
	}
	var mode sentry.Mode
	switch o.validation {
	case "lenient":
		mode = sentry.ModeLenient
	case "relay":
		mode = sentry.ModeRelay
	default:
		return usageErrorf("unknown -validation %q (want lenient or relay)", o.validation)
	}
	if o.split && (o.format != formatPprof || isStdio(o.out)) {
		return usageErrorf("-split needs -format pprof and an -out file")
	}

	prog := newProgress(e.stderr, "convert")
	data, err := readInput(o.in, e, prog)
	if err != nil {
		return err
	}
	items, err := decodeSentry(data, profileChecker{mode: mode, warn: e.stderr}, prog)
	if err != nil {
		return err
	}

	b := translator.NewProfilesBuilder(translator.ReceiveOptions{ServiceName: o.service, ProjectID: o.project})
	samples := 0
	for _, it := range items {
		samples += b.Add(it)
	}
	prog.done(len(items), samples)
	return writeProfiles(b.Profiles(), o, e)
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

// decodeSentry turns the input into translator items: every profile item of
// an envelope, or the one profile of a bare JSON document. Warnings (items
// that are not profiles, a transaction that does not decode) go to warn.
func decodeSentry(data []byte, check profileChecker, prog *progress) ([]translator.Item, error) {
	warn := check.warn
	if !isEnvelope(data) {
		p, err := check.decode(&envelope.Item{Header: envelope.ItemHeader{Type: itemProfile, Length: -1}, Payload: data, Size: int64(len(data))}, -1)
		if err != nil {
			return nil, err
		}
		prog.item(0, "profile document", len(p.Samples))
		return []translator.Item{{Profile: p, Payload: data}}, nil
	}

	r := envelope.NewReader(bytes.NewReader(data), envelope.Limits{MaxItemBytes: maxProfileItemBytes})
	if _, err := r.Header(); err != nil {
		return nil, err
	}
	var (
		items        []translator.Item
		transactions []*sentry.TransactionEvent
		problems     []error
		others       = map[string]int{} // non-profile items by type, for the error when no profile is found
	)
	for i := 0; ; i++ {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			// The envelope's errors already say which item and offset.
			return nil, err
		}
		switch typ := it.Header.Type; typ {
		case itemProfile, itemProfileChunk, itemProfileChunkUI:
			p, err := check.decode(&it, i)
			if err != nil {
				problems = append(problems, atItem(err, i))
				continue
			}
			prog.item(i, typ, len(p.Samples))
			items = append(items, translator.Item{Profile: p, Payload: it.Payload})
		case itemTransaction:
			others[typ]++
			if it.Oversized {
				fmt.Fprintf(warn, "sentryprof convert: warning: item %d: transaction of %d bytes skipped (over %d MiB); its profile has no trace link\n", i, it.Size, maxProfileItemBytes>>20)
				continue
			}
			tx, err := sentry.DecodeTransactionEvent(it.Payload)
			if err != nil {
				fmt.Fprintf(warn, "sentryprof convert: warning: item %d: transaction ignored, its profile has no trace link: %v\n", i, err)
				continue
			}
			transactions = append(transactions, tx)
		default:
			others[typ]++
		}
	}
	switch len(problems) {
	case 0:
	case 1:
		return nil, problems[0]
	default:
		return nil, invalidItems(problems)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("envelope has no profile or profile_chunk item%s", describeItems(others))
	}
	linkTransactions(items, transactions)
	return items, nil
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

// profileChecker runs one payload through the receiver's pipeline: decode,
// normalize, validate under mode, printing the warnings of lenient mode.
type profileChecker struct {
	mode sentry.Mode
	warn io.Writer
}

// decode checks the payload of envelope item i (-1 for a bare document).
func (c profileChecker) decode(item *envelope.Item, i int) (*sentry.Profile, error) {
	dec := translator.ItemDecoder{Mode: c.mode, MaxSize: maxProfileItemBytes}
	p, warnings, serr := dec.Decode(item, time.Now())
	if serr != nil {
		return nil, serr
	}
	for _, w := range warnings {
		if i >= 0 {
			w = w.AtItem(i)
		}
		fmt.Fprintf(c.warn, "sentryprof convert: warning: accepted, but Relay would refuse it: %v\n", w)
	}
	return p, nil
}

// atItem locates a profile error at envelope item i, keeping its Relay
// reason when it has one.
func atItem(err error, i int) error {
	var se *sentry.Error
	if errors.As(err, &se) {
		return se.AtItem(i)
	}
	return fmt.Errorf("item %d: %w", i, err)
}

// linkTransactions gives each V1 profile the transaction it was sent with:
// the one whose event id the profile names, or the only one in the envelope.
func linkTransactions(items []translator.Item, txs []*sentry.TransactionEvent) {
	byID := make(map[string]*sentry.TransactionEvent, len(txs))
	for _, tx := range txs {
		byID[normalizeID(tx.EventID)] = tx
	}
	for i := range items {
		p := items[i].Profile
		if p.Version != sentry.VersionV1 {
			continue
		}
		if len(p.Transactions) > 0 {
			if tx, ok := byID[normalizeID(p.Transactions[0].ID)]; ok {
				items[i].Transaction = tx
				continue
			}
		}
		if len(txs) == 1 {
			items[i].Transaction = txs[0]
		}
	}
}

func normalizeID(id string) string { return strings.ToLower(strings.ReplaceAll(id, "-", "")) }

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
	if !o.split {
		// Profiles of one sample type merge into one file; a second type
		// (an Android trace's CPU view beside its wall time) goes to a file
		// of its own, named after the type.
		var types []string
		byType := map[string][]*profile.Profile{}
		for _, p := range profs {
			typ := p.SampleType[0].Type
			if _, ok := byType[typ]; !ok {
				types = append(types, typ)
			}
			byType[typ] = append(byType[typ], p)
		}
		var written []string
		for i, typ := range types {
			merged, err := profile.Merge(byType[typ])
			if err != nil {
				return fmt.Errorf("merging %d %s profiles into one pprof file (use -split to write one file each): %w", len(byType[typ]), typ, err)
			}
			path := o.out
			if i > 0 {
				if isStdio(o.out) {
					fmt.Fprintf(e.stderr, "sentryprof convert: the %s profiles are not written to standard output; give -out a file\n", typ)
					continue
				}
				path += "." + typ
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
