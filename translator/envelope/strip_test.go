package envelope

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStrip(t *testing.T) {
	isProfile := func(typ string) bool { return typ == "profile" || typ == "profile_chunk" }
	tests := []struct {
		name    string
		in      string
		want    string
		removed int
	}{
		{
			name:    "items with and without length, binary attachment kept byte for byte",
			in:      "{\"event_id\":\"9ec79c33ec9942ab8353589fcb2e04dc\"}\n{\"type\":\"event\"}\n{\"x\":1}\n{\"type\":\"profile_chunk\",\"length\":7}\n{\"p\":1}\n{\"type\":\"attachment\",\"length\":4}\n\x00\n\xff\r\n{\"type\":\"profile\"}\n{\"q\":2}\n",
			want:    "{\"event_id\":\"9ec79c33ec9942ab8353589fcb2e04dc\"}\n{\"type\":\"event\"}\n{\"x\":1}\n{\"type\":\"attachment\",\"length\":4}\n\x00\n\xff\r\n",
			removed: 2,
		},
		{
			name:    "last item without a trailing newline",
			in:      "{}\n{\"type\":\"session\"}\n{\"s\":1}\n{\"type\":\"profile\"}\n{\"q\":2}",
			want:    "{}\n{\"type\":\"session\"}\n{\"s\":1}\n",
			removed: 1,
		},
		{
			name: "nothing to strip: the same bytes",
			in:   "{}\n{\"type\":\"event\",\"length\":2}\n{}\n",
			want: "{}\n{\"type\":\"event\",\"length\":2}\n{}\n",
		},
		{
			name: "header only",
			in:   "{}",
			want: "{}",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, removed, err := Strip([]byte(tt.in), isProfile)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(out))
			assert.Equal(t, tt.removed, removed)
			// What is left parses as an envelope with the kept items.
			_, items, err := Parse(out, Limits{})
			require.NoError(t, err)
			for _, it := range items {
				assert.False(t, isProfile(it.Header.Type))
			}
		})
	}
}

func TestStripMalformed(t *testing.T) {
	for _, in := range []string{
		"{}\nnot json\n",
		"{}\n{\"type\":\"event\",\"length\":99}\n{}\n",
		"{}\n{\"type\":\"event\",\"length\":-1}\n{}\n",
	} {
		_, _, err := Strip([]byte(in), func(string) bool { return true })
		assert.Error(t, err, strings.ReplaceAll(in, "\n", `\n`))
	}
}
