package sentrysignal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// decodeStd is DecodeAny as it was written on encoding/json: the
// reference the one-pass parser must equal.
func decodeStd(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(raw[dec.InputOffset():])) != 0 {
		return nil, errTrailing
	}
	return x, nil
}

var errTrailing = os.ErrInvalid

// sameAsStd fails t when DecodeAny and encoding/json disagree on raw:
// one accepting what the other refuses, or different values.
func sameAsStd(t *testing.T, raw []byte) {
	t.Helper()
	got, err := DecodeAny(raw)
	want, werr := decodeStd(raw)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%.80q: DecodeAny error %v, encoding/json error %v", raw, err, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%.80q: DecodeAny %#v, encoding/json %#v", raw, got, want)
	}
}

func TestDecodeAnySameAsEncodingJSON(t *testing.T) {
	deep := strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting)
	tooDeep := strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1)
	for _, tc := range []struct {
		name, in string
		ok       bool
	}{
		{"object", `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, true},
		{"empty containers", ` { "a" : [ ] , "b" : { } } `, true},
		{"repeated key: the last wins", `{"a":1,"a":2}`, true},
		{"numbers", `[0,-0,1.5,-2e10,3E+2,4e-3,12345678901234567890123]`, true},
		{"leading zero", `[01]`, false},
		{"bare minus", `[-]`, false},
		{"dot without digits", `[1.]`, false},
		{"exponent without digits", `[1e]`, false},
		{"escapes", `"\" \\ \/ \b \f \n \r \t \u00e9 \u20AC"`, true},
		{"surrogate pair", `"\ud83d\ude00"`, true},
		{"lone high surrogate", `"\ud83d x"`, true},
		{"lone low surrogate", `"\ude00"`, true},
		{"high then non-low escape", `"\ud83d\u0041"`, true},
		{"invalid UTF-8", "\"a\xffb\xc3\"", true},
		{"encoded surrogate", "\"\xed\xa0\x80\"", true},
		{"valid UTF-8", "\"h\u00e9llo \u4e16\u754c\"", true},
		{"apostrophe escape", `"\'"`, false},
		{"short unicode escape", `"\u12"`, false},
		{"control character", "\"a\x01b\"", false},
		{"control character after an escape", "\"\\n\x01\"", false},
		{"unterminated string", `"abc`, false},
		{"unterminated escape", `"abc\`, false},
		{"trailing comma in object", `{"a":1,}`, false},
		{"trailing comma in array", `[1,]`, false},
		{"missing colon", `{"a" 1}`, false},
		{"unquoted key", `{a:1}`, false},
		{"trailing data", `{} x`, false},
		{"trailing bracket", `{}]`, false},
		{"trailing Unicode space", "{}\f\u00a0", true},
		{"leading form feed", "\f{}", false},
		{"empty", ``, false},
		{"space only", `  `, false},
		{"broken literal", `[tru]`, false},
		{"literal prefix", `nul`, false},
		{"nesting at the limit", deep, true},
		{"nesting past the limit", tooDeep, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameAsStd(t, []byte(tc.in))
			if _, err := DecodeAny([]byte(tc.in)); (err == nil) != tc.ok {
				t.Fatalf("accepted %v, want %v (err %v)", err == nil, tc.ok, err)
			}
		})
	}
}

// TestDecodeAnyCapturedPayloads: every captured SDK payload of the signal
// translators decodes to the same values as with encoding/json.
func TestDecodeAnyCapturedPayloads(t *testing.T) {
	var files []string
	for _, pattern := range []string{"testdata/*.json", "../sentry*/testdata/*.json"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d captured payloads found", len(files))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) { sameAsStd(t, raw) })
	}
}

// FuzzDecodeAny: the one-pass parser and encoding/json accept the same
// inputs and give the same values.
func FuzzDecodeAny(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u00e9\ud83d",true,null,{}]}`, "\"\xff\\ud800\\n\"", `[-0.0e+1]`, `{"a":1,"a":[]} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { sameAsStd(t, raw) })
}

// collectedEntries keeps a copy of every entry a scan gives.
type collectedEntries struct{ items []any }

func (c *collectedEntries) Restart() { c.items = nil }

func (c *collectedEntries) Entry(_ int, x any) {
	e, ok := x.(*Entry)
	if !ok {
		c.items = append(c.items, x)
		return
	}
	// the scanner reuses the entry and its attributes: copies, the
	// members as a decoded object's (a repeated one: the last)
	out := make(map[string]any, len(e.members))
	for i := range e.members {
		// as a translator reads them: the strings made are recalled by
		// the next entry
		e.String(e.members[i].key)
	}
	for i := range e.members {
		out[e.members[i].key] = e.valueOf(&e.members[i])
	}
	if ta, ok := out["attributes"].(*TypedAttributes); ok {
		ta.materialize() // the attributes recalled and not written
		out["attributes"] = &TypedAttributes{sent: slices.Clone(ta.sent), order: slices.Clone(ta.order)}
	}
	c.items = append(c.items, out)
}

// decodeContainer reads raw with ScanContainer's scanner, without its
// limit, into what DecodeAny gives of "items": {"items": [entries]} when
// the last "items" is an array; the other members are read and left.
func decodeContainer(raw []byte) (any, error) {
	var c collectedEntries
	s := containerScan{p: &jsonParser{data: raw}, limit: len(raw) + 1, visitor: &c}
	if err := s.scan(); err != nil {
		return nil, err
	}
	doc := map[string]any{}
	if s.isArray {
		doc["items"] = append([]any{}, c.items...)
	}
	return doc, nil
}

// sameContainer fails t when ScanContainer's scanner and DecodeAny
// disagree on raw: acceptance, the entries' members, and what their
// attributes write (map, dropped count, error) under a few options.
func sameContainer(t *testing.T, raw []byte) {
	t.Helper()
	want, werr := DecodeAny(raw)
	got, err := decodeContainer(raw)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%.80q: decodeContainer error %v, DecodeAny error %v", raw, err, werr)
	}
	if err != nil {
		return
	}
	wantDoc, _ := want.(map[string]any)
	gotDoc, _ := got.(map[string]any)
	wantItems, _ := wantDoc["items"].([]any)
	gotItems, _ := gotDoc["items"].([]any)
	if len(gotItems) != len(wantItems) {
		t.Fatalf("%d entries, want %d", len(gotItems), len(wantItems))
	}
	for i := range wantItems {
		we, wok := wantItems[i].(map[string]any)
		ge, gok := gotItems[i].(map[string]any)
		if !wok || !gok {
			if !reflect.DeepEqual(gotItems[i], wantItems[i]) {
				t.Fatalf("entry %d: %#v, want %#v", i, gotItems[i], wantItems[i])
			}
			continue
		}
		for k := range we {
			if k != "attributes" && !reflect.DeepEqual(ge[k], we[k]) {
				t.Fatalf("entry %d member %q: %#v, want %#v", i, k, ge[k], we[k])
			}
		}
		if len(ge) != len(we) {
			t.Fatalf("entry %d: %d members, want %d", i, len(ge), len(we))
		}
		for _, opts := range []Options{{}, {IncludeUserData: true}, {MaxMapEntries: 2}} {
			render := func(x any) (pcommon.Map, int, string) {
				m := pcommon.NewMap()
				l := NewLimiter(opts)
				e := ""
				var err error
				switch t := x.(type) {
				case nil:
				case map[string]any: // DecodeAny's, the reference
					err = l.PutTyped(m, t)
				default:
					err = l.PutEntryAttributes(m, x, nil)
				}
				if err != nil {
					e = err.Error()
				}
				return m, l.Dropped(), e
			}
			gm, gd, gerr := render(ge["attributes"])
			wm, wd, werr := render(we["attributes"])
			if gerr != werr || gd != wd || !gm.Equal(wm) {
				t.Fatalf("entry %d attributes %+v:\n got %v dropped %d error %q\nwant %v dropped %d error %q",
					i, opts, gm.AsRaw(), gd, gerr, wm.AsRaw(), wd, werr)
			}
		}
	}
}

func manyAttributes(n int) string {
	var b strings.Builder
	b.WriteString(`{"items":[{"attributes":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%03d":{"type":"integer","value":%d}`, n-i, i)
	}
	b.WriteString(`}}]}`)
	return b.String()
}

func TestContainerAttributesAsFromMaps(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"typed values", `{"version":2,"items":[{"body":"x","attributes":{"b":{"type":"string","value":"v"},"a":{"type":"integer","value":3},"c":{"type":"double","value":1},"d":{"type":"boolean","value":"true"},"e":{"type":"array","value":[1,"x"]}}}]}`},
		{"repeated attribute: the last wins", `{"items":[{"attributes":{"a":{"type":"string","value":"1"},"b":{"type":"string","value":"x"},"a":{"type":"integer","value":2}}}]}`},
		{"repeated members of a value", `{"items":[{"attributes":{"a":{"type":"string","type":"integer","value":"1","value":2,"x":[{}]}}}]}`},
		{"legacy members", `{"items":[{"attributes":{"a":{"string_value":"s"},"b":{"int_value":1,"double_value":2.5},"c":{"bool_value":null,"type":"string","value":"t"}}}]}`},
		{"null values are left out", `{"items":[{"attributes":{"a":null,"b":{"type":"string","value":null},"c":{}}}]}`},
		{"type not a string", `{"items":[{"attributes":{"a":{"type":3,"value":"x"}}}]}`},
		{"not typed", `{"items":[{"attributes":{"z":{"type":"string","value":"ok"},"a":"bare"}}]}`},
		{"not of its type", `{"items":[{"attributes":{"a":{"type":"integer","value":"x"}}}]}`},
		{"attributes not an object", `{"items":[{"attributes":[1]},{"attributes":"x"},{"attributes":null}]}`},
		{"personal attributes", `{"items":[{"attributes":{"user.email":{"type":"string","value":"a@b"},"client.address":{"type":"string","value":"1.2.3.4"},"k":{"type":"string","value":"v"}}}]}`},
		{"nested attributes stay maps", `{"items":[{"body":{"attributes":{"a":{"type":"string","value":"x"}}},"attributes":{}}],"attributes":{"a":1}}`},
		{"entries not objects", `{"items":[1,"x",null,[{"attributes":{}}]]}`},
		{"items not an array", `{"items":{"attributes":{}}}`},
		{"repeated items", `{"items":[{"attributes":{"a":{"type":"string","value":"1"}}}],"items":[{"attributes":{"b":{"type":"string","value":"2"}}}]}`},
		{"many attributes: the bulk path", manyAttributes(300)},
		{"entries of shapes sharing keys, recalled by their text", shapedEntries(60)},
		{"broken attributes", `{"items":[{"attributes":{"a":{"type":"string","value":}}}]}`},
		{"trailing data", `{"items":[]} x`},
		{"not an object", `[{"items":[]}]`},
	} {
		t.Run(tc.name, func(t *testing.T) { sameContainer(t, []byte(tc.in)) })
	}
}

// shapedEntries is a container of n entries whose members and attributes
// take seven shapes in turn, sharing their first keys (as an SDK's call
// sites do), with the variations the recall by text must not be fooled
// by: an escaped key or value where an earlier entry had it plain, a
// number where it had a string, a value that changes, a key more or
// fewer, members in another order, a repeated key.
func shapedEntries(n int) string {
	// # is the entry's number
	attrs := []string{
		`"k":{"value":"v#","type":"string"},"l":{"value":"same","type":"string"}`,
		`"k":{"value":"v","type":"string"},"l":{"value":"same","type":"string"},"m":{"value":#,"type":"integer"}`,
		`"k":{"value":"v","type":"string"},"\u006c":{"value":"same","type":"string"},"m":{"value":"#","type":"integer"}`,
		`"k":{"value":"v\"#","type":"string"},"l":{"value":"s\u0061me","type":"string"}`,
		`"k":{"value":#,"type":"integer"},"l":{"value":"same","type":"string"}`,
		`"k":{"type":"string","value":"v"},"l":{"value":"same","type":"string"},"k":{"value":"last#","type":"string"}`,
		`"k":{"value":"v","type":"string"}`,
	}
	members := []string{
		`"timestamp":1795644001.#,"level":"info","body":"b#","attributes":{@}`,
		`"level":"warn","timestamp":#,"attributes":{@},"body":"b#"`,
	}
	// the first two shapes come back often enough to be recalled
	order := []int{0, 0, 1, 1, 2, 0, 3, 0, 4, 1, 5, 0, 6, 0}
	var entries []string
	for i := range n {
		number := strconv.Itoa(i)
		a := strings.ReplaceAll(attrs[order[i%len(order)]], "#", number)
		m := strings.ReplaceAll(members[i/len(order)%len(members)], "#", number)
		entries = append(entries, "{"+strings.Replace(m, "@", a, 1)+"}")
	}
	return `{"items":[` + strings.Join(entries, ",") + `]}`
}

// TestContainerCapturedPayloads: every captured log and metric container
// reads as with DecodeAny.
func TestContainerCapturedPayloads(t *testing.T) {
	files, err := filepath.Glob("../sentry*/testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(raw, []byte(`"items"`)) {
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) { sameContainer(t, raw) })
	}
	if n < 6 {
		t.Fatalf("only %d captured containers found", n)
	}
}

