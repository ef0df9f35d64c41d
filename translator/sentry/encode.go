package sentry

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/jsontext"
)

// AppendChunkJSON appends p to dst as a V2 `profile_chunk` JSON document
// (version "2", whatever p.Version says) and returns the extended slice.
//
// The output is deterministic and on one line: keys in a fixed order,
// thread_metadata, queue_metadata and measurements in slice order, no HTML
// escaping, floats in the shortest form that reads back to the same value
// (NaN and infinities, which JSON cannot hold, are written as null), and
// timestamps written from Unix nanoseconds as exact decimal seconds with
// trailing zeros trimmed (1724777211503779900 → 1724777211.5037799).
// Profile.Timestamp, when set, is written the same way. Zero and absent fields
// are omitted, except that profile.samples, stacks and frames are always
// present. Addresses are written as lower-case "0x…" hex, thread ids as
// strings, frame "data" verbatim (it must hold valid JSON, which
// DecodeProfile guarantees). Strings with invalid UTF-8 have each bad byte
// replaced with U+FFFD.
//
// Every field of the model is written, so DecodeProfile of the output equals
// p for any p that DecodeProfile produced from a version "2" payload.
func AppendChunkJSON(dst []byte, p *Profile) []byte {
	// Samples and stacks are most of a chunk: size the buffer for them
	// once rather than growing it through every power of two.
	w := chunkWriter{b: slices.Grow(dst, 80*len(p.Samples)+5*len(p.Stacks.FrameIndices)+200*len(p.Frames)+1024)}
	w.open('{')
	w.str("version", VersionV2)
	w.str("event_id", p.EventID)
	w.str("profiler_id", p.ProfilerID)
	w.str("chunk_id", p.ChunkID)
	w.str("platform", p.Platform)
	w.str("release", p.Release)
	w.str("environment", p.Environment)
	w.str("dist", p.Dist)
	if !p.Timestamp.IsZero() {
		w.name("timestamp")
		w.b = appendSeconds(w.b, p.Timestamp.Unix(), int64(p.Timestamp.Nanosecond()))
	}
	w.device(&p.Device)
	if p.OS != (OS{}) {
		w.object("os")
		w.str("name", p.OS.Name)
		w.str("version", p.OS.Version)
		w.str("build_number", p.OS.BuildNumber)
		w.close('}')
	}
	if p.Runtime != (Runtime{}) {
		w.object("runtime")
		w.str("name", p.Runtime.Name)
		w.str("version", p.Runtime.Version)
		w.close('}')
	}
	if p.ClientSDK != (ClientSDK{}) {
		w.object("client_sdk")
		w.str("name", p.ClientSDK.Name)
		w.str("version", p.ClientSDK.Version)
		w.close('}')
	}
	if len(p.DebugMeta.Images) > 0 {
		w.object("debug_meta")
		w.array("images")
		for i := range p.DebugMeta.Images {
			w.image(&p.DebugMeta.Images[i])
		}
		w.close(']')
		w.close('}')
	}
	if len(p.Transactions) > 0 {
		w.array("transactions")
		for i := range p.Transactions {
			w.transaction(&p.Transactions[i])
		}
		w.close(']')
	}
	if len(p.Measurements) > 0 {
		w.object("measurements")
		for i := range p.Measurements {
			w.measurement(&p.Measurements[i])
		}
		w.close('}')
	}

	w.object("profile")
	indices := newIndexText(max(p.Stacks.Len(), len(p.Frames)))
	w.array("samples")
	w.samples(p.Samples, indices)
	w.close(']')
	w.array("stacks")
	for i := 0; i < p.Stacks.Len(); i++ {
		w.element()
		w.b = append(w.b, '[')
		w.b = indices.appendList(w.b, p.Stacks.At(i))
		w.b = append(w.b, ']')
	}
	w.close(']')
	w.array("frames")
	for i := range p.Frames {
		w.frame(&p.Frames[i])
	}
	w.close(']')
	if len(p.ThreadMetadata) > 0 {
		w.object("thread_metadata")
		for i := range p.ThreadMetadata {
			tm := &p.ThreadMetadata[i]
			w.object(tm.ThreadID)
			w.str("name", tm.Name)
			if tm.HasPriority {
				w.name("priority")
				w.b = strconv.AppendInt(w.b, tm.Priority, 10)
			}
			w.close('}')
		}
		w.close('}')
	}
	if len(p.QueueMetadata) > 0 {
		w.object("queue_metadata")
		for i := range p.QueueMetadata {
			qm := &p.QueueMetadata[i]
			w.object(qm.Address)
			w.str("label", qm.Label)
			w.close('}')
		}
		w.close('}')
	}
	w.close('}')
	w.close('}')
	return w.b
}

