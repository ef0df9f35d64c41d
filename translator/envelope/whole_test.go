package envelope_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
)

// TestResetBytesReadsAsTheStream: an envelope held whole reads to the same
// header, items (payloads, sizes, oversized flags) and errors as the same
// bytes streamed, and its payloads are slices of the buffer.
func TestResetBytesReadsAsTheStream(t *testing.T) {
	big := strings.Repeat("p", 100<<10)
	inputs := map[string]string{
		"empty":                   "",
		"header only":             "{}",
		"blank lines":             " \n\n{}\n",
		"ends in blank lines":     "{}\n" + `{"type":"event"}` + "\n{}\n\n\n",
		"sized and delimited":     "{}\n" + `{"type":"event","length":2}` + "\n{}\n" + `{"type":"log"}` + "\n" + big + "\n" + `{"type":"session"}` + "\n",
		"empty payloads":          "{}\n" + `{"type":"event","length":0}` + "\n\n" + `{"type":"log"}` + "\n\n" + `{"type":"event"}`,
		"length past the end":     "{}\n" + `{"type":"event","length":200}` + "\n{}",
		"length without newline":  "{}\n" + `{"type":"event","length":2}` + "\n{}x",
		"oversized with length":   "{}\n" + `{"type":"profile","length":102400}` + "\n" + big + "\n" + `{"type":"event","length":2}` + "\n{}\n",
		"oversized without":       "{}\n" + `{"type":"profile"}` + "\n" + big + "\n" + `{"type":"event"}` + "\n{}\n",
		"CRLF header":             "{}\r\n" + `{"type":"event"}` + "\n{}\n",
		"bad item header":         "{}\n" + `{"length":2}` + "\n{}\n",
		"header too long":         `{"x":"` + big + `"}` + "\n",
		"too many items":          "{}\n" + strings.Repeat(`{"type":"event","length":2}`+"\n{}\n", 20),
		"no newline after header": `{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc"}`,
	}
	for _, path := range fixtures.Files(t, ".envelope") {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		inputs[path] = string(data)
	}
	limits := envelope.Limits{MaxItemBytes: 50 << 10, MaxItems: 10, MaxHeaderBytes: 10 << 10}
	stream := envelope.NewReader(nil, limits)
	whole := envelope.NewReader(nil, limits)
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			stream.Reset(strings.NewReader(in), limits)
			wantH, wantItems, wantErr := stream.All()
			data := []byte(in)
			whole.ResetBytes(data, limits)
			h, items, err := whole.All()
			assert.Equal(t, wantH, h)
			require.Equal(t, wantItems, items)
			if wantErr == nil {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, wantErr.Error())
			}
			// Slices of the buffer, not copies: clearing it clears them.
			clear(data)
			for i, it := range items {
				assert.Equal(t, len(it.Payload), cap(it.Payload), "item %d: the payload's capacity ends with it", i)
				assert.Equal(t, len(it.Payload), bytes.Count(it.Payload, []byte{0}), "item %d: a slice of the buffer", i)
			}
		})
	}
}
