package sentry

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"
)

// jsonNode is a JSON value for the payload generators: the generators pick
// types and spellings (numbers or strings, hex or decimal, escapes, nulls,
// unknown keys), and write renders them with random whitespace.
type jsonNode interface{}

type (
	jsonObject []jsonMember
	jsonArray  []jsonNode
	jsonString string
	jsonNumber string // number text, written as is
	jsonRaw    string // any JSON text, written as is
)

type jsonMember struct {
	key   string
	value jsonNode
}

// jsonWriter renders nodes. With a nil rng the output is compact and plain.
type jsonWriter struct {
	rng *rand.Rand
	b   strings.Builder
}

func (w *jsonWriter) space() {
	if w.rng != nil && w.rng.IntN(8) == 0 {
		w.b.WriteString([]string{" ", "\n", "\t", "\r\n  "}[w.rng.IntN(4)])
	}
}

func (w *jsonWriter) write(n jsonNode) {
	w.space()
	switch v := n.(type) {
	case nil:
		w.b.WriteString("null")
	case bool:
		w.b.WriteString(strconv.FormatBool(v))
	case jsonNumber:
		w.b.WriteString(string(v))
	case jsonRaw:
		w.b.WriteString(string(v))
	case jsonString:
		w.str(string(v))
	case jsonObject:
		w.b.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.space()
			w.str(m.key)
			w.space()
			w.b.WriteByte(':')
			w.write(m.value)
		}
		w.space()
		w.b.WriteByte('}')
	case jsonArray:
		w.b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.write(e)
		}
		w.space()
		w.b.WriteByte(']')
	default:
		panic(fmt.Sprintf("jsonWriter: unexpected %T", n))
	}
	w.space()
}

// str writes s quoted; with an rng it escapes some characters that need no
// escaping (\u0041, \/) and writes non-BMP runes as surrogate pairs.
func (w *jsonWriter) str(s string) {
	w.b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		raw := s[i : i+size]
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			// Invalid UTF-8 is written raw: both decoders must replace it.
			w.b.WriteString(raw)
		case r == '"' || r == '\\':
			w.b.WriteByte('\\')
			w.b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&w.b, `\u%04x`, r)
		case w.rng != nil && w.rng.IntN(10) == 0:
			if r > 0xFFFF {
				r1, r2 := utf16Pair(r)
				fmt.Fprintf(&w.b, `\u%04X\u%04x`, r1, r2)
			} else if r == '/' {
				w.b.WriteString(`\/`)
			} else {
				fmt.Fprintf(&w.b, `\u%04x`, r)
			}
		default:
			w.b.WriteString(raw)
		}
	}
	w.b.WriteByte('"')
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

func render(n jsonNode, rng *rand.Rand) []byte {
	w := jsonWriter{rng: rng}
	w.write(n)
	return []byte(w.b.String())
}

// payloadGen builds random V1 and V2 payloads that exercise every accepted
// spelling of every field.
type payloadGen struct {
	rng *rand.Rand
}

var genStrings = []string{
	"", "main", "MainThread", "sentry.profiler.ThreadScheduler", "com.apple.main-thread",
	"/srv/app/run.py", "run.py", "__main__", "busy_hash", "handle <locals>", "naïve café",
	"日本語", "emoji 😀 pair", "quote \" backslash \\ slash /", "tab\tnew\nline", "\x01ctl",
	"bad \xff utf8", "trunc \xe2\x82", "\u2028line sep", "<html>&amp;",
}

func (g *payloadGen) pick(options ...string) string { return options[g.rng.IntN(len(options))] }

func (g *payloadGen) text() jsonNode { return jsonString(genStrings[g.rng.IntN(len(genStrings))]) }

// optional returns nil (JSON null), the value, or leaves the key out.
func (g *payloadGen) add(obj *jsonObject, key string, value jsonNode) {
	switch g.rng.IntN(10) {
	case 0:
		return
	case 1:
		*obj = append(*obj, jsonMember{key, nil})
	default:
		*obj = append(*obj, jsonMember{key, value})
	}
}

// unknown adds keys the decoder must skip.
func (g *payloadGen) unknown(obj *jsonObject) {
	if g.rng.IntN(3) != 0 {
		return
	}
	junk := []jsonNode{
		jsonNumber("-12.5e-3"), jsonString("x"), true, false, nil,
		jsonObject{{"a", jsonArray{jsonNumber("1"), jsonObject{{"b", jsonArray{}}}}}},
		jsonArray{jsonString("\u00e9"), jsonNumber("0")},
	}
	*obj = append(*obj, jsonMember{g.pick("organization_id", "received", "retention_days", "transaction_tags", "zz"), junk[g.rng.IntN(len(junk))]})
}