// chunkWriter appends JSON, tracking whether the current object or array
// already has a member so that commas fall where they belong.
type chunkWriter struct {
	b []byte
	// nonEmpty has one entry per open object or array; the chunk layout
	// nests five deep at most (measurements.name.values[i]).
	nonEmpty [8]bool
	depth    int
}

func (w *chunkWriter) open(c byte) {
	w.b = append(w.b, c)
	w.nonEmpty[w.depth] = false
	w.depth++
}

func (w *chunkWriter) close(c byte) {
	w.b = append(w.b, c)
	w.depth--
}

// element starts a new member of the innermost object or array.
func (w *chunkWriter) element() {
	top := &w.nonEmpty[w.depth-1]
	if *top {
		w.b = append(w.b, ',')
	}
	*top = true
}

func (w *chunkWriter) key(k string) {
	w.element()
	w.b = jsontext.AppendString(w.b, k)
	w.b = append(w.b, ':')
}

// name is key for the field names of this file: plain ASCII, written
// without the escaping scan, which frames with a dozen fields each paid for
// every one.
func (w *chunkWriter) name(k string) {
	w.element()
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *chunkWriter) object(k string) {
	w.key(k)
	w.open('{')
}

func (w *chunkWriter) array(k string) {
	w.key(k)
	w.open('[')
}

// elementObject opens an object as the next array element.
func (w *chunkWriter) elementObject() {
	w.element()
	w.open('{')
}

func (w *chunkWriter) str(k, v string) {
	if v != "" {
		w.name(k)
		w.b = jsontext.AppendString(w.b, v)
	}
}

func (w *chunkWriter) uint(k string, v uint64) {
	if v != 0 {
		w.name(k)
		w.b = strconv.AppendUint(w.b, v, 10)
	}
}

func (w *chunkWriter) addr(k string, v uint64) {
	if v != 0 {
		w.name(k)
		w.b = append(w.b, `"0x`...)
		w.b = strconv.AppendUint(w.b, v, 16)
		w.b = append(w.b, '"')
	}
}

func (w *chunkWriter) boolean(k string, v OptionalBool) {
	if v.Set() {
		w.name(k)
		w.b = strconv.AppendBool(w.b, v.True())
	}
}

func (w *chunkWriter) nanos(k string, v int64) {
	if v != 0 {
		w.name(k)
		w.b = appendNanos(w.b, v)
	}
}

func (w *chunkWriter) device(d *Device) {
	if *d == (Device{}) {
		return
	}
	w.object("device")
	w.str("architecture", d.Architecture)
	w.boolean("is_emulator", d.IsEmulator)
	w.str("locale", d.Locale)
	w.str("manufacturer", d.Manufacturer)
	w.str("model", d.Model)
	w.str("classification", d.Classification)
	w.close('}')
}

func (w *chunkWriter) image(img *Image) {
	w.elementObject()
	w.str("type", img.Type)
	w.str("code_file", img.CodeFile)
	w.str("code_id", img.CodeID)
	w.str("debug_id", img.DebugID)
	w.str("debug_file", img.DebugFile)
	w.str("uuid", img.UUID)
	w.str("arch", img.Arch)
	w.addr("image_addr", img.ImageAddr)
	w.addr("image_vmaddr", img.ImageVMAddr)
	w.uint("image_size", img.ImageSize)
	w.close('}')
}

func (w *chunkWriter) transaction(t *Transaction) {
	w.elementObject()
	w.str("id", t.ID)
	w.str("name", t.Name)
	w.str("trace_id", t.TraceID)
	w.str("segment_id", t.SegmentID)
	w.str("active_thread_id", t.ActiveThreadID)
	w.uint("relative_start_ns", t.RelativeStartNS)
	w.uint("relative_end_ns", t.RelativeEndNS)
	w.close('}')
}

func (w *chunkWriter) measurement(m *Measurement) {
	w.object(m.Name)
	w.str("unit", m.Unit)
	w.array("values")
	for i := range m.Values {
		v := &m.Values[i]
		w.elementObject()
		w.uint("elapsed_since_start_ns", v.ElapsedSinceStartNS)
		w.nanos("timestamp", v.Timestamp)
		w.name("value")
		w.b = appendFloat(w.b, v.Value)
		w.close('}')
	}
	w.close(']')
	w.close('}')
}

