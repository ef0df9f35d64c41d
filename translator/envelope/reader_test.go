package envelope_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
)

// wantItem is what a test expects of one parsed item.
type wantItem struct {
	Type        string
	Length      int64
	ContentType string
	Platform    string
	Payload     string
	Size        int64
	Oversized   bool
}

func summarize(items []envelope.Item) []wantItem {
	out := make([]wantItem, 0, len(items))
	for _, it := range items {
		w := wantItem{
			Type:        it.Header.Type,
			Length:      it.Header.Length,
			ContentType: it.Header.ContentType,
			Platform:    it.Header.Platform,
			Size:        it.Size,
			Oversized:   it.Oversized,
		}
		if !it.Oversized {
			w.Payload = string(it.Payload)
		}
		out = append(out, w)
	}
	return out
}

func TestParseSharedFixtures(t *testing.T) {
	type fixtureWant struct {
		eventID, sentAt string
		items           []wantItem // Payload left empty: checked as JSON instead
	}
	want := map[string]fixtureWant{
		"sentry-python-2.68.0__captured_http__v1_profile_with_transaction_1.envelope": {
			eventID: "a2c6f3cc518c44719ee95a36f07cda36",
			sentAt:  "2026-11-22T06:26:38.562507Z",
			items: []wantItem{
				{Type: "profile", Length: 30002, ContentType: "application/json", Size: 30002},
				{Type: "transaction", Length: 977, ContentType: "application/json", Size: 977},
			},
		},
		"sentry-python-2.68.0__captured_http__v2_profile_chunk_1.envelope": {
			items: []wantItem{{Type: "profile_chunk", Length: 30943, ContentType: "application/json", Platform: "python", Size: 30943}},
		},
		"sentry-python-2.68.0__captured_http__v2_profile_chunk_2.envelope": {
			items: []wantItem{{Type: "profile_chunk", Length: 30594, ContentType: "application/json", Platform: "python", Size: 30594}},
		},
		"sentry-java__sentry_src_test_resources_envelope-transaction.txt": {
			eventID: "3367f5196c494acaae85bbbd535379ac",
			items:   []wantItem{{Type: "transaction", Length: 640, ContentType: "application/json", Size: 640}},
		},
	}
	paths := fixtures.Files(t, ".envelope", "envelope-transaction.txt")
	require.NotEmpty(t, paths)
	seen := 0
	for _, path := range paths {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			h, items, err := envelope.Parse(data, envelope.Limits{MaxItemBytes: 50 << 20, MaxItems: 100})
			require.NoError(t, err)
			assert.Equal(t, string(data[:bytes.IndexByte(data, '\n')]), string(h.Raw))
			for i, it := range items {
				assert.Truef(t, json.Valid(it.Payload), "item %d payload is not JSON", i)
			}
			w, ok := want[name]
			if !ok {
				return // a new capture: parsing cleanly is all that is known of it
			}
			seen++
			assert.Equal(t, w.eventID, h.EventID)
			assert.Equal(t, w.sentAt, h.SentAt)
			got := summarize(items)
			for i := range got {
				got[i].Payload = ""
			}
			assert.Equal(t, w.items, got)
		})
	}
	assert.Equal(t, len(want), seen, "every known fixture was found and checked")
}

// The captured HTTP bodies are gzip streams: reading through the decompressor
// must give the same items as the decompressed copy.
func TestReaderOverCapturedGzipBodies(t *testing.T) {
	for _, path := range fixtures.Files(t, ".request.gz") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			plain, err := os.ReadFile(strings.TrimSuffix(path, ".request.gz") + ".envelope")
			require.NoError(t, err)
			_, wantItems, err := envelope.Parse(plain, envelope.Limits{})
			require.NoError(t, err)

			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			zr, err := gzip.NewReader(f)
			require.NoError(t, err)
			r := envelope.NewReader(zr, envelope.Limits{})
			var got []envelope.Item
			for {
				it, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				got = append(got, it)
			}
			assert.Equal(t, summarize(wantItems), summarize(got))
		})
	}
}

