package symbolicationprocessor

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/complexityguard"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryevent"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// TestComplexityGuardErrorRecords: an error record's cost through the
// processor (its frames resolved, raw_stacktrace kept, the text rendered,
// the grouping key made) grows linearly with its frames, resolvable or not
// (the complexity guard's row symbolication_error_records).
func TestComplexityGuardErrorRecords(t *testing.T) {
	b := readBuild(t)
	cfg := createDefaultConfig().(*Config)
	cfg.SourceMaps.Directories = []string{mapsDir}
	s, err := newFrameProcessor(cfg, componenttest.NewNopTelemetrySettings())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.shutdown(context.Background()) })
	snippets := []string{"t%e===0", "e=e*31+t", "f(r)&&e++", "e*2}"}
	images := fmt.Sprintf(`{"type":"sourcemap","code_file":"/srv/app/dist/app.min.js","debug_id":%q}`, b.debugID)
	complexityguard.CheckLinear(t, "frames of an error", 200, func(tb testing.TB, n int) complexityguard.Sized {
		var frames []string
		for i := range n {
			if i%5 == 4 { // no map: unresolved
				frames = append(frames, fmt.Sprintf(`{"function":"f%d","abs_path":"/srv/other/v%d.js","lineno":1,"colno":%d}`, i, i, i+1))
				continue
			}
			frames = append(frames, b.errorFrame(tb, "/srv/app/dist/app.min.js", snippets[i%len(snippets)]))
		}
		event := nodeError(frames[:n/2], frames[n/2:], images)
		ev, err := sentryevent.Decode(event, sentrysignal.Options{})
		if err != nil {
			tb.Fatal(err)
		}
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		ev.PutLogRecord(rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty(), sentrysignal.Options{})
		var sizer plog.ProtoMarshaler
		return complexityguard.Sized{
			Run: func() {
				if _, err := s.processLogs(context.Background(), ld); err != nil {
					tb.Fatal(err)
				}
			},
			Input:  func() int64 { return int64(len(event)) },
			Output: func() int64 { return int64(sizer.LogsSize(ld)) },
		}
	})
}

// FuzzProcessLogs: any Sentry event, as the receiver writes it, goes
// through the processor without a panic, and a record that keeps a
// rendered text keeps one.
func FuzzProcessLogs(f *testing.F) {
	b := readBuild(f)
	images := fmt.Sprintf(`{"type":"sourcemap","code_file":"/srv/app/dist/app.min.js","debug_id":%q}`, b.debugID)
	f.Add(nodeError([]string{b.errorFrame(f, "/srv/app/dist/app.min.js", "t%e===0")}, []string{b.errorFrame(f, "/srv/app/dist/app.min.js", "e*2}")}, images))
	f.Add([]byte(`{"platform":"native","exception":{"values":[{"stacktrace":{"frames":[{"instruction_addr":"0x10"},{"instruction_addr":"0x1"}]}}]},
"debug_meta":{"images":[{"type":"elf","code_id":"ab","image_addr":"0x0"}]}}`))
	f.Add([]byte(`{"platform":"java","exception":[{"stacktrace":{"frames":[{"module":"a.a","function":"a","lineno":2}]}}],"debug_meta":{"images":[{"type":"proguard","uuid":"x"}]}}`))
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
	f.Fuzz(func(t *testing.T, event []byte) {
		ev, err := sentryevent.Decode(event, sentrysignal.Options{})
		if err != nil {
			return
		}
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("sentry.platform", ev.Resource.Platform)
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		ev.PutLogRecord(lr, sentrysignal.Options{})
		_, had := lr.Attributes().Get("exception.stacktrace")
		if _, err := s.processLogs(context.Background(), ld); err != nil {
			t.Fatal(err)
		}
		text, has := lr.Attributes().Get("exception.stacktrace")
		if had != has || (has && strings.TrimSpace(text.Str()) == "" && text.Str() != "") {
			t.Fatalf("exception.stacktrace present %v → %v", had, has)
		}
	})
}