// samples writes the elements of profile.samples. It is the bulk of a
// chunk, so it appends the fixed parts directly instead of going through
// name(), and reuses text that repeats from sample to sample: the
// thread_id member of each thread, and the timestamp, which SDKs take once
// for all threads of one tick.
func (w *chunkWriter) samples(samples []Sample, indices indexText) {
	b := w.b
	var threads threadIDTexts
	var ts timestampText
	for i := range samples {
		s := &samples[i]
		if i > 0 {
			b = append(b, `,{"stack_id":`...)
		} else {
			b = append(b, `{"stack_id":`...)
		}
		b = indices.append(b, s.StackID)
		if s.ThreadID != "" {
			b = append(b, threads.get(s.ThreadID)...)
		}
		if s.ElapsedSinceStartNS != 0 {
			b = append(b, `,"elapsed_since_start_ns":`...)
			b = strconv.AppendUint(b, s.ElapsedSinceStartNS, 10)
		}
		if s.Timestamp != 0 {
			b = append(b, ts.get(s.Timestamp)...)
		}
		if s.QueueAddress != "" {
			b = append(b, `,"queue_address":`...)
			b = jsontext.AppendString(b, s.QueueAddress)
		}
		if s.State != "" {
			b = append(b, `,"state":`...)
			b = jsontext.AppendString(b, s.State)
		}
		b = append(b, '}')
	}
	if len(samples) > 0 {
		w.nonEmpty[w.depth-1] = true
	}
	w.b = b
}

// threadIDTexts holds the `,"thread_id":"…"` text of each thread of a
// chunk. Samples of one tick come thread after thread in the same order
// tick after tick, so the thread after the last one found is tried first.
type threadIDTexts struct {
	ids   []string
	texts [][]byte
	byID  map[string]int // for chunks with many threads
	last  int
}

// threadScanMax is the number of threads found by a linear scan before
// they are hashed.
const threadScanMax = 8

func (t *threadIDTexts) get(id string) []byte {
	if n := len(t.ids); n > 0 {
		if next := (t.last + 1) % n; t.ids[next] == id {
			t.last = next
			return t.texts[next]
		}
		if t.ids[t.last] == id {
			return t.texts[t.last]
		}
	}
	i, ok := t.find(id)
	if !ok {
		i = len(t.ids)
		t.ids = append(t.ids, id)
		t.texts = append(t.texts, jsontext.AppendString([]byte(`,"thread_id":`), id))
		if t.byID != nil {
			t.byID[id] = i
		} else if len(t.ids) > threadScanMax {
			t.byID = make(map[string]int, 2*len(t.ids))
			for j, known := range t.ids {
				t.byID[known] = j
			}
		}
	}
	t.last = i
	return t.texts[i]
}

func (t *threadIDTexts) find(id string) (int, bool) {
	if t.byID != nil {
		i, ok := t.byID[id]
		return i, ok
	}
	for i, known := range t.ids {
		if known == id {
			return i, true
		}
	}
	return 0, false
}

// timestampText is the `,"timestamp":…` text of the last sample timestamp
// written, and the text of its whole seconds, which the next timestamps
// usually share.
type timestampText struct {
	ns    int64
	text  [48]byte
	n     int // length of the text; 0 before the first timestamp
	whole uint64
	// wholeEnd is where the text of whole ends; 0 when it is not there.
	wholeEnd int
}

const timestampKey = `,"timestamp":`

// get returns ns as appendNanos writes it, after the member's key.
func (c *timestampText) get(ns int64) []byte {
	if c.n > 0 && ns == c.ns {
		return c.text[:c.n]
	}
	c.ns = ns
	key := copy(c.text[:], timestampKey)
	if ns < 0 {
		c.wholeEnd = 0
		c.n = len(appendNanos(c.text[:key], ns))
		return c.text[:c.n]
	}
	u := uint64(ns)
	whole, frac := u/1e9, u%1e9
	if c.wholeEnd == 0 || whole != c.whole {
		c.whole = whole
		c.wholeEnd = len(strconv.AppendUint(c.text[:key], whole, 10))
	}
	c.n = len(appendFraction(c.text[:c.wholeEnd], frac))
	return c.text[:c.n]
}

// indexText is the decimal text of the indices a chunk is full of (stack
// ids, frame indices), each followed by a comma and packed into a word with
// its length in the top byte: writing one is a store and an add. It covers
// the indices below the larger of the stack and frame counts; others, which
// only an invalid profile has, are formatted.
type indexText []uint64