// The Perfetto fixture keeps the real item header but only 2432 bytes of the
// 104991 it announces.
func TestPerfettoHeadOnlyIsTruncated(t *testing.T) {
	data := fixtures.Read(t, "relay__relay-profiling_tests_fixtures_android_perfetto_profile_chunk.envelope.HEAD_ONLY.txt")
	r := envelope.NewReader(bytes.NewReader(data), envelope.Limits{})
	h, err := r.Header()
	require.NoError(t, err)
	assert.Equal(t, "c3b09c0608844f558eaf6e65df6b9cdf", h.EventID)
	require.NotNil(t, h.SDK)
	assert.Equal(t, envelope.SDK{Name: "sentry.java.android", Version: "8.38.0"}, *h.SDK)

	_, err = r.Next()
	var syntaxErr *envelope.SyntaxError
	require.ErrorAs(t, err, &syntaxErr)
	assert.Equal(t, envelope.SyntaxError{
		Offset: 3660,
		Item:   0,
		Msg:    "length says 104991 but only 2432 bytes remain",
		Err:    io.ErrUnexpectedEOF,
	}, *syntaxErr)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, "envelope: item 0 at offset 3660: length says 104991 but only 2432 bytes remain: unexpected EOF", err.Error())

	_, again := r.Next()
	assert.Same(t, err, again, "errors are sticky")
}

