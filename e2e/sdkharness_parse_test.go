package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseMetricLine checks the Prometheus text reader the SDK runs use to
// read the collector's discard counters.
func TestParseMetricLine(t *testing.T) {
	tests := []struct {
		name       string
		line       string
		wantName   string
		wantLabels map[string]string
		wantValue  float64
		wantErr    bool
	}{
		{
			name:       "labels",
			line:       `otelcol_receiver_sentryprofile_discarded_items{reason="profiling_invalid_json",otel_scope_name="x"} 3`,
			wantName:   "otelcol_receiver_sentryprofile_discarded_items",
			wantLabels: map[string]string{"reason": "profiling_invalid_json", "otel_scope_name": "x"},
			wantValue:  3,
		},
		{
			name:       "comma and brace inside a quoted value",
			line:       `m{a="x,y}",b="q\"r"} 1.5e+02 1700000000000`,
			wantName:   "m",
			wantLabels: map[string]string{"a": "x,y}", "b": `q"r`},
			wantValue:  150,
		},
		{
			name:       "no labels",
			line:       `otelcol_process_uptime 1.98`,
			wantName:   "otelcol_process_uptime",
			wantLabels: map[string]string{},
			wantValue:  1.98,
		},
		{name: "no value", line: `m{a="b"}`, wantErr: true},
		{name: "value that is not a number", line: `m five`, wantErr: true},
		{name: "unbalanced braces", line: `m}{ 1`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, labels, value, err := parseMetricLine(tt.line)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantName, name)
			assert.Equal(t, tt.wantLabels, labels)
			assert.InDelta(t, tt.wantValue, value, 1e-9)
		})
	}
}