// FuzzContainer: ScanContainer's scanner reads what DecodeAny reads.
func FuzzContainer(f *testing.F) {
	for _, s := range []string{
		`{"items":[{"attributes":{"a":{"type":"string","value":"x"},"a":{"int_value":1}}}]}`,
		`{"items":[{"attributes":{"u":{"type":"integer","value":1.5}}},{"attributes":[]}]}`,
		// members the entry before had, a number that goes on further
		`{"items":[{"v":1,"s":"a"},{"v":15,"s":"a"},{"v":1.5,"s":"ab"},{"v":1e3,"s":"a"},{"v":1,"s":"a\u0062"}]}`,
		// entries of one shape, the later ones recalled by their text: the
		// same, an escaped key, an escaped value, a value of another type,
		// one key more, one key fewer
		`{"items":[{"attributes":{"k":{"value":"v","type":"string"},"n":{"value":"w","type":"string"}}},` +
			`{"attributes":{"k":{"value":"v","type":"string"},"n":{"value":"w","type":"string"}}},` +
			`{"attributes":{"\u006b":{"value":"v","type":"string"},"n":{"value":"w","type":"string"}}},` +
			`{"attributes":{"k":{"value":"v\"","type":"string"},"n":{"value":1,"type":"string"}}},` +
			`{"attributes":{"k":{"value":"v","type":"string"},"n":{"value":"w","type":"string"},"o":{"value":"v","type":"string"}}},` +
			`{"attributes":{"k":{"value":"v","type":"string"}}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { sameContainer(t, raw) })
}

// TestDecodeAnySharesRepeatedStrings: a text a payload repeats is one
// string and one boxed value, not one per occurrence (encoding/json made
// two allocations of each: 2,000 here); texts past maxSharedLen and
// payloads under minSharedPayload are not shared, and equal values come
// back either way.
func TestDecodeAnySharesRepeatedStrings(t *testing.T) {
	repeat := func(text string, n int) []byte {
		q, _ := json.Marshal(text)
		return []byte("[" + strings.TrimSuffix(strings.Repeat(string(q)+",", n), ",") + "]")
	}
	for _, tc := range []struct {
		name      string
		payload   []byte
		maxAllocs float64
	}{
		{"a file name in 1,000 frames", repeat("/srv/shop/node_modules/@sentry/core/build/cjs/tracing/trace.js", 1000), 20},
		{"long texts are not shared", repeat(strings.Repeat("x", maxSharedLen+1), 100), 250},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameAsStd(t, tc.payload)
			allocs := testing.AllocsPerRun(5, func() {
				if _, err := DecodeAny(tc.payload); err != nil {
					t.Fatal(err)
				}
			})
			if allocs > tc.maxAllocs {
				t.Fatalf("%.0f allocations, want at most %.0f", allocs, tc.maxAllocs)
			}
			if tc.maxAllocs > 100 && allocs < 150 {
				t.Fatalf("%.0f allocations: long texts were shared", allocs)
			}
		})
	}
}

// TestKnownKeys: every known key is found as its shared string within a
// few probes, and texts that are not known keys are not.
func TestKnownKeys(t *testing.T) {
	for _, k := range knownKeyList() {
		got, ok := knownKeys.find([]byte(k))
		if !ok || got != k {
			t.Errorf("find(%q) = %q, %v", k, got, ok)
		}
		probes := 1
		for i := keyHash(k); knownKeys.slots[i] != k; i = (i + 1) % len(knownKeys.slots) {
			probes++
		}
		if probes > 8 {
			t.Errorf("%q takes %d probes", k, probes)
		}
	}
	for _, k := range []string{"", "x", "valu", "values2", "sentry.releases", "Type"} {
		if got, ok := knownKeys.find([]byte(k)); ok {
			t.Errorf("find(%q) = %q, a known key", k, got)
		}
	}
}

// TestNextSpecial: eight bytes at a time, plain() finds the first byte
// the table finds a byte at a time, for every byte value at every place
// of a run of plain bytes, and in random runs.
func TestNextSpecial(t *testing.T) {
	byTable := func(data []byte, i int) int {
		for i < len(data) && plainASCII[data[i]] {
			i++
		}
		return i
	}
	for size := range 20 {
		for place := range size {
			for c := range 256 {
				data := bytes.Repeat([]byte("a"), size)
				data[place] = byte(c)
				if got, want := nextSpecial(data, 0), byTable(data, 0); got != want {
					t.Fatalf("byte %#x at %d of %d: nextSpecial %d, want %d", c, place, size, got, want)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 64)
	for range 200_000 {
		for i := range data {
			data[i] = byte(rng.IntN(256))
			if rng.IntN(4) != 0 {
				data[i] = byte(' ' + rng.IntN(95)) // mostly printable, where the borrows matter
			}
		}
		from := rng.IntN(len(data))
		if got, want := nextSpecial(data, from), byTable(data, from); got != want {
			t.Fatalf("%q from %d: nextSpecial %d, want %d", data, from, got, want)
		}
	}
}

// othersVisitor records what Others gives for each entry.
type othersVisitor struct {
	mapped func(string) bool
	got    [][]Member
}

func (v *othersVisitor) Restart() {}
func (v *othersVisitor) Entry(_ int, x any) {
	if e, ok := x.(*Entry); ok {
		v.got = append(v.got, slices.Clone(e.Others(v.mapped)))
	}
}

// TestEntryOthersOfRepeatedKeys: an entry with the keys of the one before
// gives its own unmapped members, whatever the one before had (Others
// skips the look-ups only when the keys before were all mapped).
func TestEntryOthersOfRepeatedKeys(t *testing.T) {
	raw := `{"items":[{"a":1,"b":2},{"a":3,"b":4},{"a":1,"x":null},{"a":1,"x":5},{"a":1,"x":6},{"x":7,"a":1},{"a":2,"b":3},{"a":2,"b":3,"y":"z"}]}`
	v := &othersVisitor{mapped: func(k string) bool { return k == "a" || k == "b" }}
	if err := ScanContainer("log", []byte(raw), Options{}, v); err != nil {
		t.Fatal(err)
	}
	want := []string{"", "", "", "x=5", "x=6", "x=7", "", "y=z"}
	for i, others := range v.got {
		var parts []string
		for _, m := range others {
			parts = append(parts, fmt.Sprintf("%s=%v", m.Key, m.Value))
		}
		if got := strings.Join(parts, ","); got != want[i] {
			t.Errorf("entry %d: others %q, want %q", i, got, want[i])
		}
	}
}
