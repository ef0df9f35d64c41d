package sentry

import (
	"errors"
	"strconv"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/sentrytime"
)

// DecodeProfile decodes a V1 `profile` or V2 `profile_chunk` payload.
//
// It accepts what real SDKs send: ids, thread ids and counters as strings or
// numbers, addresses as "0x…" hex, decimal strings or numbers, dashed UUIDs,
// null for any optional field, `transaction` or `transactions`, and unknown
// keys anywhere (skipped). Duplicate keys follow encoding/json into a map:
// the last one wins, and an object value replaces the earlier one whole.
// Where a key has an alias (`event_id`/`profile_id`, frame `function`/`name`,
// `filename`/`file`, `lineno`/`line`, `colno`/`column`,
// `symbol_addr`/`sym_addr`), the canonical key wins over the alias. When
// both `transaction` and `transactions` are present, `transaction` comes
// first in Transactions (it is the one Relay uses). Strings are unescaped in
// full and invalid UTF-8 is replaced with U+FFFD. Frame `data` is kept as
// compact JSON text. Sample and measurement timestamps (numbers or numeric
// strings, exponent allowed) are parsed from their decimal text into exact
// Unix nanoseconds, digits past the ninth fractional one truncated; a
// negative or zero timestamp decodes as is and is rejected by Validate,
// which names the sample, while "NaN", "Infinity" and values beyond int64
// nanoseconds are ReasonInvalidJSON. The top-level "timestamp" is read as
// RFC 3339 (V1) or as float seconds (some V2 chunks carry one) into UTC.
//
// Errors are *Error with ReasonInvalidJSON (syntax, wrong types, numbers out
// of range; the message names the field and byte offset),
// ReasonPlatformNotSupported (Android payloads that carry an ART trace in
// `sampled_profile`, Perfetto chunk metadata, legacy Android profiles without
// `version`, version "2.android-trace"), or ReasonUnsupportedVersion
// (`version` absent or other than "1" and "2").
func DecodeProfile(data []byte) (*Profile, error) {
	var dec Decoder
	return dec.Decode(data)
}

// A Decoder decodes profiles into memory it keeps from one call to the next:
// the sample, frame and stack arrays that are most of a decoded profile, and
// the table that interns its strings. A receiver that decodes one payload
// after another through a Decoder allocates them once instead of per
// payload. The zero value is ready to use; a Decoder is not safe for
// concurrent use.
type Decoder struct {
	samples []Sample
	frames  []Frame
	offsets []int
	indices []int64
	// interned outlives a payload: an SDK sends the same function names,
	// paths and thread ids chunk after chunk, and a string found here is
	// not allocated again.
	interned      map[string]string
	internedBytes int
	// frames caches decoded frames by their JSON text, from the second
	// payload on: a one-off decode would only pay for filling it.
	frameCache frameCache
	decoded    bool
}

// Retention bounds of a Decoder: memory beyond them, which only unusually
// large payloads need, is left to the garbage collector after its payload
// rather than kept for the next one.
// They hold a 60-second chunk of eight busy threads (48k samples, 250k
// frame indices, 2k frames), about 8 MiB.
const (
	maxKeptSamples       = 1 << 16 // 4.5 MiB of Sample
	maxKeptFrames        = 1 << 13 // 1.6 MiB of Frame
	maxKeptStacks        = 1 << 15
	maxKeptIndices       = 1 << 19 // 4 MiB of frame indices
	maxKeptInterned      = 1 << 15
	maxKeptInternedBytes = 2 << 20
)

// Decode decodes a payload like DecodeProfile. The returned Profile's
// Samples, Frames and Stacks share the Decoder's memory: they are valid
// until its next Decode, and whatever outlives it must be copied (strings
// may be kept: they are never overwritten).
func (dec *Decoder) Decode(data []byte) (*Profile, error) {
	if len(dec.interned) > maxKeptInterned || dec.internedBytes > maxKeptInternedBytes {
		// Start over rather than let the strings of many payloads pile up.
		dec.interned, dec.internedBytes = nil, 0
	}
	d := profileDecoder{s: newScanner(data, dec.interned)}
	if dec.decoded {
		d.frameCache = &dec.frameCache
	}
	dec.decoded = true
	p := &Profile{
		Samples: dec.samples[:0],
		Frames:  dec.frames[:0],
		Stacks:  Stacks{Offsets: dec.offsets[:0], FrameIndices: dec.indices[:0]},
	}
	err := d.document(p)
	dec.keep(p, d.s.interned, d.s.internedBytes)
	emptyArraysNil(p)
	if err != nil {
		// A payload of another format (legacy Android, the obsolete
		// pre-sample cocoa format) fails on types before the decoder has
		// seen its version; report what it is rather than where it broke.
		if rejected := classifyForeign(data); rejected != nil {
			return nil, rejected
		}
		return nil, NewError(ReasonInvalidJSON, err.Error())
	}
	if rejected := d.rejectFormat(p); rejected != nil {
		return nil, rejected
	}
	return p, nil
}

