package envelope_test

import (
	"bytes"
	"io"
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
		if err == io.EOF {
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
		{strings.Repeat("f", 3<<20)}, // above what a Reader keeps
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
