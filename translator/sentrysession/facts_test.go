package sentrysession

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"
)

// TestFacts: a session update names its attrs' release and environment
// whether it has points or not; an aggregate only when it has points,
// the labels those points carry.
func TestFacts(t *testing.T) {
	tests := []struct {
		name    string
		decode  sentrysignal.MetricsDecoder
		payload string
		want    sentryresource.Resource
		points  int
		// fromPoints: the facts are what the points' labels name
		fromPoints bool
	}{
		{"running update", UpdateMetrics, `{"started":1,"status":"ok","attrs":{"release":"w@1","environment":"prod"}}`,
			sentryresource.Resource{Release: "w@1", Environment: "prod"}, 0, false},
		{"numeric release", UpdateMetrics, `{"started":1,"init":true,"attrs":{"release":7}}`,
			sentryresource.Resource{Release: "7"}, 1, false},
		{"aggregate", AggregateMetrics, `{"aggregates":[{"started":1,"exited":2}],"attrs":{"release":"w@1"}}`,
			sentryresource.Resource{Release: "w@1"}, 2, true},
		{"aggregate of empty buckets", AggregateMetrics, `{"aggregates":[{"started":1}],"attrs":{"release":"w@1"}}`,
			sentryresource.Resource{}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			metrics, err := tt.decode([]byte(tt.payload), sentrysignal.Options{})
			if err != nil {
				t.Fatal(err)
			}
			assert.Equal(t, tt.want, metrics.Resource)
			dst := pmetric.NewMetricSlice()
			assert.Equal(t, tt.points, metrics.Append(dst))
			if tt.fromPoints {
				assert.Equal(t, tt.want, signaltest.ResourceOfMetrics(dst), "as read back from the points")
			}
		})
	}
}