func TestParseGrammar(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		header  envelope.Header // Raw checked separately when wantRaw is set
		wantRaw string
		items   []wantItem
		err     *envelope.SyntaxError // exact, including Err when it is a sentinel
	}{
		{
			name:    "empty header only",
			in:      "{}",
			wantRaw: "{}",
		},
		{
			name:    "empty header with newline",
			in:      "{}\n",
			wantRaw: "{}",
		},
		{
			name: "header fields and unknown keys",
			in:   `{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","dsn":"https://k@o1.ingest.sentry.io/42","sent_at":"2026-01-02T03:04:05Z","sdk":{"name":"sentry.go","version":"0.30.0","packages":[]},"trace":{"trace_id":"x"}}` + "\n",
			header: envelope.Header{
				EventID: "9ec79c33ec9942ab8353589fcb2e04dc",
				DSN:     "https://k@o1.ingest.sentry.io/42",
				SentAt:  "2026-01-02T03:04:05Z",
				SDK:     &envelope.SDK{Name: "sentry.go", Version: "0.30.0"},
			},
			wantRaw: `{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","dsn":"https://k@o1.ingest.sentry.io/42","sent_at":"2026-01-02T03:04:05Z","sdk":{"name":"sentry.go","version":"0.30.0","packages":[]},"trace":{"trace_id":"x"}}`,
		},
		{
			name:   "null header members are absent and a non-object sdk is ignored",
			in:     `{"event_id":null,"sdk":"sentry.python"}`,
			header: envelope.Header{},
		},
		{
			name:  "length-delimited without final newline",
			in:    "{}\n" + `{"type":"profile","length":3}` + "\nabc",
			items: []wantItem{{Type: "profile", Length: 3, Payload: "abc", Size: 3}},
		},
		{
			name:  "newline-delimited without final newline",
			in:    "{}\n" + `{"type":"profile"}` + "\nabc",
			items: []wantItem{{Type: "profile", Length: -1, Payload: "abc", Size: 3}},
		},
		{
			name: "newline-delimited then length-delimited",
			in:   "{}\n" + `{"type":"event"}` + "\nhello\n" + `{"type":"attachment","length":2,"content_type":"text/plain"}` + "\nhi\n",
			items: []wantItem{
				{Type: "event", Length: -1, Payload: "hello", Size: 5},
				{Type: "attachment", Length: 2, ContentType: "text/plain", Payload: "hi", Size: 2},
			},
		},
		{
			name:  "length keeps newlines and carriage returns in the payload",
			in:    "{}\n" + `{"type":"attachment","length":6}` + "\na\nb\r\nc\n",
			items: []wantItem{{Type: "attachment", Length: 6, Payload: "a\nb\r\nc", Size: 6}},
		},
		{
			name:  "carriage return stays in a newline-delimited payload",
			in:    "{}\n" + `{"type":"event"}` + "\nhi\r\n",
			items: []wantItem{{Type: "event", Length: -1, Payload: "hi\r", Size: 3}},
		},
		{
			name:  "item header at end of input without length",
			in:    "{}\n" + `{"type":"attachment"}`,
			items: []wantItem{{Type: "attachment", Length: -1, Payload: "", Size: 0}},
		},
		{
			name:  "item header at end of input with length 0",
			in:    "{}\n" + `{"type":"attachment","length":0}`,
			items: []wantItem{{Type: "attachment", Length: 0, Payload: "", Size: 0}},
		},
		{
			name: "zero-length items back to back",
			in:   "{}\n" + `{"type":"a","length":0}` + "\n\n" + `{"type":"b","length":0}` + "\n",
			items: []wantItem{
				{Type: "a", Length: 0, Payload: "", Size: 0},
				{Type: "b", Length: 0, Payload: "", Size: 0},
			},
		},
		{
			name: "blank lines and whitespace before headers are skipped",
			in:   "\n \n{}\n\n\n" + `{"type":"a","length":1}` + "\nx\n\r\n \t" + `{"type":"b"}` + "\ny\n",
			items: []wantItem{
				{Type: "a", Length: 1, Payload: "x", Size: 1},
				{Type: "b", Length: -1, Payload: "y", Size: 1},
			},
		},
		{
			name:  "length null counts as absent",
			in:    "{}\n" + `{"type":"a","length":null}` + "\nxyz\n",
			items: []wantItem{{Type: "a", Length: -1, Payload: "xyz", Size: 3}},
		},
		{
			name:  "content type is not validated",
			in:    "{}\n" + `{"type":"profile","content_type":"application-json","length":2}` + "\n{}\n",
			items: []wantItem{{Type: "profile", Length: 2, ContentType: "application-json", Payload: "{}", Size: 2}},
		},
		{
			name: "empty input",
			in:   "",
			err:  &envelope.SyntaxError{Offset: 0, Item: -1, Msg: "missing envelope header", Err: io.ErrUnexpectedEOF},
		},
		{
			name: "whitespace only",
			in:   " \n",
			err:  &envelope.SyntaxError{Offset: 2, Item: -1, Msg: "missing envelope header", Err: io.ErrUnexpectedEOF},
		},
		{
			name: "blank line after the last item",
			in:   "{}\n" + `{"type":"a","length":1}` + "\nx\n\n",
			err:  &envelope.SyntaxError{Offset: 30, Item: 1, Msg: "blank lines after the last item, expected an item header", Err: io.ErrUnexpectedEOF},
		},
		{
			name: "CRLF after the envelope header",
			in:   "{}\r\n",
			err:  &envelope.SyntaxError{Offset: 2, Item: -1, Msg: `envelope header is followed by '\r' instead of a newline`},
		},
		{
			name: "CRLF after an item header",
			in:   "{}\n" + `{"type":"a","length":1}` + "\r\nx\n",
			err:  &envelope.SyntaxError{Offset: 26, Item: 0, Msg: `item header is followed by '\r' instead of a newline`},
		},
		{
			name: "space after an item header",
			in:   "{}\n" + `{"type":"a"} ` + "\nx\n",
			err:  &envelope.SyntaxError{Offset: 15, Item: 0, Msg: `item header is followed by ' ' instead of a newline`},
		},
		{
			name: "length longer than the body",
			in:   "{}\n" + `{"type":"a","length":10}` + "\nabc\n",
			err:  &envelope.SyntaxError{Offset: 32, Item: 0, Msg: "length says 10 but only 4 bytes remain", Err: io.ErrUnexpectedEOF},
		},
		{
			name: "length shorter than the payload",
			in:   "{}\n" + `{"type":"a","length":2}` + "\nabcdef\n",
			err:  &envelope.SyntaxError{Offset: 29, Item: 0, Msg: "length says 2 but the payload is followed by 'c' instead of a newline"},
		},
		{
			name: "length given but item header ends the input",
			in:   "{}\n" + `{"type":"a","length":5}`,
			err:  &envelope.SyntaxError{Offset: 26, Item: 0, Msg: "length says 5 but only 0 bytes remain", Err: io.ErrUnexpectedEOF},
		},
		{
			name: "header is not JSON",
			in:   "hello\n",
			err:  &envelope.SyntaxError{Offset: 0, Item: -1, Msg: "envelope header is not a JSON object"},
		},
		{
			name: "header is a JSON array",
			in:   "[]\n",
			err:  &envelope.SyntaxError{Offset: 0, Item: -1, Msg: "envelope header is not a JSON object"},
		},
		{
			name: "header is null",
			in:   "null\n",
			err:  &envelope.SyntaxError{Offset: 0, Item: -1, Msg: "envelope header is not a JSON object"},
		},
		{
			name: "item header is a string",
			in:   "{}\n\"profile\"\n",
			err:  &envelope.SyntaxError{Offset: 3, Item: 0, Msg: "item header is not a JSON object"},
		},
		{
			name: "item header missing type",
			in:   "{}\n" + `{"length":0}` + "\n\n",
			err:  &envelope.SyntaxError{Offset: 3, Item: 0, Msg: `item header has no "type"`},
		},
		{
			name: "type keys are case-sensitive",
			in:   "{}\n" + `{"TYPE":"profile"}` + "\nx\n",
			err:  &envelope.SyntaxError{Offset: 3, Item: 0, Msg: `item header has no "type"`},
		},
		{
			name: "type is not a string",
			in:   "{}\n" + `{"type":7}` + "\nx\n",
			err:  &envelope.SyntaxError{Offset: 3, Item: 0, Msg: `"type" must be a string, not 7`},
		},
		{
			name: "negative length",
			in:   "{}\n" + `{"type":"a","length":-1}` + "\n\n",
			err:  &envelope.SyntaxError{Offset: 3, Item: 0, Msg: `"length" -1 is negative`},
		},
		{
			name: "fractional length",
			in:   "{}\n" + `{"type":"a","length":1.5}` + "\nx\n",
			err:  &envelope.SyntaxError{Offset: 3, Item: 0, Msg: `"length" 1.5 is not an integer byte count`},
		},
		{
			name: "length as a string",
			in:   "{}\n" + `{"type":"a","length":"1"}` + "\nx\n",
			err:  &envelope.SyntaxError{Offset: 3, Item: 0, Msg: `"length" "1" is not an integer byte count`},
		},
		{
			name: "event_id is not a string",
			in:   `{"event_id":42}`,
			err:  &envelope.SyntaxError{Offset: 0, Item: -1, Msg: `"event_id" must be a string, not 42`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, items, err := envelope.Parse([]byte(tt.in), envelope.Limits{})
			if tt.err != nil {
				var syntaxErr *envelope.SyntaxError
				require.ErrorAs(t, err, &syntaxErr)
				assert.Equal(t, *tt.err, *syntaxErr)
				return
			}
			require.NoError(t, err)
			if tt.wantRaw != "" {
				assert.Equal(t, tt.wantRaw, string(h.Raw))
			}
			h.Raw = nil
			assert.Equal(t, tt.header, h)
			if tt.items == nil {
				assert.Empty(t, items)
			} else {
				assert.Equal(t, tt.items, summarize(items))
			}
			for i, it := range items {
				assert.NotNilf(t, it.Payload, "item %d: payload of a stored item is never nil", i)
			}
		})
	}
}

