package sentry

import (
	"bytes"
	"encoding/binary"
)

// The hot arrays: samples and stacks are most of every payload, so they get
// allocation-free fast paths for the compact shape SDKs write, backed by the
// general scanner for everything else.

// samples decodes "profile.samples", the bulk of every payload: one pass, no
// allocation per sample beyond the amortized growth of the slice.
func (d *profileDecoder) samples(out *[]Sample) error {
	s := &d.s
	if isNull, err := s.null(); err != nil || isNull {
		return err
	}
	samples := *out
	if err := s.beginArray(); err != nil {
		return err
	}
	defer func() { *out = samples }()
	estimated := false
	for n := 0; ; {
		ok, err := s.arrayNext(&n)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		var compact bool
		if samples, compact = s.compactSamples(samples, &estimated, &n); compact {
			continue
		}
		smp := &samples[len(samples)-1]
		if err := d.sample(smp); err != nil {
			return inElement(err, n-1)
		}
	}
}

// compactSamples appends the sample at s.pos and those after it while
// they have the compact shape (compactSample) and follow one another
// without space (`},{`), counting them in n: a run of them, most of a
// payload, costs no arrayNext per sample. It returns true when the last
// one read was compact (s.pos then at what follows it), or false with the
// sample that was not appended, zero, and s.pos at its start, for the
// general path.
func (s *scanner) compactSamples(samples []Sample, estimated *bool, n *int) ([]Sample, bool) {
	for {
		if len(samples) == cap(samples) {
			// Sizing the slice once saves the regrowth copies of what is
			// most of the decoded profile. The '{' up to the array's end
			// in compact form count its samples closely; the bound keeps
			// a payload whose strings are full of braces from reserving
			// more than its own size. A Decoder's kept memory usually
			// holds the payload: then nothing is counted.
			samples = growEstimated(samples, estimated, s.data[s.pos:], "}]", '{', minSampleBytes)
		}
		samples = append(samples, Sample{})
		smp := &samples[len(samples)-1]
		start := s.pos
		if !s.compactSample(smp) {
			s.pos, *smp = start, Sample{}
			return samples, false
		}
		if i := s.pos; i+1 >= len(s.data) || s.data[i] != ',' || s.data[i+1] != '{' {
			return samples, true
		}
		s.pos++
		*n++
	}
}

func (d *profileDecoder) sample(smp *Sample) error {
	s := &d.s
	if err := s.beginObject(); err != nil {
		return err
	}
	for n := 0; ; {
		key, unknown, ok, err := s.sampleKey(&n)
		if err != nil || !ok {
			return err
		}
		switch key {
		case sampleStackID:
			smp.StackID, err = s.int64Value()
		case sampleThreadID:
			smp.ThreadID, err = s.idValue()
		case sampleTimestamp:
			smp.Timestamp, err = s.nanosValue()
		case sampleElapsed:
			smp.ElapsedSinceStartNS, err = s.uintValue(64)
		case sampleQueueAddress:
			smp.QueueAddress, err = s.recentStringValue()
		case sampleState:
			smp.State, err = s.recentStringValue()
		default:
			err = s.skipValue()
		}
		if err != nil {
			if key == sampleOther {
				return inField(err, string(unknown))
			}
			return inField(err, sampleKeyNames[key])
		}
	}
}

// compactSample reads the sample object at s.pos when it has the compact
// shape SDKs write: no whitespace, only known keys, stack_id a small integer,
// thread_id a plain string or an integer, timestamp a plain decimal,
// elapsed_since_start_ns an integer or integer string, queue_address and
// state plain strings. It works on a local index, which the compiler keeps in
// a register. On anything else it returns false, leaving s.pos and smp for
// the caller to reset before decoding the sample with the general path, which
// also reports errors.
func (s *scanner) compactSample(smp *Sample) bool {
	data := s.data
	i := s.pos
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i++
	for {
		key, n := compactSampleKey(data[i:])
		i += n
		var ok bool
		switch key {
		case sampleOther:
			return false
		case sampleStackID:
			smp.StackID, i, ok = compactIndex(data, i)
		case sampleTimestamp:
			smp.Timestamp, i, ok = s.compactTime(i)
		case sampleThreadID:
			smp.ThreadID, i, ok = s.compactID(i)
		case sampleElapsed:
			var v int64
			if i < len(data) && data[i] == '"' {
				if v, i, ok = fastIndex(data, i+1); ok && i < len(data) && data[i] == '"' {
					i++
				} else {
					ok = false
				}
			} else {
				v, i, ok = fastIndex(data, i)
			}
			smp.ElapsedSinceStartNS = uint64(v)
		case sampleQueueAddress:
			smp.QueueAddress, i, ok = s.compactString(i)
		case sampleState:
			smp.State, i, ok = s.compactString(i)
		}
		if !ok || i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i++
		case '}':
			s.pos = i + 1
			return true
		default:
			return false
		}
	}
}

