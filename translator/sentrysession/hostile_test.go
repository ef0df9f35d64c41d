package sentrysession

import (
	"errors"
	"math"
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// TestHostileAggregateCounts: a bucket's counts are Relay's u32; a larger
// count drops the bucket (named in a *PartialError) instead of summing
// past int64. Before: exited = 2^63−1 plus crashed = 1 exported
// sentry.sessions.started = −9 223 372 036 854 775 808.
func TestHostileAggregateCounts(t *testing.T) {
	const started = `"started":"2026-11-25T22:00:00Z"`
	tests := []struct {
		name       string
		bucket     string
		wantPoints int
		wantField  string // the member named when the bucket is dropped
	}{
		{"largest u32 counts sum without overflow", `{` + started + `,"exited":4294967295,"errored":4294967295,"unhandled":4294967295,"crashed":4294967295,"abnormal":4294967295}`, 7, ""},
		{"int64 max plus one", `{` + started + `,"exited":9223372036854775807,"crashed":1}`, 0, "exited"},
		{"past u32", `{` + started + `,"crashed":4294967296}`, 0, "crashed"},
		{"past int64", `{` + started + `,"errored":18446744073709551615}`, 0, "errored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := pmetric.NewMetricSlice()
			n, err := AppendSessions([]byte(`{"aggregates":[`+tt.bucket+`],"attrs":{"release":"r"}}`), sentrysignal.Options{}, dst)
			for _, p := range points(dst) {
				if p.value < 0 {
					t.Errorf("%s = %v: negative count", p.metric, p.value)
				}
			}
			var pe *sentrysignal.PartialError
			switch {
			case tt.wantField == "" && (n != tt.wantPoints || err != nil):
				t.Errorf("appended %d, %v; want %d points", n, err, tt.wantPoints)
			case tt.wantField != "" && (n != 0 || !errors.As(err, &pe) || pe.Errors[0].Field != tt.wantField):
				t.Errorf("appended %d, %v; want the bucket dropped for %q", n, err, tt.wantField)
			}
			if tt.wantField == "" {
				if got := dst.At(0).Sum().DataPoints().At(0).IntValue(); got != 5*4294967295 {
					t.Errorf("started = %d, want %d", got, int64(5*4294967295))
				}
			}
		})
	}
}

// TestHostileErrorCount: an update's "errors" past int64 (Relay reads a
// u64) counts as the largest int64, not as no errors. Before, 2⁶⁴−1
// errors read as none: the session ended neither errored nor with errors.
func TestHostileErrorCount(t *testing.T) {
	tests := []struct {
		errors     string
		wantErrors float64
	}{
		{"18446744073709551615", math.MaxInt64},
		{"9223372036854775808", math.MaxInt64},
		{"1e300", math.MaxInt64},
		{"3.0", 3},
		{"7", 7},
		{"1e400", math.MaxInt64}, // past float64 too
	}
	for _, tt := range tests {
		dst := pmetric.NewMetricSlice()
		payload := `{"started":"2026-11-25T22:00:00Z","status":"exited","errors":` + tt.errors + `}`
		if _, err := AppendSession([]byte(payload), sentrysignal.Options{}, dst); err != nil {
			t.Fatal(err)
		}
		var errored bool
		var count float64
		for _, p := range points(dst) {
			switch p.metric {
			case MetricErrored:
				errored = true
			case MetricErrors:
				count = p.value
			}
		}
		if !errored || count != tt.wantErrors {
			t.Errorf("errors %s: errored %v, %v errors; want true, %v", tt.errors, errored, count, tt.wantErrors)
		}
	}
}
