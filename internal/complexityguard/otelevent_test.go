package complexityguard

import (
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/otelevent"
)

// The exporter's other signals: any OTLP sender (the otlp receiver has no
// auth) chooses how many records, attributes and histogram buckets it sends.

// exceptionLogs is one resource of n error log records, each with a
// two-frame Python traceback and a few attributes.
func exceptionLogs(n int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "shop")
	rl.Resource().Attributes().PutStr("service.version", "1.2.3")
	records := rl.ScopeLogs().AppendEmpty().LogRecords()
	for i := range n {
		lr := records.AppendEmpty()
		lr.SetSeverityNumber(plog.SeverityNumberError)
		lr.Attributes().PutStr("exception.type", "ValueError")
		lr.Attributes().PutStr("exception.message", fmt.Sprintf("order %d has no lines", i))
		lr.Attributes().PutStr("exception.stacktrace", fmt.Sprintf("Traceback (most recent call last):\n"+
			"  File \"/app/shop/views.py\", line %d, in checkout\n    place(order)\n"+
			"  File \"/app/shop/orders.py\", line 17, in place\n    raise ValueError(msg)\nValueError: order %d has no lines\n", i%900+1, i))
		lr.Attributes().PutInt("attempt", int64(i%5))
		lr.Attributes().PutStr("tenant", "acme")
	}
	return ld
}

// exceptionAttributes is one error log record with n attributes.
func exceptionAttributes(n int) plog.Logs {
	ld := exceptionLogs(1)
	attrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes()
	raw := attrs.AsRaw()
	for i := range n {
		raw[fmt.Sprintf("attr.%06d", i)] = strings.Repeat("v", i%13)
	}
	// FromRaw builds the map in one pass; Put per key would scan it.
	if err := attrs.FromRaw(raw); err != nil {
		panic(err)
	}
	return ld
}

// histogramMetrics is one delta histogram point of n buckets, each counting
// one observation.
func histogramMetrics(n int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "shop")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("checkout.duration")
	m.SetUnit("ms")
	h := m.SetEmptyHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	dp := h.DataPoints().AppendEmpty()
	for i := range n {
		dp.ExplicitBounds().Append(float64(i + 1))
		dp.BucketCounts().Append(1)
	}
	dp.BucketCounts().Append(0)
	dp.SetCount(uint64(n))
	dp.SetSum(float64(n*(n+1)) / 2)
	return md
}

func oteleventRows() []row {
	events := func(ld func(int) plog.Logs) func(testing.TB, int) sized {
		return func(_ testing.TB, n int) sized {
			in := ld(n)
			var out, work int64
			return sized{
				run: func() {
					out, work = 0, 0
					otelevent.FromLogs(in, otelevent.EventOptions{InAppPrefixes: []string{"shop"}, TagAttributes: []string{"tenant"}},
						func(ev otelevent.Event) { out += int64(len(ev.Payload)); work++ })
				},
				observe: func() outcome { return outcome{input: logsSize(in), output: out, work: work} },
			}
		}
	}
	return []row{
		{
			name: "otel_exception_records", dimension: "error log records of one request", n: 200, clock: ThreadClock,
			build: events(exceptionLogs),
		},
		{
			name: "otel_exception_attributes", dimension: "attributes of one error log record", n: 2000, maxN: 4000, clock: ThreadClock,
			build: events(exceptionAttributes),
		},
		{
			// 8n stays under the translator's 1,000 observations per point,
			// past which the point is dropped.
			name: "otel_histogram_buckets", dimension: "buckets of one histogram point", n: 100, maxN: 120, clock: ThreadClock,
			build: func(_ testing.TB, n int) sized {
				in := histogramMetrics(n)
				var out, work int64
				return sized{
					run: func() {
						out, work = 0, 0
						otelevent.FromMetrics(in, otelevent.MetricOptions{}, func(c otelevent.Container) {
							out += int64(len(c.Payload))
							work += int64(c.Items)
						})
					},
					observe: func() outcome {
						var m pmetric.ProtoMarshaler
						return outcome{input: int64(m.MetricsSize(in)), output: out, work: work}
					},
				}
			},
			// One observation per bucket count, at most the translator's
			// bound per point, each a JSON item of about 300 bytes.
			maxOutput: func(input int64) int64 { return 400*input + 64<<10 },
		},
	}
}

func logsSize(ld plog.Logs) int64 {
	var m plog.ProtoMarshaler
	return int64(m.LogsSize(ld))
}
