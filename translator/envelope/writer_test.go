package envelope_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
)

func TestHeaderAppendJSON(t *testing.T) {
	tests := []struct {
		name   string
		header envelope.Header
		want   string
	}{
		{name: "empty", header: envelope.Header{}, want: `{}`},
		{name: "raw is not re-emitted", header: envelope.Header{Raw: []byte(`{"trace":{}}`)}, want: `{}`},
		{
			name: "all fields in order",
			header: envelope.Header{
				SDK:     &envelope.SDK{Name: "otelcol-sentryprofile", Version: "0.1.0"},
				SentAt:  "2026-01-02T03:04:05Z",
				DSN:     "https://k@h/1",
				EventID: "9ec79c33ec9942ab8353589fcb2e04dc",
			},
			want: `{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","dsn":"https://k@h/1","sent_at":"2026-01-02T03:04:05Z","sdk":{"name":"otelcol-sentryprofile","version":"0.1.0"}}`,
		},
		{name: "first member omitted", header: envelope.Header{SentAt: "t"}, want: `{"sent_at":"t"}`},
		{name: "only sdk", header: envelope.Header{SDK: &envelope.SDK{}}, want: `{"sdk":{"name":"","version":""}}`},
		{
			name:   "escaping",
			header: envelope.Header{EventID: "a\"b\\c\nd\re\tf\x00g\x1fh<i>&\u2028j\u2029k\xffl✓"},
			want:   `{"event_id":"a\"b\\c\nd\re\tf\u0000g\u001fh<i>&\u2028j\u2029k\ufffdl✓"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.header.AppendJSON([]byte("prefix:"))
			assert.Equal(t, "prefix:"+tt.want, string(got))
			assert.True(t, json.Valid(got[len("prefix:"):]))
		})
	}
}

func TestAppendItem(t *testing.T) {
	tests := []struct {
		name    string
		header  envelope.ItemHeader
		payload string
		want    string
	}{
		{
			name:   "type and length only; stale Length and Raw ignored",
			header: envelope.ItemHeader{Type: "profile_chunk", Length: 99, Raw: []byte(`{"x":1}`)},
			want:   "{\"type\":\"profile_chunk\",\"length\":0}\n\n",
		},
		{
			name:    "all fields",
			header:  envelope.ItemHeader{Type: "profile_chunk", ContentType: "application/json", Filename: "p.json", Platform: "python"},
			payload: `{"a":1}`,
			want:    "{\"type\":\"profile_chunk\",\"length\":7,\"content_type\":\"application/json\",\"filename\":\"p.json\",\"platform\":\"python\"}\n{\"a\":1}\n",
		},
		{
			name:    "platform without content type",
			header:  envelope.ItemHeader{Type: "profile_chunk", Platform: "node"},
			payload: "a\nb",
			want:    "{\"type\":\"profile_chunk\",\"length\":3,\"platform\":\"node\"}\na\nb\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, string(envelope.AppendItem(nil, tt.header, []byte(tt.payload))))
		})
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	header := envelope.Header{
		EventID: "9ec79c33ec9942ab8353589fcb2e04dc",
		DSN:     "https://public:secret@example.com:9000/prefix/42",
		SentAt:  "2026-01-02T03:04:05.123456Z",
		SDK:     &envelope.SDK{Name: "otelcol \"sentry\"\nprofile", Version: "1.0"},
	}
	items := []envelope.Item{
		{Header: envelope.ItemHeader{Type: "profile_chunk", ContentType: "application/json", Platform: "python"}, Payload: []byte(`{"chunk_id":"x"}`)},
		{Header: envelope.ItemHeader{Type: "attachment", Filename: "crlf.txt"}, Payload: []byte("line1\r\nline2\n\n")},
		{Header: envelope.ItemHeader{Type: "empty"}, Payload: []byte{}},
		{Header: envelope.ItemHeader{Type: "binary", ContentType: "application/x-perfetto-trace"}, Payload: []byte{0, 1, '\n', 0xff, '\r', '{', '}'}},
		{Header: envelope.ItemHeader{Type: "unicode ✓\u2028", Platform: "\x01"}, Payload: []byte("é")},
	}
	data := header.AppendJSON(nil)
	data = append(data, '\n')
	for _, it := range items {
		data = envelope.AppendItem(data, it.Header, it.Payload)
	}

	gotHeader, gotItems, err := envelope.Parse(data, envelope.Limits{})
	require.NoError(t, err)
	gotHeader.Raw = nil
	assert.Equal(t, header, gotHeader)
	require.Len(t, gotItems, len(items))
	for i, it := range items {
		got := gotItems[i]
		assert.Equal(t, it.Header.Type, got.Header.Type)
		assert.Equal(t, it.Header.ContentType, got.Header.ContentType)
		assert.Equal(t, it.Header.Filename, got.Header.Filename)
		assert.Equal(t, it.Header.Platform, got.Header.Platform)
		assert.Equal(t, int64(len(it.Payload)), got.Header.Length)
		assert.Equal(t, int64(len(it.Payload)), got.Size)
		assert.Equal(t, it.Payload, got.Payload)
		assert.False(t, got.Oversized)
	}
}

// FuzzReader checks that no input panics the reader, that a successful parse
// survives being written and read again, and that limits only ever skip or
// stop, never change what is read.
func FuzzReader(f *testing.F) {
	for _, seed := range []string{
		"{}",
		"{}\n{\"type\":\"a\",\"length\":3}\nabc\n",
		"{}\n{\"type\":\"a\"}\nabc\n{\"type\":\"b\",\"length\":0}\n",
		"{\"event_id\":\"x\",\"sdk\":{\"name\":\"n\",\"version\":\"v\"}}\n\n{\"type\":\"a\"}\nx\r\n",
		"{}\n{\"type\":\"a\",\"length\":10}\nabc",
		"{}\r\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	for _, data := range sharedFixtureSeeds(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, items, err := envelope.Parse(data, envelope.Limits{})
		limitedItems := parseLimited(data)
		for i, li := range limitedItems {
			if i >= len(items) {
				t.Fatalf("limited parse returned item %d the unlimited parse did not", i)
			}
			if li.Header.Type != items[i].Header.Type || li.Size != items[i].Size {
				t.Fatalf("item %d: limited %q/%d, unlimited %q/%d", i, li.Header.Type, li.Size, items[i].Header.Type, items[i].Size)
			}
			if !li.Oversized && string(li.Payload) != string(items[i].Payload) {
				t.Fatalf("item %d: payloads differ under limits", i)
			}
		}
		if err != nil {
			return
		}
		for i, it := range items {
			checkAgainstEncodingJSON(t, i, it.Header)
		}

		again := h.AppendJSON(nil)
		again = append(again, '\n')
		for _, it := range items {
			again = envelope.AppendItem(again, it.Header, it.Payload)
		}
		h2, items2, err := envelope.Parse(again, envelope.Limits{})
		if err != nil {
			t.Fatalf("re-encoded envelope does not parse: %v\n%q", err, again)
		}
		if h2.EventID != h.EventID || h2.DSN != h.DSN || h2.SentAt != h.SentAt || (h2.SDK == nil) != (h.SDK == nil) || (h.SDK != nil && *h.SDK != *h2.SDK) {
			t.Fatalf("header changed: %+v → %+v", h, h2)
		}
		if len(items2) != len(items) {
			t.Fatalf("%d items became %d", len(items), len(items2))
		}
		for i := range items {
			a, b := items[i], items2[i]
			if a.Header.Type != b.Header.Type || a.Header.ContentType != b.Header.ContentType ||
				a.Header.Filename != b.Header.Filename || a.Header.Platform != b.Header.Platform ||
				string(a.Payload) != string(b.Payload) || a.Size != b.Size || b.Header.Length != b.Size {
				t.Fatalf("item %d changed: %+v → %+v", i, a, b)
			}
		}
	})
}

// checkAgainstEncodingJSON decodes the item header line with encoding/json
// (members in a map: exact, case-sensitive keys, last duplicate wins) and
// compares with what the reader's own member scanner found.
func checkAgainstEncodingJSON(t *testing.T, i int, h envelope.ItemHeader) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(h.Raw, &members); err != nil {
		t.Fatalf("item %d: reader accepted a header encoding/json rejects: %v", i, err)
	}
	for key, got := range map[string]string{"type": h.Type, "content_type": h.ContentType, "filename": h.Filename, "platform": h.Platform} {
		var want string
		if raw, ok := members[key]; ok {
			_ = json.Unmarshal(raw, &want) // null leaves ""
		}
		if got != want {
			t.Fatalf("item %d %s: reader %q, encoding/json %q", i, key, got, want)
		}
	}
	wantLength := int64(-1)
	if raw, ok := members["length"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &wantLength); err != nil {
			t.Fatalf("item %d length %s: %v", i, raw, err)
		}
	}
	if h.Length != wantLength {
		t.Fatalf("item %d length: reader %d, encoding/json %d", i, h.Length, wantLength)
	}
}

func parseLimited(data []byte) []envelope.Item {
	_, items, _ := envelope.Parse(data, envelope.Limits{MaxItemBytes: 8, MaxItems: 4, MaxHeaderBytes: 128})
	return items
}

// sharedFixtureSeeds reads the shared envelopes when they are beside the
// checkout. It cannot use internal/fixtures, which skips the test when they
// are absent: a fuzz target must still run on its built-in seeds.
func sharedFixtureSeeds(f *testing.F) [][]byte {
	dir := filepath.Join("..", "..", "..", "shared", "fixtures", "sentry")
	var out [][]byte
	for _, pattern := range []string{"*.envelope", "*HEAD_ONLY.txt", "*envelope-transaction.txt"} {
		paths, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatalf("seed %s: %v", p, err)
			}
			out = append(out, data)
		}
	}
	return out
}