func (g *payloadGen) uintNode(v uint64) jsonNode {
	if g.rng.IntN(2) == 0 {
		return jsonString(strconv.FormatUint(v, 10))
	}
	return jsonNumber(strconv.FormatUint(v, 10))
}

func (g *payloadGen) addrNode(v uint64) jsonNode {
	switch g.rng.IntN(4) {
	case 0:
		return jsonString(fmt.Sprintf("0x%016x", v))
	case 1:
		return jsonString(fmt.Sprintf("0X%X", v))
	case 2:
		return jsonString(strconv.FormatUint(v, 10))
	}
	return jsonNumber(strconv.FormatUint(v, 10))
}

func (g *payloadGen) idNode(v uint64) jsonNode {
	if g.rng.IntN(2) == 0 {
		return jsonNumber(strconv.FormatUint(v, 10))
	}
	return jsonString(strconv.FormatUint(v, 10))
}

// secondsNode writes seconds since the epoch in the spellings SDKs and
// hand-written payloads use: plain decimals with 0 to 12 fraction digits,
// exponent notation, or a numeric string.
func (g *payloadGen) secondsNode() jsonNode {
	sec := 1_000_000_000 + g.rng.Int64N(1_000_000_000)
	digits := g.rng.IntN(13)
	frac := ""
	for range digits {
		frac += strconv.Itoa(g.rng.IntN(10))
	}
	text := strconv.FormatInt(sec, 10)
	if frac != "" {
		text += "." + frac
	}
	switch g.rng.IntN(6) {
	case 0:
		// 1724777211.5 → 1.7247772115e9
		mant := text[:1] + "." + strings.ReplaceAll(text[1:], ".", "")
		text = mant + g.pick("e9", "E+9", "e+09")
	case 1:
		return jsonString(text)
	}
	return jsonNumber(text)
}

func (g *payloadGen) uuid(dashed bool) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(g.rng.IntN(256))
	}
	s := fmt.Sprintf("%x", b[:])
	if dashed {
		s = strings.ToUpper(s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:])
	}
	return s
}

func (g *payloadGen) frame() jsonNode {
	var f jsonObject
	g.add(&f, g.pick("function", "name"), g.text())
	g.add(&f, "raw_function", g.text())
	g.add(&f, "symbol", g.text())
	g.add(&f, "module", g.text())
	g.add(&f, "package", g.text())
	g.add(&f, g.pick("filename", "file"), g.text())
	g.add(&f, "abs_path", g.text())
	g.add(&f, g.pick("lineno", "line"), jsonNumber(strconv.Itoa(g.rng.IntN(100000))))
	g.add(&f, g.pick("colno", "column"), jsonNumber(strconv.Itoa(g.rng.IntN(200))))
	g.add(&f, "in_app", g.rng.IntN(2) == 0)
	g.add(&f, "platform", jsonString(g.pick("python", "native", "java", "cocoa")))
	g.add(&f, "instruction_addr", g.addrNode(g.rng.Uint64()))
	g.add(&f, g.pick("symbol_addr", "sym_addr"), g.addrNode(g.rng.Uint64()>>g.rng.IntN(64)))
	g.add(&f, "image_addr", g.addrNode(uint64(g.rng.Uint32())<<12))
	g.add(&f, "addr_mode", jsonString("abs"))
	g.add(&f, "status", jsonString(g.pick("symbolicated", "missing")))
	g.add(&f, "data", jsonObject{{"symbolicator_status", jsonString("ok")}, {"n", jsonArray{jsonNumber("1"), jsonNumber("2.50")}}})
	g.unknown(&f)
	g.rng.Shuffle(len(f), func(i, j int) { f[i], f[j] = f[j], f[i] })
	return f
}

