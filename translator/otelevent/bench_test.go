package otelevent

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
)

// BenchmarkFromLogs: records with a Java exception (5 frames, one cause)
// and five attributes each, turned into events.
func BenchmarkFromLogs(b *testing.B) {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	testResource(rl.Resource())
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	for i := 0; i < 100; i++ {
		lr := lrs.AppendEmpty()
		lr.SetSeverityNumber(plog.SeverityNumberError)
		lr.Attributes().PutStr("exception.type", "java.lang.IllegalStateException")
		lr.Attributes().PutStr("exception.message", "order 17 has no lines")
		lr.Attributes().PutStr("exception.stacktrace", javaTrace)
		lr.Attributes().PutStr("tenant", "acme")
		lr.Attributes().PutInt("attempt", 3)
	}
	opts := EventOptions{InAppPrefixes: []string{"com.shop."}, TagAttributes: []string{"tenant"}}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		FromLogs(ld, opts, func(Event) { n++ })
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "exceptions/s")
}