// maxIndexText bounds the table: six digits and a comma fit in the seven
// bytes below the length.
const maxIndexText = 1_000_000

func newIndexText(n int) indexText {
	t := make(indexText, min(n, maxIndexText))
	for i := range t {
		if i < 10 {
			t[i] = uint64('0'+i) | ','<<8 | 2<<56
			continue
		}
		// The text of i is the text of i/10 followed by one digit.
		prefix := t[i/10]
		k := prefix>>56 - 1 // digits of i/10
		digits := prefix & (1<<(8*k) - 1)
		t[i] = digits | uint64('0'+i%10)<<(8*k) | ','<<(8*(k+1)) | (k+2)<<56
	}
	return t
}

// append writes v without the comma.
func (t indexText) append(b []byte, v int64) []byte {
	if uint64(v) >= uint64(len(t)) {
		return strconv.AppendInt(b, v, 10)
	}
	word := t[v]
	n := len(b)
	b = slices.Grow(b, 8)[:n+8]
	binary.LittleEndian.PutUint64(b[n:], word)
	return b[:n+int(word>>56)-1]
}

// appendList writes vs separated by commas.
func (t indexText) appendList(b []byte, vs []int64) []byte {
	if len(vs) == 0 {
		return b
	}
	// Each word is stored whole: room for eight bytes per index.
	b = slices.Grow(b, 8*len(vs))
	n := len(b)
	buf := b[:cap(b)]
	for i, v := range vs {
		if uint64(v) < uint64(len(t)) {
			word := t[v]
			binary.LittleEndian.PutUint64(buf[n:], word)
			n += int(word >> 56)
			continue
		}
		b = append(strconv.AppendInt(buf[:n], v, 10), ',')
		b = slices.Grow(b, 8*(len(vs)-i))
		n = len(b)
		buf = b[:cap(b)]
	}
	return buf[:n-1] // without the last comma
}

func (w *chunkWriter) frame(f *Frame) {
	w.elementObject()
	w.str("function", f.Function)
	w.str("raw_function", f.RawFunction)
	w.str("symbol", f.Symbol)
	w.str("module", f.Module)
	w.str("package", f.Package)
	w.str("filename", f.Filename)
	w.str("abs_path", f.AbsPath)
	w.uint("lineno", uint64(f.Lineno))
	w.uint("colno", uint64(f.Colno))
	w.boolean("in_app", f.InApp)
	w.str("platform", f.Platform)
	w.addr("instruction_addr", f.InstructionAddr)
	w.addr("symbol_addr", f.SymbolAddr)
	w.addr("image_addr", f.ImageAddr)
	w.str("addr_mode", f.AddrMode)
	w.str("status", f.Status)
	if f.Data != "" {
		w.name("data")
		w.b = append(w.b, f.Data...)
	}
	w.close('}')
}

// appendNanos writes Unix nanoseconds as exact decimal seconds, trailing
// zeros of the fraction trimmed.
func appendNanos(b []byte, ns int64) []byte {
	u := uint64(ns)
	if ns < 0 {
		b = append(b, '-')
		u = -u
	}
	return appendSecondsFraction(b, u/1e9, u%1e9)
}

// appendSeconds writes sec+nsec/1e9 (nsec in [0, 1e9), as time.Time gives
// them) as exact decimal seconds.
func appendSeconds(b []byte, sec, nsec int64) []byte {
	if sec >= 0 {
		return appendSecondsFraction(b, uint64(sec), uint64(nsec))
	}
	// -2 s + 0.5 s is -1.5 s: borrow one second for the fraction.
	b = append(b, '-')
	whole := uint64(-(sec + 1))
	if nsec == 0 {
		return appendSecondsFraction(b, whole+1, 0)
	}
	return appendSecondsFraction(b, whole, uint64(1e9-nsec))
}

func appendSecondsFraction(b []byte, whole, frac uint64) []byte {
	return appendFraction(strconv.AppendUint(b, whole, 10), frac)
}

// appendFraction writes frac nanoseconds as a decimal fraction of a second,
// trailing zeros trimmed; nothing when frac is 0.
func appendFraction(b []byte, frac uint64) []byte {
	if frac == 0 {
		return b
	}
	var digits [10]byte
	digits[0] = '.'
	for i := 9; i >= 1; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 10
	for digits[n-1] == '0' {
		n--
	}
	return append(b, digits[:n]...)
}

// appendFloat writes f as encoding/json does: the shortest representation
// that parses back to f, in exponent form only for very large or very small
// magnitudes.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// Shorten e-09 to e-9, as encoding/json does.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