// compactSampleKey recognizes a known sample key at the start of rest as
// the compact shape writes it, quoted and followed by its colon: its kind
// and its length with the colon, or sampleOther. Each comparison with a
// constant of up to 16 bytes compiles to one or two word loads: about 30
// instructions a key, where matchSampleKey (two calls and a space skip)
// took 75, a third of a compact sample's decoding.
func compactSampleKey(rest []byte) (key, n int) {
	switch {
	case len(rest) >= 11 && string(rest[:11]) == `"stack_id":`:
		return sampleStackID, 11
	case len(rest) >= 12 && string(rest[:12]) == `"thread_id":`:
		return sampleThreadID, 12
	case len(rest) >= 12 && string(rest[:12]) == `"timestamp":`:
		return sampleTimestamp, 12
	case len(rest) >= 25 && string(rest[:25]) == `"elapsed_since_start_ns":`:
		return sampleElapsed, 25
	case len(rest) >= 16 && string(rest[:16]) == `"queue_address":`:
		return sampleQueueAddress, 16
	case len(rest) >= 8 && string(rest[:8]) == `"state":`:
		return sampleState, 8
	}
	return sampleOther, 0
}

// compactTime reads a sample's timestamp at data[i:] (fastNanos). SDKs
// that sample every thread at once write one time for all the samples of
// a tick: text equal to the last time read, ended by a delimiter, is that
// time, taken without parsing it again. The last eight bytes are compared
// first, as they are where consecutive times differ.
func (s *scanner) compactTime(i int) (ns int64, end int, ok bool) {
	data, last := s.data, s.lastTime
	if n := len(last); n >= 8 && i+n < len(data) &&
		binary.LittleEndian.Uint64(data[i+n-8:]) == binary.LittleEndian.Uint64(last[n-8:]) &&
		string(data[i:i+n-8]) == string(last[:n-8]) && isDelimiter(data[i+n]) {
		return s.lastNanos, i + n, true
	}
	if ns, end, ok = fastNanos(data, i); ok {
		s.lastTime, s.lastNanos = data[i:end], ns
	}
	return ns, end, ok
}

// compactID reads a thread id at data[i:] written as a plain ASCII string or
// an integer, interning it; ok=false leaves it to the general path.
func (s *scanner) compactID(i int) (id string, end int, ok bool) {
	data := s.data
	if i < len(data) && data[i] != '"' {
		_, end, ok := fastIndex(data, i)
		if !ok {
			return "", 0, false
		}
		return s.internRecent(data[i:end]), end, true
	}
	return s.compactString(i)
}

// compactString reads a plain ASCII string (no escapes) at data[i:],
// interning it; ok=false leaves anything else to the general path.
func (s *scanner) compactString(i int) (str string, end int, ok bool) {
	data := s.data
	if i >= len(data) || data[i] != '"' {
		return "", 0, false
	}
	start := i + 1
	// Samples cycle through their threads in order: try the id predicted
	// to come next before scanning for the closing quote. The ids fill
	// the ring from its first slot: past the last one, the cycle starts
	// over there.
	slot := (s.hit + 1) % len(s.recent)
	if s.recent[slot] == "" {
		slot = 0
	}
	if r := s.recent[slot]; r != "" {
		if end := start + len(r); end < len(data) && data[end] == '"' && string(data[start:end]) == r {
			s.hit = slot
			return r, end + 1, true
		}
	}
	j := start
	for j < len(data) && !needsCare[data[j]] {
		j++
	}
	if j >= len(data) || data[j] != '"' {
		return "", 0, false
	}
	raw := data[start:j]
	if r, ok := s.findRecent(raw); ok {
		return r, j + 1, true
	}
	return s.internRecent(raw), j + 1, true
}

