package sentry

import (
	"errors"
	"strconv"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/jsontext"
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
	// A decoded profile reads the same whether its arrays came from the
	// Decoder or not: absent or empty arrays are nil.
	if len(p.Samples) == 0 {
		p.Samples = nil
	}
	if len(p.Frames) == 0 {
		p.Frames = nil
	}
	if len(p.Stacks.Offsets) == 0 {
		p.Stacks.Offsets = nil
	}
	if len(p.Stacks.FrameIndices) == 0 {
		p.Stacks.FrameIndices = nil
	}
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
	s := newScanner(data, nil)
	var version, platform string
	sampled := false
	if err := s.beginObject(); err != nil {
		return nil
	}
	for n := 0; ; {
		key, ok, err := s.objectNext(&n)
		if err != nil {
			return nil
		}
		if !ok {
			break
		}
		switch string(key) {
		case "version":
			version, err = s.stringValue()
		case "platform":
			platform, err = s.stringValue()
		case "sampled_profile":
			sampled = true
			err = s.skipValue()
		default:
			err = s.skipValue()
		}
		if err != nil {
			return nil
		}
	}
	if sampled {
		return NewError(ReasonPlatformNotSupported, "Android trace profiles (sampled_profile) are not supported")
	}
	return checkVersion(version, platform)
}

// top decodes the top-level object.
func (d *profileDecoder) top(p *Profile) error {
	s := &d.s
	if err := s.beginObject(); err != nil {
		return err
	}
	for n := 0; ; {
		key, ok, err := s.objectNext(&n)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		switch string(key) {
		case "version":
			p.Version, err = s.stringValue()
		case "event_id":
			d.hasEventID = true
			p.EventID, err = s.stringValue()
		case "profile_id":
			var id string
			if id, err = s.stringValue(); !d.hasEventID {
				p.EventID = id
			}
		case "profiler_id":
			p.ProfilerID, err = s.stringValue()
		case "chunk_id":
			p.ChunkID, err = s.stringValue()
		case "platform":
			err = d.metadataString(&p.Platform, &p.Present, FieldPlatform)
		case "release":
			err = d.metadataString(&p.Release, &p.Present, FieldRelease)
		case "environment":
			err = d.metadataString(&p.Environment, &p.Present, FieldEnvironment)
		case "dist":
			err = d.metadataString(&p.Dist, &p.Present, FieldDist)
		case "timestamp":
			p.Present &^= FieldTimestamp
			if p.Timestamp, err = d.timestamp(); err == nil && !p.Timestamp.IsZero() {
				p.Present |= FieldTimestamp
			}
		case "device":
			p.Device = Device{}
			p.Present &^= fieldsOfDevice
			err = d.device(&p.Device, &p.Present)
		case "os":
			p.OS = OS{}
			p.Present &^= fieldsOfOS
			err = d.os(&p.OS, &p.Present)
		case "runtime":
			p.Runtime = Runtime{}
			p.Present &^= fieldsOfRuntime
			err = d.runtime(&p.Runtime, &p.Present)
		case "client_sdk":
			p.ClientSDK = ClientSDK{}
			p.Present &^= fieldsOfClientSDK
			err = d.clientSDK(&p.ClientSDK, &p.Present)
		case "debug_meta":
			p.DebugMeta = DebugMeta{}
			err = d.debugMeta(&p.DebugMeta)
		case "transaction":
			d.transaction = d.transaction[:0]
			if isNull, nerr := s.null(); nerr != nil || isNull {
				err = nerr
				break
			}
			var t Transaction
			if err = d.transactionObject(&t); err == nil {
				d.transaction = append(d.transaction, t)
			}
		case "transactions":
			d.transactions = d.transactions[:0]
			err = d.transactionList()
		case "measurements":
			p.Measurements = nil
			err = d.measurements(&p.Measurements)
		case "profile":
			// A repeated "profile" replaces the earlier one whole; the
			// arrays keep their memory.
			p.Samples, p.Frames, p.ThreadMetadata, p.QueueMetadata = p.Samples[:0], p.Frames[:0], nil, nil
			p.Stacks = Stacks{Offsets: p.Stacks.Offsets[:0], FrameIndices: p.Stacks.FrameIndices[:0]}
			err = d.profile(p)
		case "sampled_profile":
			var isNull bool
			if isNull, err = s.null(); err == nil && !isNull {
				d.sampledProfile = true
				err = s.skipValue()
			}
		case "content_type":
			d.contentType, err = s.stringValue()
		default:
			err = s.skipValue()
		}
		if err != nil {
			return inField(err, string(key))
		}
	}
}