func TestItemHeaderRawKeepsUnknownKeys(t *testing.T) {
	line := `{"type":"profile_chunk","platform":"android","meta_length":3,"item_count":1,"x":{"y":[1,2]}}`
	_, items, err := envelope.Parse([]byte("{}\n"+line+"\nabc\n"), envelope.Limits{})
	require.NoError(t, err)
	require.Len(t, items, 1)
	assert.Equal(t, line, string(items[0].Header.Raw))
	assert.Equal(t, "android", items[0].Header.Platform)
}

// Invalid JSON is reported with the encoding/json error as the cause; its
// message belongs to encoding/json, so only the structure is asserted.
func TestInvalidJSONHeadersWrapJSONError(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		item     int
		msg      string
		lineFrom int64
	}{
		{name: "trailing comma in item header", in: "{}\n{\"type\":\"a\",}\n", item: 0, msg: "item header is not valid JSON", lineFrom: 3},
		{name: "two objects on the envelope header line", in: "{} {}\n", item: -1, msg: "envelope header is not valid JSON", lineFrom: 0},
		{name: "unterminated string", in: "{}\n\n{\"type\":\"a}\n", item: 0, msg: "item header is not valid JSON", lineFrom: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := envelope.Parse([]byte(tt.in), envelope.Limits{})
			var syntaxErr *envelope.SyntaxError
			require.ErrorAs(t, err, &syntaxErr)
			assert.Equal(t, tt.item, syntaxErr.Item)
			assert.Equal(t, tt.msg, syntaxErr.Msg)
			var jsonErr *json.SyntaxError
			require.ErrorAs(t, err, &jsonErr)
			assert.Equal(t, tt.lineFrom+jsonErr.Offset, syntaxErr.Offset)
		})
	}
}