// Keys of a sample object.
const (
	sampleOther = iota
	sampleStackID
	sampleThreadID
	sampleTimestamp
	sampleElapsed
	sampleQueueAddress
	sampleState
)

var sampleKeyNames = [...]string{
	sampleOther:        "",
	sampleStackID:      "stack_id",
	sampleThreadID:     "thread_id",
	sampleTimestamp:    "timestamp",
	sampleElapsed:      "elapsed_since_start_ns",
	sampleQueueAddress: "queue_address",
	sampleState:        "state",
}

// sampleKey is objectNext for sample objects, the most repeated object of a
// payload: it recognises the known keys by comparing the input with their
// quoted spelling, and falls back to objectNext for anything else (escaped
// or unknown keys), whose text it returns as unknown.
func (s *scanner) sampleKey(n *int) (key int, unknown []byte, ok bool, err error) {
	c := s.peek()
	if *n > 0 && c == ',' {
		comma := s.pos
		s.pos++
		if s.peek() == '"' {
			if k := s.matchSampleKey(); k != sampleOther {
				*n++
				return k, nil, true, nil
			}
		}
		// Let objectNext report or read what follows the comma.
		s.pos = comma
	} else if *n == 0 && c == '"' {
		if k := s.matchSampleKey(); k != sampleOther {
			*n++
			return k, nil, true, nil
		}
	}
	raw, ok, err := s.objectNext(n)
	if err != nil || !ok {
		return sampleOther, nil, ok, err
	}
	for k, name := range sampleKeyNames {
		if k != sampleOther && string(raw) == name {
			return k, nil, true, nil
		}
	}
	return sampleOther, raw, true, nil
}

// matchSampleKey consumes a known sample key and its colon when the input at
// s.pos spells one exactly.
func (s *scanner) matchSampleKey() int {
	rest := s.data[s.pos:]
	k, n := sampleKeyAt(rest)
	if k == sampleOther {
		return sampleOther
	}
	n = skipSpace(rest, n)
	if n >= len(rest) || rest[n] != ':' {
		return sampleOther
	}
	s.pos += n + 1
	return k
}

// sampleKeyAt recognizes a known sample key, quoted, at the start of rest:
// its kind and its length, or sampleOther.
func sampleKeyAt(rest []byte) (k, n int) {
	if len(rest) < 2 {
		return sampleOther, 0
	}
	// Comparisons with constant strings compile to a few wide loads.
	switch rest[1] {
	case 's':
		if len(rest) >= 10 && string(rest[:10]) == `"stack_id"` {
			return sampleStackID, 10
		} else if len(rest) >= 7 && string(rest[:7]) == `"state"` {
			return sampleState, 7
		}
	case 't':
		if len(rest) >= 11 && string(rest[:11]) == `"timestamp"` {
			return sampleTimestamp, 11
		} else if len(rest) >= 11 && string(rest[:11]) == `"thread_id"` {
			return sampleThreadID, 11
		}
	case 'e':
		if len(rest) >= 24 && string(rest[:24]) == `"elapsed_since_start_ns"` {
			return sampleElapsed, 24
		}
	case 'q':
		if len(rest) >= 15 && string(rest[:15]) == `"queue_address"` {
			return sampleQueueAddress, 15
		}
	}
	return sampleOther, 0
}

// skipSpace is the end of the JSON whitespace at data[i:].
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t') {
		i++
	}
	return i
}

// stacks decodes "profile.stacks" into the flat Stacks storage.
func (d *profileDecoder) stacks(st *Stacks) error {
	s := &d.s
	if isNull, err := s.null(); err != nil || isNull {
		return err
	}
	offsets, indices := st.Offsets, st.FrameIndices
	estimated := false
	if err := s.beginArray(); err != nil {
		return err
	}
	defer func() {
		st.Offsets, st.FrameIndices = offsets, indices
		if len(st.Offsets) == 0 {
			st.Offsets = nil
		}
		if len(st.FrameIndices) == 0 {
			st.FrameIndices = nil
		}
	}()
	for n := 0; ; {
		ok, err := s.arrayNext(&n)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		offsets = grow(offsets)
		offsets = append(offsets, len(indices))
		if !estimated && cap(indices)-len(indices) < stackIndicesSlack {
			// As for samples: the separators up to the array's compact
			// end bound the indices, and every index takes at least two
			// bytes. Counted once, when the memory at hand runs short.
			estimated = true
			// The room of one window of frameIndexRun beyond them spares
			// it a regrowth at the array's end.
			if n := estimateElements(s.data[s.pos:], "]]", ',', 2) + 1 + windowIndices; cap(indices)-len(indices) < n {
				indices = append(make([]int64, 0, len(indices)+n), indices...)
			}
		}
		if indices, err = s.stackIndices(indices); err != nil {
			return inElement(err, n-1)
		}
	}
}

