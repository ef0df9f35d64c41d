package envelope_test

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
)

// envelopeOf writes an envelope with one length-delimited item per payload.
func envelopeOf(payloads ...string) []byte {
	out := envelope.Header{EventID: "9ec79c33ec9942ab8353589fcb2e04dc"}.AppendJSON(nil)
	out = append(out, '\n')
	for _, p := range payloads {
		out = envelope.AppendItem(out, envelope.ItemHeader{Type: "profile_chunk"}, []byte(p))
	}
	return out
}

// readAll reads every item through r after resetting it onto data, read as
// a stream (the way an HTTP body is).
func readAll(t *testing.T, r *envelope.Reader, data []byte) []envelope.Item {
	t.Helper()
	r.Reset(struct{ io.Reader }{bytes.NewReader(data)}, envelope.Limits{})
	var items []envelope.Item
	for {
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			return items
		}
		require.NoError(t, err)
		items = append(items, it)
	}
}

// TestReaderReset reads envelopes of growing, shrinking and oversized
// payloads through one Reader: each must read as with a new Reader, and a
// payload must not be writable past its end (into the next one's memory).
func TestReaderReset(t *testing.T) {
	envelopes := [][]string{
		{"small", strings.Repeat("a", 70_000)},
		{strings.Repeat("b", 200_000), "", "c"},
		{"d", "e"},
		{strings.Repeat("f", 9<<20)}, // above what a Reader keeps
		{"g", strings.Repeat("h", 1000)},
	}
	r := envelope.NewReader(bytes.NewReader(nil), envelope.Limits{})
	for i, payloads := range envelopes {
		data := envelopeOf(payloads...)
		_, want, err := envelope.Parse(data, envelope.Limits{})
		require.NoError(t, err)
		got := readAll(t, r, data)
		require.Len(t, got, len(want), "envelope %d", i)
		for j := range got {
			require.Equal(t, want[j].Header, got[j].Header, "envelope %d item %d", i, j)
			require.Equal(t, want[j].Payload, got[j].Payload, "envelope %d item %d", i, j)
			require.Equal(t, len(got[j].Payload), cap(got[j].Payload), "envelope %d item %d: payload capacity reaches into the next", i, j)
		}
		// Appending to a payload must leave the next one intact.
		if len(got) > 1 {
			next := string(got[1].Payload)
			_ = append(got[0].Payload, 'X')
			require.Equal(t, next, string(got[1].Payload))
		}
	}
}

// FuzzReaderReset reads two inputs one after the other through one Reader,
// as a stream: the second must read exactly as Parse reads it alone, items
// and error, whatever the first left in the Reader's memory.
func FuzzReaderReset(f *testing.F) {
	f.Add(envelopeOf(strings.Repeat("a", 70_000), "b"), envelopeOf("c", "d"))
	f.Add(envelopeOf("x"), []byte("{}\n{\"type\":\"a\",\"length\":10}\nabc"))
	f.Add([]byte("{}\n{\"type\":\"a\"}\nabc\n"), envelopeOf("", "e"))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		r := envelope.NewReader(bytes.NewReader(nil), envelope.Limits{})
		for _, data := range [][]byte{first, second} {
			r.Reset(struct{ io.Reader }{bytes.NewReader(data)}, envelope.Limits{})
			_, want, wantErr := envelope.Parse(data, envelope.Limits{})
			var got []envelope.Item
			var err error
			for {
				var it envelope.Item
				if it, err = r.Next(); err != nil {
					break
				}
				got = append(got, it)
			}
			if errors.Is(err, io.EOF) {
				err = nil
			}
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("reused reader error %v, Parse error %v", err, wantErr)
			}
			if len(got) != len(want) {
				t.Fatalf("reused reader read %d items, Parse %d", len(got), len(want))
			}
			for i := range got {
				if string(got[i].Payload) != string(want[i].Payload) || got[i].Header.Type != want[i].Header.Type {
					t.Fatalf("item %d differs from Parse", i)
				}
			}
		}
	})
}

// delimitedEnvelopeOf writes an envelope whose items have no length, as
// @sentry/node and browsers send them: each payload runs to its newline.
func delimitedEnvelopeOf(payloads ...string) []byte {
	out := []byte(`{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc"}` + "\n")
	for _, p := range payloads {
		out = append(out, `{"type":"profile_chunk"}`+"\n"+p+"\n"...)
	}
	return out
}

// TestReaderResetDelimited: payloads without a length go to the Reader's
// kept memory too, each capped at its end, and reading one more envelope of
// them allocates no more than reading it with lengths does.
func TestReaderResetDelimited(t *testing.T) {
	envelopes := [][]string{
		{"small", strings.Repeat("a", 70_000)},
		{strings.Repeat("b", 200_000), "", "c"},
		{strings.Repeat("f", 9<<20)}, // above what a Reader keeps
		{"g", strings.Repeat("h", 1000)},
	}
	r := envelope.NewReader(bytes.NewReader(nil), envelope.Limits{})
	for i, payloads := range envelopes {
		got := readAll(t, r, delimitedEnvelopeOf(payloads...))
		require.Len(t, got, len(payloads), "envelope %d", i)
		for j := range got {
			require.Equal(t, payloads[j], string(got[j].Payload), "envelope %d item %d", i, j)
			require.Equal(t, len(got[j].Payload), cap(got[j].Payload), "envelope %d item %d: payload capacity reaches into the next", i, j)
		}
		if len(got) > 1 {
			next := string(got[1].Payload)
			_ = append(got[0].Payload, 'X')
			require.Equal(t, next, string(got[1].Payload))
		}
	}

	payloads := []string{strings.Repeat("n", 135_000), `{"type":"transaction"}`}
	allocs := func(data []byte) float64 {
		src := bytes.NewReader(data)
		stream := struct{ io.Reader }{src}
		return testing.AllocsPerRun(20, func() {
			src.Reset(data)
			r.Reset(stream, envelope.Limits{})
			for {
				if _, err := r.Next(); err != nil {
					require.ErrorIs(t, err, io.EOF)
					return
				}
			}
		})
	}
	withLengths, delimited := allocs(envelopeOf(payloads...)), allocs(delimitedEnvelopeOf(payloads...))
	t.Logf("allocations per envelope: %.0f with lengths, %.0f without", withLengths, delimited)
	require.LessOrEqual(t, delimited, withLengths, "an envelope without lengths allocates more than one with them")
}

// TestReaderKeepsLargePayloadMemory reads the same envelope twice through
// one Reader, as a stream, and measures the bytes the second read
// allocates: a payload up to the kept bound reuses the memory of the
// first, one above it grows its buffer again.
func TestReaderKeepsLargePayloadMemory(t *testing.T) {
	tests := []struct {
		name string
		size int
		kept bool
	}{
		{"a 60-s python chunk's size", 5_250_000, true},
		{"above the kept bound", 9 << 20, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := envelopeOf(strings.Repeat("p", tt.size))
			r := envelope.NewReader(bytes.NewReader(nil), envelope.Limits{})
			readAll(t, r, data)
			r.Reset(nil, envelope.Limits{}) // as a server returns it to its pool
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			items := readAll(t, r, data)
			runtime.ReadMemStats(&after)
			require.Len(t, items, 1)
			require.Len(t, items[0].Payload, tt.size)
			allocated := after.TotalAlloc - before.TotalAlloc
			if tt.kept {
				require.Less(t, allocated, uint64(1<<20), "the second read regrew its payload buffer")
			} else {
				require.GreaterOrEqual(t, allocated, uint64(tt.size), "a payload above the bound must not be kept")
			}
		})
	}
}