// A 4 GiB length on a 1 KiB body must fail at EOF having allocated for the
// bytes that arrived, not for the claim: both when the source can tell how
// much it holds and when it is a plain stream.
func TestHugeClaimedLengthAllocatesOnlyWhatArrives(t *testing.T) {
	in := []byte("{}\n" + `{"type":"attachment","length":4294967296}` + "\n" + strings.Repeat("x", 1024))
	sources := map[string]func() io.Reader{
		"in memory": func() io.Reader { return bytes.NewReader(in) },
		"stream":    func() io.Reader { return struct{ io.Reader }{bytes.NewReader(in)} },
	}
	for name, source := range sources {
		t.Run(name, func(t *testing.T) {
			src := source()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			r := envelope.NewReader(src, envelope.Limits{})
			_, err := r.Next()
			runtime.ReadMemStats(&after)

			var syntaxErr *envelope.SyntaxError
			require.ErrorAs(t, err, &syntaxErr)
			assert.Equal(t, "length says 4294967296 but only 1024 bytes remain", syntaxErr.Msg)
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
			allocated := after.TotalAlloc - before.TotalAlloc
			assert.Less(t, allocated, uint64(1<<20), "allocated %d bytes for a %d-byte body", allocated, len(in))
		})
	}
}

func manyItems(n int) []byte {
	var b bytes.Buffer
	b.WriteString("{}\n")
	for i := range n {
		fmt.Fprintf(&b, "{\"type\":\"client_report\",\"length\":1}\n%d\n", i%10)
	}
	return b.Bytes()
}