// timestamp reads V1's RFC 3339 "timestamp", or the float seconds some V2
// chunks carry, as a UTC time.
func (d *profileDecoder) timestamp() (time.Time, error) {
	s := &d.s
	switch s.peek() {
	case '"':
		start := s.pos
		b, err := s.readString()
		if err != nil {
			return time.Time{}, err
		}
		if len(b) == 0 {
			return time.Time{}, nil
		}
		t, perr := sentrytime.ParseText(b)
		if perr != nil {
			return time.Time{}, s.errorAt(start, "invalid RFC 3339 timestamp "+strconv.Quote(string(b))+": "+perr.Error())
		}
		return t.Time(), nil
	case 'n':
		_, err := s.null()
		return time.Time{}, err
	}
	t, err := s.timeValue(sentrytime.ParseSeconds)
	return t.Time(), err
}

// object runs member for each key of an object; null is an absent object.
// The hot arrays (samples, stacks, frames) do not go through it.
func (d *profileDecoder) object(member func(key []byte) error) error {
	s := &d.s
	if isNull, err := s.null(); err != nil || isNull {
		return err
	}
	if err := s.beginObject(); err != nil {
		return err
	}
	for n := 0; ; {
		key, ok, err := s.objectNext(&n)
		if err != nil {
			return err
		}
		if !ok {
			return nil
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
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		if err := element(n - 1); err != nil {
			return inElement(err, n-1)
		}
	}
}

// The fields an object's key clears when the object is repeated.
const (
	fieldsOfDevice = FieldDevice | FieldDeviceArchitecture | FieldDeviceLocale |
		FieldDeviceManufacturer | FieldDeviceModel | FieldDeviceClassification
	fieldsOfOS        = FieldOS | FieldOSName | FieldOSVersion | FieldOSBuildNumber
	fieldsOfRuntime   = FieldRuntime | FieldRuntimeName | FieldRuntimeVersion
	fieldsOfClientSDK = FieldClientSDK | FieldClientSDKName | FieldClientSDKVersion
)

// metadataString reads a string field and records it in present when it was
// a string (null, as in Relay, is absent).
func (d *profileDecoder) metadataString(dst *string, present *Fields, f Fields) error {
	isString := d.s.peek() == '"'
	v, err := d.s.stringValue()
	if err != nil {
		return err
	}
	*dst = v
	if isString {
		*present |= f
	} else {
		*present &^= f // a repeated key's last value wins
	}
	return nil
}

// metadataObject runs member for each key of an object and records the
// object itself as present unless it is null.
func (d *profileDecoder) metadataObject(present *Fields, f Fields, member func(key []byte) error) error {
	if d.s.peek() != 'n' {
		*present |= f
	} else {
		*present &^= f
	}
	return d.object(member)
}

func (d *profileDecoder) device(dev *Device, present *Fields) error {
	s := &d.s
	return d.metadataObject(present, FieldDevice, func(key []byte) (err error) {
		switch string(key) {
		case "architecture":
			err = d.metadataString(&dev.Architecture, present, FieldDeviceArchitecture)
		case "is_emulator":
			dev.IsEmulator, err = s.boolValue()
		case "locale":
			err = d.metadataString(&dev.Locale, present, FieldDeviceLocale)
		case "manufacturer":
			err = d.metadataString(&dev.Manufacturer, present, FieldDeviceManufacturer)
		case "model":
			err = d.metadataString(&dev.Model, present, FieldDeviceModel)
		case "classification":
			err = d.metadataString(&dev.Classification, present, FieldDeviceClassification)
		default:
			err = s.skipValue()
		}
		return err
	})
}

func (d *profileDecoder) os(o *OS, present *Fields) error {
	return d.metadataObject(present, FieldOS, func(key []byte) (err error) {
		switch string(key) {
		case "name":
			err = d.metadataString(&o.Name, present, FieldOSName)
		case "version":
			err = d.metadataString(&o.Version, present, FieldOSVersion)
		case "build_number":
			err = d.metadataString(&o.BuildNumber, present, FieldOSBuildNumber)
		default:
			err = d.s.skipValue()
		}
		return err
	})
}

func (d *profileDecoder) runtime(r *Runtime, present *Fields) error {
	return d.metadataObject(present, FieldRuntime, func(key []byte) (err error) {
		switch string(key) {
		case "name":
			err = d.metadataString(&r.Name, present, FieldRuntimeName)
		case "version":
			err = d.metadataString(&r.Version, present, FieldRuntimeVersion)
		default:
			err = d.s.skipValue()
		}
		return err
	})
}

func (d *profileDecoder) clientSDK(c *ClientSDK, present *Fields) error {
	return d.metadataObject(present, FieldClientSDK, func(key []byte) (err error) {
		switch string(key) {
		case "name":
			err = d.metadataString(&c.Name, present, FieldClientSDKName)
		case "version":
			err = d.metadataString(&c.Version, present, FieldClientSDKVersion)
		default:
			err = d.s.skipValue()
		}
		return err
	})
}

func (d *profileDecoder) debugMeta(m *DebugMeta) error {
	s := &d.s
	return d.object(func(key []byte) error {
		if string(key) != "images" {
			return s.skipValue()
		}
		m.Images = nil
		return d.array(func(int) error {
			m.Images = append(m.Images, Image{})
			return d.image(&m.Images[len(m.Images)-1])
		})
	})
}

func (d *profileDecoder) image(img *Image) error {
	s := &d.s
	return d.object(func(key []byte) (err error) {
		switch string(key) {
		case "type":
			img.Type, err = s.stringValue()
		case "code_file":
			img.CodeFile, err = s.stringValue()
		case "code_id":
			img.CodeID, err = s.stringValue()
		case "debug_id":
			img.DebugID, err = s.stringValue()
		case "debug_file":
			img.DebugFile, err = s.stringValue()
		case "uuid":
			img.UUID, err = s.stringValue()
		case "arch":
			img.Arch, err = s.stringValue()
		case "image_addr":
			img.ImageAddr, err = s.addrValue()
		case "image_vmaddr":
			img.ImageVMAddr, err = s.addrValue()
		case "image_size":
			img.ImageSize, err = s.uintValue(64)
		default:
			err = s.skipValue()
		}
		return err
	})
}

func (d *profileDecoder) transactionList() error {
	return d.array(func(int) error {
		d.transactions = append(d.transactions, Transaction{})
		return d.transactionObject(&d.transactions[len(d.transactions)-1])
	})
}

func (d *profileDecoder) transactionObject(t *Transaction) error {
	s := &d.s
	return d.object(func(key []byte) (err error) {
		switch string(key) {
		case "id":
			t.ID, err = s.stringValue()
		case "name":
			t.Name, err = s.stringValue()
		case "trace_id":
			t.TraceID, err = s.stringValue()
		case "segment_id":
			t.SegmentID, err = s.stringValue()
		case "active_thread_id":
			t.ActiveThreadID, err = s.idValue()
		case "relative_start_ns":
			t.RelativeStartNS, err = s.uintValue(64)
		case "relative_end_ns":
			t.RelativeEndNS, err = s.uintValue(64)
		default:
			err = s.skipValue()
		}
		return err
	})
}

// measurements decodes {name: {unit, values}}; a repeated name replaces the
// earlier entry in place.
func (d *profileDecoder) measurements(out *[]Measurement) error {
	s := &d.s
	var index map[string]int
	return d.object(func(key []byte) error {
		name := s.intern(key)
		if isNull, err := s.null(); err != nil || isNull {
			return err
		}
		var m Measurement
		m.Name = name
		if err := d.measurement(&m); err != nil {
			return err
		}
		if i, ok := index[name]; ok {
			(*out)[i] = m
			return nil
		}
		if index == nil {
			index = make(map[string]int)
		}
		index[name] = len(*out)
		*out = append(*out, m)
		return nil
	})
}

func (d *profileDecoder) measurement(m *Measurement) error {
	s := &d.s
	return d.object(func(key []byte) (err error) {
		switch string(key) {
		case "unit":
			m.Unit, err = s.stringValue()
		case "values":
			m.Values = nil
			err = d.array(func(int) error {
				m.Values = append(m.Values, MeasurementValue{})
				return d.measurementValue(&m.Values[len(m.Values)-1])
			})
		default:
			err = s.skipValue()
		}
		return err
	})
}

func (d *profileDecoder) measurementValue(v *MeasurementValue) error {
	s := &d.s
	return d.object(func(key []byte) (err error) {
		switch string(key) {
		case "elapsed_since_start_ns":
			v.ElapsedSinceStartNS, err = s.uintValue(64)
		case "timestamp":
			v.Timestamp, err = s.measurementNanos()
		case "value":
			v.Value, err = s.floatValue()
		default:
			err = s.skipValue()
		}
		return err
	})
}

// profile decodes the "profile" object.
func (d *profileDecoder) profile(p *Profile) error {
	s := &d.s
	return d.object(func(key []byte) (err error) {
		switch string(key) {
		case "samples":
			p.Samples = p.Samples[:0]
			err = d.samples(&p.Samples)
			if len(p.Samples) == 0 {
				p.Samples = nil
			}
		case "stacks":
			p.Stacks = Stacks{Offsets: p.Stacks.Offsets[:0], FrameIndices: p.Stacks.FrameIndices[:0]}
			err = d.stacks(&p.Stacks)
		case "frames":
			p.Frames = p.Frames[:0]
			err = d.frames(&p.Frames)
			if len(p.Frames) == 0 {
				p.Frames = nil
			}
		case "thread_metadata":
			p.ThreadMetadata = nil
			err = d.threadMetadata(&p.ThreadMetadata)
		case "queue_metadata":
			p.QueueMetadata = nil
			err = d.queueMetadata(&p.QueueMetadata)
		default:
			err = s.skipValue()
		}
		return err
	})
}

// frames decodes "profile.frames".
func (d *profileDecoder) frames(out *[]Frame) error {
	s := &d.s
	if isNull, err := s.null(); err != nil || isNull {
		return err
	}
	frames := *out
	if err := s.beginArray(); err != nil {
		return err
	}
	defer func() { *out = frames }()
	for n := 0; ; {
		ok, err := s.arrayNext(&n)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		frames = grow(frames)
		frames = append(frames, Frame{})
		f := &frames[len(frames)-1]
		// An SDK sends the same frames chunk after chunk, byte for byte:
		// a frame object seen before is not decoded again.
		start, end := s.pos, -1
		if s.pos < len(s.data) && s.data[s.pos] == '{' {
			end = jsontext.ValueEnd(s.data, s.pos)
		}
		if cached, ok := d.frameCache.get(s.data, start, end); ok {
			*f = cached
			s.pos = end
			continue
		}
		if err := d.frame(f); err != nil {
			return inElement(err, n-1)
		}
		if s.pos == end {
			d.frameCache.put(s.data[start:end], f)
		}
	}
}

// frameCache maps the JSON text of frame objects to what they decode to.
// Decoding a frame depends on its bytes alone, so equal text is an equal
// Frame; the strings of a cached Frame are interned and never change.
type frameCache struct {
	frames map[string]Frame
	bytes  int
}

// Bounds of a frame cache: past them it starts over.
const (
	maxCachedFrames     = 1 << 13
	maxCachedFrameBytes = 2 << 20
)

func (c *frameCache) get(data []byte, start, end int) (Frame, bool) {
	if c == nil || end < 0 || c.frames == nil {
		return Frame{}, false
	}
	f, ok := c.frames[string(data[start:end])]
	return f, ok
}

func (c *frameCache) put(raw []byte, f *Frame) {
	if c == nil {
		return
	}
	if c.frames == nil || len(c.frames) >= maxCachedFrames || c.bytes+len(raw) > maxCachedFrameBytes {
		c.frames, c.bytes = make(map[string]Frame, 256), 0
	}
	c.frames[string(raw)] = *f
	c.bytes += len(raw)
}

// Canonical frame keys seen so far, so that their aliases do not override
// them.
const (
	seenFunction = 1 << iota
	seenFilename
	seenLineno
	seenColno
	seenSymbolAddr
)

func (d *profileDecoder) frame(f *Frame) error {
	s := &d.s
	if err := s.beginObject(); err != nil {
		return err
	}
	seen := 0
	for n := 0; ; {
		key, ok, err := s.objectNext(&n)
		if err != nil || !ok {
			return err
		}
		switch string(key) {
		case "function":
			seen |= seenFunction
			f.Function, err = s.stringValue()
		case "name":
			err = aliasString(s, &f.Function, seen&seenFunction != 0)
		case "raw_function":
			f.RawFunction, err = s.stringValue()
		case "symbol":
			f.Symbol, err = s.stringValue()
		case "module":
			f.Module, err = s.stringValue()
		case "package":
			f.Package, err = s.stringValue()
		case "filename":
			seen |= seenFilename
			f.Filename, err = s.stringValue()
		case "file":
			err = aliasString(s, &f.Filename, seen&seenFilename != 0)
		case "abs_path":
			f.AbsPath, err = s.stringValue()
		case "lineno":
			seen |= seenLineno
			f.Lineno, err = lineValue(s)
		case "line":
			err = aliasLine(s, &f.Lineno, seen&seenLineno != 0)
		case "colno":
			seen |= seenColno
			f.Colno, err = lineValue(s)
		case "column":
			err = aliasLine(s, &f.Colno, seen&seenColno != 0)
		case "in_app":
			f.InApp, err = s.boolValue()
		case "platform":
			f.Platform, err = s.stringValue()
		case "instruction_addr":
			f.InstructionAddr, err = s.addrValue()
		case "symbol_addr":
			seen |= seenSymbolAddr
			f.SymbolAddr, err = s.addrValue()
		case "sym_addr":
			var v uint64
			if v, err = s.addrValue(); seen&seenSymbolAddr == 0 {
				f.SymbolAddr = v
			}
		case "image_addr":
			f.ImageAddr, err = s.addrValue()
		case "addr_mode":
			f.AddrMode, err = s.stringValue()
		case "status":
			f.Status, err = s.stringValue()
		case "data":
			f.Data, err = s.rawValue()
		default:
			err = s.skipValue()
		}
		if err != nil {
			return inField(err, string(key))
		}
	}
}

func aliasString(s *scanner, dst *string, canonicalSeen bool) error {
	v, err := s.stringValue()
	if !canonicalSeen {
		*dst = v
	}
	return err
}

func lineValue(s *scanner) (uint32, error) {
	v, err := s.uintValue(32)
	return uint32(v), err
}

func aliasLine(s *scanner, dst *uint32, canonicalSeen bool) error {
	v, err := lineValue(s)
	if !canonicalSeen {
		*dst = v
	}
	return err
}

// threadMetadata decodes {thread_id: {name, priority}} in input order; a
// repeated thread id replaces the earlier entry in place.
func (d *profileDecoder) threadMetadata(out *[]ThreadMetadata) error {
	s := &d.s
	var index map[string]int
	return d.object(func(key []byte) error {
		id := s.intern(key)
		if isNull, err := s.null(); err != nil || isNull {
			return err
		}
		tm := ThreadMetadata{ThreadID: id}
		err := d.object(func(key []byte) (err error) {
			switch string(key) {
			case "name":
				tm.Name, err = s.stringValue()
			case "priority":
				var isNull bool
				if isNull, err = s.null(); err == nil && !isNull {
					tm.Priority, err = s.int64Value()
					tm.HasPriority = err == nil
				} else {
					tm.Priority, tm.HasPriority = 0, false
				}
			default:
				err = s.skipValue()
			}
			return err
		})
		if err != nil {
			return err
		}
		if i, ok := index[id]; ok {
			(*out)[i] = tm
			return nil
		}
		if index == nil {
			index = make(map[string]int)
		}
		index[id] = len(*out)
		*out = append(*out, tm)
		return nil
	})
}

// queueMetadata decodes cocoa {queue_address: {label}} in input order; a
// repeated address replaces the earlier entry in place.
func (d *profileDecoder) queueMetadata(out *[]QueueMetadata) error {
	s := &d.s
	var index map[string]int
	return d.object(func(key []byte) error {
		addr := s.intern(key)
		if isNull, err := s.null(); err != nil || isNull {
			return err
		}
		qm := QueueMetadata{Address: addr}
		err := d.object(func(key []byte) (err error) {
			if string(key) == "label" {
				qm.Label, err = s.stringValue()
				return err
			}
			return s.skipValue()
		})
		if err != nil {
			return err
		}
		if i, ok := index[addr]; ok {
			(*out)[i] = qm
			return nil
		}
		if index == nil {
			index = make(map[string]int)
		}
		index[addr] = len(*out)
		*out = append(*out, qm)
		return nil
	})
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
