package sentry

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/sentrytime"
)

// TestFastNanosAgreesWithSentryTime: the scanner's fast path for the
// common timestamp shape reads what the one Sentry time reads, and leaves
// every other shape to it.
func TestFastNanosAgreesWithSentryTime(t *testing.T) {
	tests := []struct {
		text string
		fast bool // the fast path takes it
	}{
		{"1795000000.123456789", true},
		{"1795000000.5", true},
		{"1795000000", true},
		{"1", true},
		{"9223372035.999999999", true},
		{"9223372036.854775807", false}, // the last second: the exact parser
		{"1795000000.1234567895", false},
		{"0.5", false},
		{"-1.5", false},
		{"1.5e9", false},
		{"10000000000.5", false},
		{"1795000000.", false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, end, ok := fastNanos([]byte(tt.text+","), 0)
			require.Equal(t, tt.fast, ok)
			if !ok {
				return
			}
			want, err := sentrytime.ParseSeconds([]byte(tt.text))
			require.NoError(t, err)
			assert.Equal(t, want.UnixNano(), got)
			assert.Equal(t, len(tt.text), end)
		})
	}
}

func FuzzFastNanos(f *testing.F) {
	for _, s := range []string{"1795000000.123456789", "1795000000", "9223372035.999999999", "9999999999.9", "1.", "01.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) { sameAsSentrytime(t, "fastNanos", fastNanos, []byte(text+"}")) })
}