func TestManyItems(t *testing.T) {
	data := manyItems(100_000)

	t.Run("over MaxItems", func(t *testing.T) {
		_, items, err := envelope.Parse(data, envelope.Limits{MaxItems: 1000})
		require.ErrorIs(t, err, envelope.ErrTooManyItems)
		assert.Len(t, items, 1000, "items before the limit are returned")
		assert.Contains(t, err.Error(), "item 1000")
	})
	t.Run("exactly MaxItems", func(t *testing.T) {
		_, items, err := envelope.Parse(manyItems(3), envelope.Limits{MaxItems: 3})
		require.NoError(t, err)
		assert.Len(t, items, 3)
	})
	t.Run("unlimited", func(t *testing.T) {
		start := time.Now()
		_, items, err := envelope.Parse(data, envelope.Limits{})
		elapsed := time.Since(start)
		require.NoError(t, err)
		require.Len(t, items, 100_000)
		assert.Equal(t, "7", string(items[99_997].Payload))
		// Generous for a shared 2-core machine; typically ~100 ms.
		assert.Less(t, elapsed, 10*time.Second)
	})
}

func TestOversizedItemsAreSkipped(t *testing.T) {
	big := strings.Repeat("p", 100)
	tests := []struct {
		name  string
		in    string
		items []wantItem
	}{
		{
			name: "with length",
			in:   "{}\n" + `{"type":"profile","length":100}` + "\n" + big + "\n" + `{"type":"transaction","length":2}` + "\n{}\n",
			items: []wantItem{
				{Type: "profile", Length: 100, Size: 100, Oversized: true},
				{Type: "transaction", Length: 2, Payload: "{}", Size: 2},
			},
		},
		{
			name: "without length",
			in:   "{}\n" + `{"type":"profile"}` + "\n" + big + "\n" + `{"type":"transaction"}` + "\n{}\n",
			items: []wantItem{
				{Type: "profile", Length: -1, Size: 100, Oversized: true},
				{Type: "transaction", Length: -1, Payload: "{}", Size: 2},
			},
		},
		{
			name: "without length longer than the read buffer",
			in:   "{}\n" + `{"type":"profile"}` + "\n" + strings.Repeat("q", 100_000) + "\n" + `{"type":"event"}` + "\nok",
			items: []wantItem{
				{Type: "profile", Length: -1, Size: 100_000, Oversized: true},
				{Type: "event", Length: -1, Payload: "ok", Size: 2},
			},
		},
		{
			name: "exactly at the limit is kept",
			in:   "{}\n" + `{"type":"profile","length":10}` + "\n0123456789\n" + `{"type":"profile"}` + "\n0123456789",
			items: []wantItem{
				{Type: "profile", Length: 10, Payload: "0123456789", Size: 10},
				{Type: "profile", Length: -1, Payload: "0123456789", Size: 10},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, items, err := envelope.Parse([]byte(tt.in), envelope.Limits{MaxItemBytes: 10})
			require.NoError(t, err)
			assert.Equal(t, tt.items, summarize(items))
			for _, it := range items {
				if it.Oversized {
					assert.Nil(t, it.Payload)
				}
			}
		})
	}

	t.Run("truncated oversized item", func(t *testing.T) {
		in := "{}\n" + `{"type":"profile","length":1000}` + "\n" + big
		_, _, err := envelope.Parse([]byte(in), envelope.Limits{MaxItemBytes: 10})
		var syntaxErr *envelope.SyntaxError
		require.ErrorAs(t, err, &syntaxErr)
		assert.Equal(t, envelope.SyntaxError{Offset: int64(len(in)), Item: 0, Msg: "length says 1000 but only 100 bytes remain", Err: io.ErrUnexpectedEOF}, *syntaxErr)
	})
	t.Run("oversized item followed by garbage", func(t *testing.T) {
		_, _, err := envelope.Parse([]byte("{}\n"+`{"type":"profile","length":50}`+"\n"+big), envelope.Limits{MaxItemBytes: 10})
		var syntaxErr *envelope.SyntaxError
		require.ErrorAs(t, err, &syntaxErr)
		assert.Equal(t, "length says 50 but the payload is followed by 'p' instead of a newline", syntaxErr.Msg)
	})
}

