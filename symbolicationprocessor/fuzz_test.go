package symbolicationprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// FuzzProcessProfiles: any OTLP profiles request (from the OTLP receiver,
// say) goes through the processor without a panic, whatever its
// dictionary indices point at.
func FuzzProcessProfiles(f *testing.F) {
	b := readBuild(f)
	line, col, name := b.v8(f, "(t){for(let e=2;e*e")
	var m pprofile.ProtoMarshaler
	for _, chunk := range [][]byte{
		nodeChunk([]string{frameJSON(name, "/srv/app/dist/app.min.js", line, col), frameJSON("q", "/x.js", 1, 1)}, ""),
		androidChunk("7d4bc6c9-5a6b-4b3a-9d1f-0a1b2c3d4e5f", `{"function":"a","module":"a.a","lineno":2}`),
	} {
		seed, err := m.MarshalProfiles(toProfiles(f, chunk))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(seed)
	}
	cfg := createDefaultConfig().(*Config)
	cfg.SourceMaps.Directories = []string{mapsDir}
	cfg.ProGuard.Directories = []string{f.TempDir()}
	cfg.Native.Directories = []string{f.TempDir()}
	s, err := newFrameProcessor(cfg, componenttest.NewNopTelemetrySettings())
	if err != nil {
		f.Fatal(err)
	}
	if err := s.start(context.Background(), componenttest.NewNopHost()); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = s.shutdown(context.Background()) })
	var um pprofile.ProtoUnmarshaler
	f.Fuzz(func(t *testing.T, data []byte) {
		pd, err := um.UnmarshalProfiles(data)
		if err != nil {
			return
		}
		if _, err := s.processProfiles(context.Background(), pd); err != nil {
			t.Fatal(err)
		}
	})
}