// emptyArraysNil makes p's empty arrays nil: a decoded profile reads the
// same whether its arrays came from the Decoder or not.
func emptyArraysNil(p *Profile) {
	p.Samples = nilIfEmpty(p.Samples)
	p.Frames = nilIfEmpty(p.Frames)
	p.Stacks.Offsets = nilIfEmpty(p.Stacks.Offsets)
	p.Stacks.FrameIndices = nilIfEmpty(p.Stacks.FrameIndices)
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// keep holds on to the arrays p grew, within the retention bounds.
func (dec *Decoder) keep(p *Profile, interned map[string]string, internedBytes int) {
	dec.samples = keepLarger(dec.samples, p.Samples, maxKeptSamples)
	dec.frames = keepLarger(dec.frames, p.Frames, maxKeptFrames)
	dec.offsets = keepLarger(dec.offsets, p.Stacks.Offsets, maxKeptStacks)
	dec.indices = keepLarger(dec.indices, p.Stacks.FrameIndices, maxKeptIndices)
	dec.interned = interned
	dec.internedBytes += internedBytes
}

// keepLarger returns whichever of kept and used has the larger capacity, or
// nil when that is above limit.
func keepLarger[T any](kept, used []T, limit int) []T {
	if cap(used) > cap(kept) {
		kept = used
	}
	if cap(kept) > limit {
		return nil
	}
	return kept
}

// profileDecoder walks a profile document; it holds what is only known once
// the whole document has been read.
type profileDecoder struct {
	s          scanner
	frameCache *frameCache // nil: frames are decoded every time

	// Set when the payload is an Android trace chunk or Perfetto metadata.
	sampledProfile bool
	contentType    string

	transaction  []Transaction // "transaction" (zero or one element)
	transactions []Transaction // "transactions"
	hasEventID   bool          // "event_id" seen: "profile_id" no longer applies
	frameKeys    int           // the canonical keys of the frame being read (seenFunction…)
}

func (d *profileDecoder) document(p *Profile) error {
	if err := d.top(p); err != nil {
		return err
	}
	if d.s.peek(); d.s.pos < len(d.s.data) {
		return d.s.errorf("unexpected data after the top-level value")
	}
	p.Transactions = append(d.transaction, d.transactions...)
	if len(p.Transactions) == 0 {
		p.Transactions = nil
	}
	return nil
}

// rejectFormat reports a decoded document that is not a sample-format
// profile.
func (d *profileDecoder) rejectFormat(p *Profile) *Error {
	switch {
	case d.sampledProfile:
		return NewError(ReasonPlatformNotSupported, "Android trace profiles (sampled_profile) are not supported")
	case d.contentType == "perfetto":
		return NewError(ReasonPlatformNotSupported, "Perfetto profile chunks are not supported")
	}
	return checkVersion(p.Version, p.Platform)
}

func checkVersion(version, platform string) *Error {
	if version == VersionV1 || version == VersionV2 {
		return nil
	}
	if platform == "android" {
		return NewError(ReasonPlatformNotSupported, "Android profile of version "+strconv.Quote(version)+" is not in the sample format")
	}
	if version == "" {
		return NewError(ReasonUnsupportedVersion, "version is absent")
	}
	return NewError(ReasonUnsupportedVersion, "version "+strconv.Quote(version)+" is not supported")
}

// classifyForeign reads only the top-level "version", "platform" and
// "sampled_profile" of a payload that failed to decode, and returns the
// rejection for a payload of another profile format, or nil.
func classifyForeign(data []byte) *Error {
	var h foreignHeader
	d := profileDecoder{s: newScanner(data, nil)}
	if d.s.beginObject() != nil || d.members(h.read(&d.s)) != nil {
		return nil
	}
	if h.sampled {
		return NewError(ReasonPlatformNotSupported, "Android trace profiles (sampled_profile) are not supported")
	}
	return checkVersion(h.version, h.platform)
}

// foreignHeader is what classifyForeign reads of a payload.
type foreignHeader struct {
	version, platform string
	sampled           bool // "sampled_profile" is present
}

// read returns the member function that reads h's keys from s.
func (h *foreignHeader) read(s *scanner) func(key []byte) error {
	return func(key []byte) (err error) {
		switch string(key) {
		case "version":
			h.version, err = s.stringValue()
		case "platform":
			h.platform, err = s.stringValue()
		case "sampled_profile":
			h.sampled = true
			err = s.skipValue()
		default:
			err = s.skipValue()
		}
		return err
	}
}

// top decodes the top-level object.
func (d *profileDecoder) top(p *Profile) error {
	if err := d.s.beginObject(); err != nil {
		return err
	}
	return d.members(func(key []byte) error { return readField(d, p, topFields, key) })
}

// timestamp reads V1's RFC 3339 "timestamp", or the float seconds some V2
// chunks carry, as a UTC time; null and "" are no time.
func (d *profileDecoder) timestamp() (time.Time, error) {
	s := &d.s
	switch s.peek() {
	case '"':
		return d.timestampString()
	case 'n':
		_, err := s.null()
		return time.Time{}, err
	}
	t, err := s.timeValue(sentrytime.ParseSeconds)
	return t.Time(), err
}

// timestampString reads a quoted "timestamp".
func (d *profileDecoder) timestampString() (time.Time, error) {
	s := &d.s
	start := s.pos
	b, err := s.readString()
	if err != nil || len(b) == 0 {
		return time.Time{}, err
	}
	t, err := sentrytime.ParseText(b)
	if err != nil {
		return time.Time{}, s.errorAt(start, "invalid RFC 3339 timestamp "+strconv.Quote(string(b))+": "+err.Error())
	}
	return t.Time(), nil
}

// object runs member for each key of an object; null is an absent object.
// The hot arrays (samples, stacks, frames) do not go through it.
func (d *profileDecoder) object(member func(key []byte) error) error {
	if isNull, err := d.s.null(); err != nil || isNull {
		return err
	}
	if err := d.s.beginObject(); err != nil {
		return err
	}
	return d.members(member)
}

// members runs member for each key of the object begun, up to its end.
func (d *profileDecoder) members(member func(key []byte) error) error {
	for n := 0; ; {
		key, ok, err := d.s.objectNext(&n)
		if err != nil || !ok {
			return err
		}
		if err := member(key); err != nil {
			return inField(err, string(key))
		}
	}
}

// array runs element for each element of an array; null is an absent array.
func (d *profileDecoder) array(element func(i int) error) error {
	s := &d.s
	if isNull, err := s.null(); err != nil || isNull {
		return err
	}
	if err := s.beginArray(); err != nil {
		return err
	}
	for n := 0; ; {
		ok, err := s.arrayNext(&n)
		if err != nil || !ok {
			return err
		}
		if err := element(n - 1); err != nil {
			return inElement(err, n-1)
		}
	}
}

// millisecondsThreshold separates the two clocks SDKs use for V2 measurement
// "timestamp": seconds, as the spec says, and epoch milliseconds, which
// @sentry/profiling-node writes while its samples use seconds. No epoch-seconds
// value reaches it before the year 5138.
const millisecondsThreshold = 100_000_000_000

// measurementNanos reads a V2 measurement "timestamp" as Unix nanoseconds,
// accepting epoch seconds or epoch milliseconds (see millisecondsThreshold).
func (s *scanner) measurementNanos() (int64, error) {
	t, err := s.timeValue(secondsOrMilliseconds)
	return t.UnixNano(), err
}

// secondsOrMilliseconds reads text as seconds, or as milliseconds when its
// magnitude is millisecondsThreshold or more.
func secondsOrMilliseconds(text []byte) (sentrytime.Time, error) {
	t, err := sentrytime.ParseSeconds(text)
	if !errors.Is(err, sentrytime.ErrOutOfRange) {
		return t, err
	}
	ms, msErr := sentrytime.ParseMilliseconds(text)
	if msErr != nil || (ms < millisecondsThreshold*1e6 && ms > -millisecondsThreshold*1e6) {
		return 0, err // between the two clocks: out of range as seconds
	}
	return ms, nil
}