func TestHeaderTooLarge(t *testing.T) {
	long := `{"type":"attachment","filename":"` + strings.Repeat("f", 200) + `"}`
	tests := []struct {
		name   string
		in     string
		limits envelope.Limits
		err    error
		items  int
	}{
		{name: "envelope header", in: `{"x":"` + strings.Repeat("a", 300) + `"}` + "\n", limits: envelope.Limits{MaxHeaderBytes: 100}, err: envelope.ErrHeaderTooLarge},
		{name: "item header", in: "{}\n" + long + "\nx\n", limits: envelope.Limits{MaxHeaderBytes: 100}, err: envelope.ErrHeaderTooLarge},
		{name: "item header at end of input", in: "{}\n" + long, limits: envelope.Limits{MaxHeaderBytes: 100}, err: envelope.ErrHeaderTooLarge},
		{name: "exactly at the limit", in: "{}\n" + long + "\nx\n", limits: envelope.Limits{MaxHeaderBytes: len(long)}, items: 1},
		{
			name:   "default limit beyond the read buffer",
			in:     `{"pad":"` + strings.Repeat("a", 40<<10) + `"}` + "\n" + `{"type":"a"}` + "\nx",
			limits: envelope.Limits{},
			items:  1,
		},
		{
			name:   "default limit exceeded",
			in:     `{"pad":"` + strings.Repeat("a", 70<<10) + `"}` + "\n",
			limits: envelope.Limits{},
			err:    envelope.ErrHeaderTooLarge,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, items, err := envelope.Parse([]byte(tt.in), tt.limits)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Len(t, items, tt.items)
		})
	}
}

var errConnectionReset = errors.New("connection reset")

// failingReader returns data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestUnderlyingReaderErrorsAreWrapped(t *testing.T) {
	body := []byte("{}\n" + `{"type":"profile","length":2000}` + "\n" + strings.Repeat("z", 2000) + "\n")

	t.Run("request body limit", func(t *testing.T) {
		limited := http.MaxBytesReader(nil, io.NopCloser(bytes.NewReader(body)), 1000)
		r := envelope.NewReader(limited, envelope.Limits{})
		_, err := r.Next()
		var maxBytes *http.MaxBytesError
		require.ErrorAs(t, err, &maxBytes)
		assert.Equal(t, int64(1000), maxBytes.Limit)
		var syntaxErr *envelope.SyntaxError
		assert.NotErrorAs(t, err, &syntaxErr, "a transport error is not a syntax error")
		assert.Contains(t, err.Error(), "item 0")
	})
	t.Run("truncated gzip stream", func(t *testing.T) {
		var zbuf bytes.Buffer
		zw := gzip.NewWriter(&zbuf)
		_, err := zw.Write(body)
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		zr, err := gzip.NewReader(bytes.NewReader(zbuf.Bytes()[:zbuf.Len()-12]))
		require.NoError(t, err)
		r := envelope.NewReader(zr, envelope.Limits{})
		for err == nil {
			_, err = r.Next()
		}
		assert.NotEqual(t, io.EOF, err, "a broken stream is not a clean end")
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	})
	t.Run("connection error in a header", func(t *testing.T) {
		r := envelope.NewReader(&failingReader{data: []byte(`{"event_`), err: errConnectionReset}, envelope.Limits{})
		_, err := r.Header()
		require.ErrorIs(t, err, errConnectionReset)
		_, err = r.Next()
		require.ErrorIs(t, err, errConnectionReset)
	})
	t.Run("connection error in a delimited payload", func(t *testing.T) {
		r := envelope.NewReader(&failingReader{data: []byte("{}\n{\"type\":\"a\"}\nabc"), err: errConnectionReset}, envelope.Limits{})
		_, err := r.Next()
		require.ErrorIs(t, err, errConnectionReset)
		assert.Contains(t, err.Error(), "item 0: reading payload")
	})
}

