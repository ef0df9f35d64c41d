package sentrymetric

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"
)

// TestMetricsFacts: the resource a metrics item's decoder reports is the
// one the first point of each of its metrics names, read back as a
// receiver once did, and for the captured node item its program.
func TestMetricsFacts(t *testing.T) {
	node := sentryresource.Resource{Release: "shop@1.4.2", Environment: "production", ServerName: "vm",
		SDK: sentry.ClientSDK{Name: "sentry.javascript.node", Version: "11.1.0"}}
	tests := []struct {
		name    string
		decode  sentrysignal.MetricsDecoder
		payload []byte
		want    *sentryresource.Resource // nil: only as read back
	}{
		{"node capture", Metrics, signaltest.ReadTestdata(t, "node11_captured_metrics_1.json"), &node},
		{"python capture", Metrics, signaltest.ReadTestdata(t, "python268_captured_trace_metric_1.json"), nil},
		{"go capture", Metrics, signaltest.ReadTestdata(t, "go050_captured_trace_metric_1.json"), nil},
		{"node metrics", Metrics, signaltest.ReadTestdata(t, "node11_metrics.json"), nil},
		{"statsd capture", StatsdMetrics, signaltest.ReadTestdata(t, "node8_captured_statsd.txt"), nil},
		{"only a metric's first point names it", Metrics, []byte(`{"items":[
			{"timestamp":1,"name":"a","type":"counter","value":1},
			{"timestamp":2,"name":"a","type":"counter","value":1,"attributes":{"sentry.release":{"type":"string","value":"late@1"}}},
			{"timestamp":3,"name":"b","type":"gauge","value":2,"attributes":{"sentry.release":{"type":"string","value":"b@1"}}}]}`),
			&sentryresource.Resource{Release: "b@1"}},
		{"statsd tags of a metric's first bucket", StatsdMetrics, []byte("a:1|c|#sentry.environment:prod|T1\n" +
			"a:1|c|#sentry.release:late@1|T2\nb:2|g|#sentry.release:b@1,server.address:vm|T3\n"),
			&sentryresource.Resource{Release: "b@1", Environment: "prod", ServerName: "vm"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			metrics, _ := tt.decode(tt.payload, sentrysignal.Options{})
			if metrics.Append == nil {
				t.Fatal("nothing to append")
			}
			dst := pmetric.NewMetricSlice()
			metrics.Append(dst)
			if got, back := metrics.Resource, signaltest.ResourceOfMetrics(dst); got != back {
				t.Errorf("facts %+v\nread back %+v", got, back)
			}
			if tt.want != nil && metrics.Resource != *tt.want {
				t.Errorf("facts %+v\nwant %+v", metrics.Resource, *tt.want)
			}
		})
	}
}
