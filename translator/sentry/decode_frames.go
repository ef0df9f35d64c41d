package sentry

import "github.com/sentryprofile/otelcol-sentryprofile/translator/internal/jsontext"

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

// Canonical frame keys seen so far in a frame (profileDecoder.frameKeys),
// so that their aliases do not override them.
const (
	seenFunction = 1 << iota
	seenFilename
	seenLineno
	seenColno
	seenSymbolAddr
)

// frame decodes one frame object. It is the hot path of frames not seen
// before, so it runs its own loop rather than object's closure.
func (d *profileDecoder) frame(f *Frame) error {
	s := &d.s
	if err := s.beginObject(); err != nil {
		return err
	}
	d.frameKeys = 0
	for n := 0; ; {
		key, ok, err := s.objectNext(&n)
		if err != nil || !ok {
			return err
		}
		if err := readField(d, f, frameFields, key); err != nil {
			return inField(err, string(key))
		}
	}
}

// frameFields are the keys of a frame; "name", "file", "line", "column"
// and "sym_addr" are aliases that apply when their canonical key is absent.
var frameFields = map[string]fieldReader[Frame]{
	"function":         canonicalString(func(f *Frame) *string { return &f.Function }, seenFunction),
	"name":             aliasString(func(f *Frame) *string { return &f.Function }, seenFunction),
	"raw_function":     stringField(func(f *Frame) *string { return &f.RawFunction }),
	"symbol":           stringField(func(f *Frame) *string { return &f.Symbol }),
	"module":           stringField(func(f *Frame) *string { return &f.Module }),
	"package":          stringField(func(f *Frame) *string { return &f.Package }),
	"filename":         canonicalString(func(f *Frame) *string { return &f.Filename }, seenFilename),
	"file":             aliasString(func(f *Frame) *string { return &f.Filename }, seenFilename),
	"abs_path":         stringField(func(f *Frame) *string { return &f.AbsPath }),
	"lineno":           canonicalLine(func(f *Frame) *uint32 { return &f.Lineno }, seenLineno),
	"line":             aliasLine(func(f *Frame) *uint32 { return &f.Lineno }, seenLineno),
	"colno":            canonicalLine(func(f *Frame) *uint32 { return &f.Colno }, seenColno),
	"column":           aliasLine(func(f *Frame) *uint32 { return &f.Colno }, seenColno),
	"in_app":           func(d *profileDecoder, f *Frame) (err error) { f.InApp, err = d.s.boolValue(); return err },
	"platform":         stringField(func(f *Frame) *string { return &f.Platform }),
	"instruction_addr": func(d *profileDecoder, f *Frame) (err error) { f.InstructionAddr, err = d.s.addrValue(); return err },
	"symbol_addr":      canonicalAddr(func(f *Frame) *uint64 { return &f.SymbolAddr }, seenSymbolAddr),
	"sym_addr":         aliasAddr(func(f *Frame) *uint64 { return &f.SymbolAddr }, seenSymbolAddr),
	"image_addr":       func(d *profileDecoder, f *Frame) (err error) { f.ImageAddr, err = d.s.addrValue(); return err },
	"addr_mode":        stringField(func(f *Frame) *string { return &f.AddrMode }),
	"status":           stringField(func(f *Frame) *string { return &f.Status }),
	"data":             func(d *profileDecoder, f *Frame) (err error) { f.Data, err = d.s.rawValue(); return err },
}

// canonical reads a canonical key's value with read into the field at,
// and notes the key as seen.
func canonical[V any](read func(*scanner) (V, error), at func(*Frame) *V, seen int) fieldReader[Frame] {
	return func(d *profileDecoder, f *Frame) (err error) {
		d.frameKeys |= seen
		*at(f), err = read(&d.s)
		return err
	}
}

// alias reads an alias's value with read, and keeps it in the field at
// unless its canonical key was seen.
func alias[V any](read func(*scanner) (V, error), at func(*Frame) *V, seen int) fieldReader[Frame] {
	return func(d *profileDecoder, f *Frame) error {
		v, err := read(&d.s)
		if d.frameKeys&seen == 0 {
			*at(f) = v
		}
		return err
	}
}

func canonicalString(at func(*Frame) *string, seen int) fieldReader[Frame] {
	return canonical((*scanner).stringValue, at, seen)
}

func aliasString(at func(*Frame) *string, seen int) fieldReader[Frame] {
	return alias((*scanner).stringValue, at, seen)
}

func canonicalLine(at func(*Frame) *uint32, seen int) fieldReader[Frame] {
	return canonical(lineValue, at, seen)
}

func aliasLine(at func(*Frame) *uint32, seen int) fieldReader[Frame] {
	return alias(lineValue, at, seen)
}

func canonicalAddr(at func(*Frame) *uint64, seen int) fieldReader[Frame] {
	return canonical((*scanner).addrValue, at, seen)
}

func aliasAddr(at func(*Frame) *uint64, seen int) fieldReader[Frame] {
	return alias((*scanner).addrValue, at, seen)
}

func lineValue(s *scanner) (uint32, error) {
	v, err := s.uintValue(32)
	return uint32(v), err
}