func TestReaderStates(t *testing.T) {
	in := "{\"event_id\":\"abc\"}\n{\"type\":\"a\",\"length\":1}\nx\n"

	t.Run("Next without Header", func(t *testing.T) {
		r := envelope.NewReader(strings.NewReader(in), envelope.Limits{})
		it, err := r.Next()
		require.NoError(t, err)
		assert.Equal(t, "x", string(it.Payload))
		h, err := r.Header()
		require.NoError(t, err)
		assert.Equal(t, "abc", h.EventID)
	})
	t.Run("EOF repeats", func(t *testing.T) {
		r := envelope.NewReader(strings.NewReader(in), envelope.Limits{})
		_, err := r.Next()
		require.NoError(t, err)
		for range 3 {
			_, err = r.Next()
			assert.Equal(t, io.EOF, err)
		}
	})
	t.Run("header error repeats from Next", func(t *testing.T) {
		r := envelope.NewReader(strings.NewReader("[]\n"), envelope.Limits{})
		_, herr := r.Header()
		require.Error(t, herr)
		_, nerr := r.Next()
		assert.Same(t, herr, nerr)
	})
}

func TestPayloadIsNotAliased(t *testing.T) {
	// Items must own their bytes: the read buffer is reused.
	r := envelope.NewReader(strings.NewReader("{}\n{\"type\":\"a\"}\nfirst\n{\"type\":\"b\"}\nsecond\n"), envelope.Limits{})
	first, err := r.Next()
	require.NoError(t, err)
	second, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, "first", string(first.Payload))
	//nolint:testifylint // byte for byte, not JSONEq: the test is that the first header's bytes survive the second read
	assert.Equal(t, `{"type":"a"}`, string(first.Header.Raw))
	assert.Equal(t, "second", string(second.Payload))
}

func BenchmarkParseLargeItem(b *testing.B) {
	payload := bytes.Repeat([]byte(`{"frames":[1,2,3],"x":"abcdefgh"}`), 5<<20/33)
	data := envelope.AppendItem([]byte("{}\n"), envelope.ItemHeader{Type: "profile_chunk"}, payload)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		_, items, err := envelope.Parse(data, envelope.Limits{MaxItemBytes: 50 << 20})
		if err != nil || len(items) != 1 || len(items[0].Payload) != len(payload) {
			b.Fatalf("parse: %v", err)
		}
	}
}

// BenchmarkReadLargeItemStream reads through a source that cannot tell its
// size, as an HTTP body or a decompressor: the buffer grows as bytes arrive.
func BenchmarkReadLargeItemStream(b *testing.B) {
	payload := bytes.Repeat([]byte(`{"frames":[1,2,3],"x":"abcdefgh"}`), 5<<20/33)
	data := envelope.AppendItem([]byte("{}\n"), envelope.ItemHeader{Type: "profile_chunk"}, payload)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := envelope.NewReader(struct{ io.Reader }{bytes.NewReader(data)}, envelope.Limits{MaxItemBytes: 50 << 20})
		it, err := r.Next()
		if err != nil || len(it.Payload) != len(payload) {
			b.Fatalf("read: %v", err)
		}
	}
}

func BenchmarkParseLargeDelimitedItem(b *testing.B) {
	payload := bytes.Repeat([]byte(`{"frames":[1,2,3],"x":"abcdefgh"}`), 5<<20/33)
	data := append([]byte("{}\n{\"type\":\"profile_chunk\"}\n"), payload...)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		_, items, err := envelope.Parse(data, envelope.Limits{MaxItemBytes: 50 << 20})
		if err != nil || len(items) != 1 || len(items[0].Payload) != len(payload) {
			b.Fatalf("parse: %v", err)
		}
	}
}

func BenchmarkParseManyItems(b *testing.B) {
	data := manyItems(100_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := envelope.Parse(data, envelope.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