// payload returns a random payload of the given version with n samples.
func (g *payloadGen) payload(version string, n int) []byte {
	threads := []uint64{1, 259, 140203964491456, 18446744073709551615}
	var root jsonObject
	root = append(root, jsonMember{"version", jsonString(version)})
	nFrames := 1 + g.rng.IntN(12)
	nStacks := 1 + g.rng.IntN(8)

	var samples jsonArray
	for range n {
		var s jsonObject
		s = append(s, jsonMember{"stack_id", jsonNumber(strconv.Itoa(g.rng.IntN(nStacks)))})
		s = append(s, jsonMember{"thread_id", g.idNode(threads[g.rng.IntN(len(threads))])})
		if version == VersionV1 {
			s = append(s, jsonMember{"elapsed_since_start_ns", g.uintNode(g.rng.Uint64N(1 << 40))})
			g.add(&s, "queue_address", jsonString(fmt.Sprintf("0x%x", g.rng.Uint32())))
		} else {
			s = append(s, jsonMember{"timestamp", g.secondsNode()})
		}
		g.add(&s, "state", jsonString(g.pick("", "running", "blocked")))
		g.unknown(&s)
		g.rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
		samples = append(samples, s)
	}
	var stacks jsonArray
	for range nStacks {
		var st jsonArray
		for range g.rng.IntN(6) {
			st = append(st, jsonNumber(strconv.Itoa(g.rng.IntN(nFrames))))
		}
		stacks = append(stacks, st)
	}
	var frames jsonArray
	for range nFrames {
		frames = append(frames, g.frame())
	}
	threadMeta := jsonObject{}
	for _, t := range threads[:1+g.rng.IntN(len(threads))] {
		var tm jsonObject
		g.add(&tm, "name", g.text())
		g.add(&tm, "priority", jsonNumber(strconv.Itoa(g.rng.IntN(64)-10)))
		threadMeta = append(threadMeta, jsonMember{strconv.FormatUint(t, 10), tm})
	}
	profile := jsonObject{
		{"samples", samples},
		{"stacks", stacks},
		{"frames", frames},
		{"thread_metadata", threadMeta},
	}
	if version == VersionV1 {
		profile = append(profile, jsonMember{"queue_metadata", jsonObject{{"0x1", jsonObject{{"label", g.text()}}}}})
	}
	g.unknown(&profile)
	root = append(root, jsonMember{"profile", profile})

	g.add(&root, "platform", jsonString(g.pick("cocoa", "python", "node", "android")))
	g.add(&root, "release", g.text())
	g.add(&root, "environment", g.text())
	g.add(&root, "dist", jsonString("42"))
	var images jsonArray
	for range g.rng.IntN(3) {
		var img jsonObject
		g.add(&img, "type", jsonString(g.pick("macho", "elf", "proguard")))
		g.add(&img, "code_file", g.text())
		g.add(&img, "code_id", jsonString("abc"))
		g.add(&img, "debug_id", jsonString(g.uuid(true)))
		g.add(&img, "debug_file", g.text())
		g.add(&img, "uuid", jsonString(g.uuid(true)))
		g.add(&img, "arch", jsonString("arm64"))
		g.add(&img, "image_addr", g.addrNode(uint64(g.rng.Uint32())<<12))
		g.add(&img, "image_vmaddr", g.addrNode(0x100000000))
		g.add(&img, "image_size", g.uintNode(uint64(g.rng.Uint32())))
		g.unknown(&img)
		images = append(images, img)
	}
	g.add(&root, "debug_meta", jsonObject{{"images", images}})
	measurement := func() jsonNode {
		var values jsonArray
		for range g.rng.IntN(4) {
			var v jsonObject
			if version == VersionV1 {
				v = append(v, jsonMember{"elapsed_since_start_ns", g.uintNode(g.rng.Uint64N(1 << 35))})
			} else {
				v = append(v, jsonMember{"timestamp", g.secondsNode()})
			}
			v = append(v, jsonMember{"value", jsonNumber(g.pick("66", "0.5", "226.66665649414065", "1e-7", "-3", "13450656.0"))})
			values = append(values, v)
		}
		return jsonObject{{"unit", jsonString(g.pick("hz", "byte", "percent"))}, {"values", values}}
	}
	g.add(&root, "measurements", jsonObject{{"cpu_usage", measurement()}, {"frozen_frame_renders", measurement()}})

	if version == VersionV1 {
		g.add(&root, g.pick("event_id", "profile_id"), jsonString(g.uuid(g.rng.IntN(2) == 0)))
		g.add(&root, "timestamp", jsonString(g.pick("2022-09-01T09:45:00.000Z", "2025-05-19T13:47:00.482107Z", "2023-01-12T08:24:54.614+02:00")))
		g.add(&root, "device", jsonObject{
			{"architecture", jsonString(g.pick("arm64e", "x86_64"))},
			{"is_emulator", g.rng.IntN(2) == 0},
			{"locale", jsonString("en_US")},
			{"manufacturer", jsonString("Apple")},
			{"model", jsonString("iPhone14,3")},
			{"classification", jsonString("high")},
		})
		g.add(&root, "os", jsonObject{{"name", jsonString("iOS")}, {"version", jsonString("16.0")}, {"build_number", jsonString("19H253")}})
		g.add(&root, "runtime", jsonObject{{"name", jsonString("CPython")}, {"version", jsonString("3.11.7")}})
		txn := func() jsonNode {
			var t jsonObject
			g.add(&t, "id", jsonString(g.uuid(g.rng.IntN(2) == 0)))
			g.add(&t, "name", g.text())
			g.add(&t, "trace_id", jsonString(g.uuid(false)))
			g.add(&t, "segment_id", jsonString("bd2eb23da2beb459"))
			g.add(&t, "active_thread_id", g.idNode(threads[g.rng.IntN(len(threads))]))
			g.add(&t, "relative_start_ns", g.uintNode(g.rng.Uint64N(1000)))
			g.add(&t, "relative_end_ns", g.uintNode(1000+g.rng.Uint64N(1<<40)))
			g.unknown(&t)
			return t
		}
		switch g.rng.IntN(3) {
		case 0:
			root = append(root, jsonMember{"transaction", txn()})
		case 1:
			root = append(root, jsonMember{"transactions", jsonArray{txn(), txn()}})
		default:
			root = append(root, jsonMember{"transaction", txn()}, jsonMember{"transactions", jsonArray{txn()}})
		}
	} else {
		g.add(&root, "profiler_id", jsonString(g.uuid(g.rng.IntN(2) == 0)))
		g.add(&root, "chunk_id", jsonString(g.uuid(false)))
		g.add(&root, "client_sdk", jsonObject{{"name", jsonString("sentry.python")}, {"version", jsonString("2.68.0")}, {"packages", jsonArray{}}})
		g.add(&root, "timestamp", g.secondsNode())
	}
	g.unknown(&root)
	if g.rng.IntN(4) == 0 {
		// A repeated key: the last one wins, in both decoders.
		root = append(root, jsonMember{"environment", g.text()}, jsonMember{"environment", g.text()})
	}
	g.rng.Shuffle(len(root), func(i, j int) { root[i], root[j] = root[j], root[i] })
	return render(root, g.rng)
}

