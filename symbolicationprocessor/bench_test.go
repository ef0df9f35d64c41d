package symbolicationprocessor

import (
	"context"
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// BenchmarkProcessWarm10kFrames: a profile of 10,000 distinct minified
// frames (the functions of the esbuild test build, served from 2,000
// deployment paths) through the processor once its caches are warm; the
// copy of the input each iteration needs is outside the timing.
func BenchmarkProcessWarm10kFrames(b *testing.B) {
	build := readBuild(b)
	var frames []string
	for _, snippet := range []string{"(t){let e=0;for(let r=2", "(t){for(let e=2;e*e", "t=>{let e=0;for(let r=0", "(e){return e*2}"} {
		line, col, name := build.v8(b, snippet)
		for i := range 2500 {
			frames = append(frames, frameJSON(name, fmt.Sprintf("/srv/v%d/dist/app.min.js", i), line, col))
		}
	}
	pristine := toProfiles(b, nodeChunk(frames, ""))
	if n := pristine.Dictionary().LocationTable().Len() - 1; n != 10_001 {
		b.Fatalf("%d locations, want 10,001", n)
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
	warm := pprofile.NewProfiles()
	pristine.CopyTo(warm)
	if _, err := s.processProfiles(context.Background(), warm); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		pd := pprofile.NewProfiles()
		pristine.CopyTo(pd)
		b.StartTimer()
		if _, err := s.processProfiles(context.Background(), pd); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(frames))*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}
