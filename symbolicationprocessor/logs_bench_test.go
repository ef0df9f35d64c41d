package symbolicationprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/plog"
)

// BenchmarkLogsWarmErrors: error records of @sentry/node's shape, a cause
// and the raised exception of 30 frames each at executing positions of
// the esbuild test build, through the processor once its caches are warm:
// every frame resolved, the text re-rendered, the grouping key made. A
// batch is 100 records; copying the input is outside the timing.
func BenchmarkLogsWarmErrors(b *testing.B) {
	build := readBuild(b)
	snippets := []string{"t%e===0", "e=e*31+t", "f(r)&&e++", "e*2}", "console.log(l(100)"}
	var frames []string
	for i := range 30 {
		frames = append(frames, build.errorFrame(b, "/srv/app/dist/app.min.js", snippets[i%len(snippets)]))
	}
	images := `{"type":"sourcemap","code_file":"/srv/app/dist/app.min.js","debug_id":"` + build.debugID + `"}`
	one := eventLogs(b, "node", nodeError(frames, frames, images))
	const batch = 100
	pristine := plog.NewLogs()
	for range batch {
		one.ResourceLogs().At(0).CopyTo(pristine.ResourceLogs().AppendEmpty())
	}
	cfg := createDefaultConfig().(*Config)
	cfg.SourceMaps.Directories = []string{mapsDir}
	s, err := newFrameProcessor(cfg, componenttest.NewNopTelemetrySettings())
	if err != nil {
		b.Fatal(err)
	}
	if err := s.start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.shutdown(context.Background()) })
	warm := plog.NewLogs()
	pristine.CopyTo(warm)
	if _, err := s.processLogs(context.Background(), warm); err != nil {
		b.Fatal(err)
	}
	if v, _ := recordOf(warm).Attributes().Get("exception.stacktrace"); v.Str() == "" {
		b.Fatal("nothing rendered")
	}
	b.Run("processor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			ld := plog.NewLogs()
			pristine.CopyTo(ld)
			b.StartTimer()
			if _, err := s.processLogs(context.Background(), ld); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(batch*float64(b.N)/b.Elapsed().Seconds(), "errors/s")
		b.ReportMetric(batch*60*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
	})
	// The grouping key alone (translator/sentrygrouping), of the same
	// resolved records: what of the processor's time is grouping's.
	b.Run("grouping_key_only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, rl := range warm.ResourceLogs().All() {
				putGroupingKey(rl.ScopeLogs().At(0).LogRecords().At(0), "node")
			}
		}
		b.ReportMetric(batch*float64(b.N)/b.Elapsed().Seconds(), "errors/s")
	})
}