// largeChunk writes a realistic V2 chunk the way the Python and Node SDKs do
// (compact, float timestamps, string thread ids): nSamples samples over
// nStacks stacks of nFrames frames. 48k/5k/2k gives about 5 MB.
func largeChunk(nSamples, nStacks, nFrames int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.Grow(nSamples*80 + nStacks*100 + nFrames*250)
	b.WriteString(`{"chunk_id":"a822bab2e2a44e1a9518437256b1773d","client_sdk":{"name":"sentry.python.flask","version":"2.68.0"},"platform":"python","profile":{"frames":[`)
	for i := range nFrames {
		if i > 0 {
			b.WriteByte(',')
		}
		mod := i % 97
		fmt.Fprintf(&b, `{"abs_path":"/srv/app/.venv/lib/python3.11/site-packages/pkg%d/module%d.py","module":"pkg%d.module%d","filename":"pkg%d/module%d.py","function":"Handler.method_%d","lineno":%d,"in_app":%t}`,
			mod, i%13, mod, i%13, mod, i%13, i, 10+rng.IntN(2000), i%3 == 0)
	}
	b.WriteString(`],"stacks":[`)
	for i := range nStacks {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		depth := 8 + rng.IntN(40)
		for j := range depth {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(rng.IntN(nFrames)))
		}
		b.WriteByte(']')
	}
	b.WriteString(`],"samples":[`)
	threads := []string{"140195255602048", "140195205740224", "140195197347520", "140195114514112"}
	ts := int64(1724777211_000000000)
	for i := range nSamples {
		if i > 0 {
			b.WriteByte(',')
		}
		ts += 10_000_000 + rng.Int64N(100_000)
		b.WriteString(`{"timestamp":`)
		b.Write(appendNanos(nil, ts-ts%100))
		fmt.Fprintf(&b, `,"thread_id":"%s","stack_id":%d}`, threads[i%len(threads)], rng.IntN(nStacks))
	}
	b.WriteString(`],"thread_metadata":{`)
	for i, t := range threads {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%s":{"name":"thread-%d"}`, t, i)
	}
	b.WriteString(`}},"profiler_id":"6681f18722ad4138bca2b0446f42f940","version":"2","release":"anchors-capture@1.0.0","environment":"capture"}`)
	return []byte(b.String())
}