// stackIndices appends the frame indices of one stack. Stacks hold most of
// the numbers of a payload, so compact non-negative indices ("[0,12,7]") are
// read 64 bytes at a time (frameIndexRun), then, near the payload's end or
// for long numbers, by a loop per index; anything else (whitespace, signs,
// malformed numbers) continues in the general loop from the last complete
// index.
func (s *scanner) stackIndices(indices []int64) ([]int64, error) {
	if err := s.beginArray(); err != nil {
		return indices, err
	}
	data := s.data
	first := len(indices)
	indices, i, done := frameIndexRun(data, s.pos, indices)
	if done {
		s.pos = i
		s.depth--
		return indices, nil
	}
	// Where the general loop would continue (the ',' after the last index
	// read), and the indices read.
	resume, count := s.pos, len(indices)-first
	if count > 0 {
		resume = i - 1
	}
	for i < len(data) {
		c := data[i]
		if c == ']' && count == 0 {
			s.pos = i + 1
			s.depth--
			return indices, nil
		}
		// Indices of up to seven digits are read eight bytes at a time
		// (digitRun); longer ones, leading zeros and the payload's last
		// bytes go through fastIndex, anything else to the general loop.
		var v int64
		ok := false
		if i+8 <= len(data) {
			u, n := digitRun(data, i)
			if ok = n > 0 && n < 8 && (c != '0' || n == 1); ok {
				v, i = int64(u), i+n
			}
		}
		if !ok {
			v, i, ok = fastIndex(data, i)
		}
		if !ok || i >= len(data) || (data[i] != ',' && data[i] != ']') {
			break
		}
		indices = grow(indices)
		indices = append(indices, v)
		count++
		if data[i] == ']' {
			s.pos = i + 1
			s.depth--
			return indices, nil
		}
		resume = i
		i++
	}
	s.pos = resume
	for m := count; ; {
		more, err := s.arrayNext(&m)
		if err != nil {
			return indices, inElement(err, m)
		}
		if !more {
			return indices, nil
		}
		v, err := s.int64Value()
		if err != nil {
			return indices, inElement(err, m-1)
		}
		indices = grow(indices)
		indices = append(indices, v)
	}
}

// minSampleBytes is less than the shortest sample object an SDK writes
// (`{"stack_id":0,"thread_id":"1","timestamp":1.5}` is 46 bytes).
const minSampleBytes = 40

// stackIndicesSlack is how close to full the frame indices' memory may run
// before the rest of "stacks" is counted: stacks deeper than it regrow.
const stackIndicesSlack = 512

// growEstimated makes room in a full s for one more element. The first
// time (*estimated false), it sizes s for the rest of the array, whose
// text starts at rest, as estimateElements counts it; after that, or with
// no estimate, it doubles: a payload that misleads the estimate costs one
// scan and the doublings, never a scan per growth.
func growEstimated[T any](s []T, estimated *bool, rest []byte, end string, sep byte, minBytes int) []T {
	if !*estimated {
		*estimated = true
		if n := estimateElements(rest, end, sep, minBytes); n > 0 {
			return append(make([]T, 0, len(s)+n), s...)
		}
	}
	return grow(s)
}

// estimateElements estimates the elements of the array at the start of data
// from the occurrences of sep before the first end (the array's last
// characters in compact JSON), bounded by one element per minBytes. It
// returns 0 when end does not occur: the array then grows as it is read.
func estimateElements(data []byte, end string, sep byte, minBytes int) int {
	n := bytes.Index(data, []byte(end))
	if n < 0 {
		return 0
	}
	return min(bytes.Count(data[:n], []byte{sep}), n/minBytes)
}

// grow makes room for one more element, doubling the capacity: append's
// growth slows to 1.25x for large slices, which for the hot arrays means
// copying them several times over.
func grow[T any](s []T) []T {
	if len(s) < cap(s) {
		return s
	}
	n := make([]T, len(s), max(2*cap(s), 64))
	copy(n, s)
	return n
}
