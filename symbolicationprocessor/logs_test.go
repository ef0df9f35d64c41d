package symbolicationprocessor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryevent"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrygrouping"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// eventLogs is the receiver's record of a Sentry event (translator/
// sentryevent), under a resource with the event's platform.
func eventLogs(t testing.TB, platform string, event []byte) plog.Logs {
	t.Helper()
	ev, err := sentryevent.Decode(event, sentrysignal.Options{})
	require.NoError(t, err)
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(sentryattr.Platform, platform)
	ev.PutLogRecord(rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty(), sentrysignal.Options{})
	return ld
}

func recordOf(ld plog.Logs) plog.LogRecord {
	return ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
}

// exceptionFrames are the frames of exception i of a record, as maps.
func exceptionFrames(t testing.TB, lr plog.LogRecord, i int) []map[string]any {
	t.Helper()
	v, ok := lr.Attributes().Get(sentryattr.EventException)
	require.True(t, ok)
	values := v.Map().AsRaw()["values"].([]any)
	require.Greater(t, len(values), i)
	var out []map[string]any
	for _, f := range values[i].(map[string]any)["stacktrace"].(map[string]any)["frames"].([]any) {
		out = append(out, f.(map[string]any))
	}
	return out
}

// newLogsProcessor makes the processor's logs pipeline over a sink.
func newLogsProcessor(t testing.TB, cfg *Config, sink *consumertest.LogsSink) func(plog.Logs) {
	t.Helper()
	require.NoError(t, cfg.Validate())
	p, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	return func(ld plog.Logs) { require.NoError(t, p.ConsumeLogs(context.Background(), ld)) }
}

// jsErrorFrame is a node frame at an executing position of the esbuild
// build, found by the bundle text there.
func (b jsBuild) errorFrame(t testing.TB, absPath, snippet string) string {
	for i, l := range strings.Split(b.bundle, "\n") {
		if c := strings.Index(l, snippet); c >= 0 {
			return fmt.Sprintf(`{"function":"?","abs_path":%q,"filename":%q,"module":"app.min","lineno":%d,"colno":%d,"in_app":true}`,
				absPath, "app:///dist/app.min.js", i+1, c+1)
		}
	}
	t.Fatalf("%q not in the bundle", snippet)
	return ""
}

// nodeError is an error event of @sentry/node's shape: a TypeError caused
// by an Error, frames outermost first, with the bundle's debug image.
func nodeError(cause, raised []string, debugImages string) []byte {
	return fmt.Appendf(nil, `{"event_id":"9f1c5a0e8d3b4c2a9e7f6d5c4b3a2910","timestamp":1764000000.5,"platform":"node","level":"error",
"exception":{"values":[
 {"type":"Error","value":"connect ECONNREFUSED","mechanism":{"type":"chained","source":"cause","exception_id":1,"parent_id":0},"stacktrace":{"frames":[%s]}},
 {"type":"TypeError","value":"could not load order 4711","mechanism":{"type":"generic","handled":true,"exception_id":0},"stacktrace":{"frames":[%s]}}]},
"debug_meta":{"images":[%s]}}`, strings.Join(cause, ","), strings.Join(raised, ","), debugImages)
}

func TestLogsResolveJavaScriptErrors(t *testing.T) {
	b := readBuild(t)
	const bundleURL = "/srv/app/dist/app.min.js"
	images := fmt.Sprintf(`{"type":"sourcemap","code_file":%q,"debug_id":%q}`, bundleURL, b.debugID)
	internal := `{"function":"process.processTicksAndRejections","abs_path":"node:internal/process/task_queues","lineno":95,"colno":5,"in_app":false}`
	event := nodeError(
		[]string{internal, b.errorFrame(t, bundleURL, "t%e===0")},
		[]string{b.errorFrame(t, bundleURL, "e=e*31+t"), b.errorFrame(t, bundleURL, "f(r)&&e++"), b.errorFrame(t, bundleURL, "e*2}")},
		images)
	sink := new(consumertest.LogsSink)
	cfg := testConfig()
	cfg.SourceMaps.Directories = []string{mapsDir}
	consume := newLogsProcessor(t, cfg, sink)
	before := sentrygrouping.Group(sentrygrouping.FromLogRecord(recordOf(eventLogs(t, "node", event)), "node"))
	consume(eventLogs(t, "node", event))
	require.Len(t, sink.AllLogs(), 1)
	lr := recordOf(sink.AllLogs()[0])

	pos := func(marker, ident string) (int64, int64) {
		l, c := b.at(t, marker, ident)
		return int64(l), int64(c)
	}
	type frame struct {
		function, file string
		line, col      int64
	}
	want := func(function, marker, ident string) frame {
		l, c := pos(marker, ident)
		return frame{function, "src/app.js", l, c}
	}
	tests := []struct {
		name      string
		exception int
		want      []frame
	}{
		{"the cause: node's own frame untouched, the app's resolved", 0, []frame{
			{"process.processTicksAndRejections", "node:internal/process/task_queues", 95, 5},
			want("isPrime", "candidate % d", "candidate"),
		}},
		{"the raised exception, outermost first", 1, []frame{
			want("hashText", "h = (h * 31", "h ="),
			want("computePrimes", "if (isPrime(n))", "isPrime"),
			want("Matrix.multiplyBy", "return other * 2", "other"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frames := exceptionFrames(t, lr, tt.exception)
			require.Len(t, frames, len(tt.want))
			for j, w := range tt.want {
				f := frames[j]
				got := frame{f["function"].(string), f["abs_path"].(string), f["lineno"].(int64), f["colno"].(int64)}
				assert.Equal(t, w, got, "frame %d", j)
				if w.file == "src/app.js" {
					assert.Equal(t, map[string]any{"symbolicated": true, "resolved_with": "debug-id"}, f["data"])
					assert.Equal(t, "src/app.js", f["filename"])
					assert.Equal(t, true, f["in_app"], "the frame's other fields stay")
				} else {
					assert.NotContains(t, f, "data")
				}
			}
		})
	}

	t.Run("the frames as sent are kept in raw_stacktrace", func(t *testing.T) {
		sent := recordOf(eventLogs(t, "node", event))
		sentValues, _ := sent.Attributes().Get(sentryattr.EventException)
		gotValues, _ := lr.Attributes().Get(sentryattr.EventException)
		for i := range 2 {
			raw, ok := gotValues.Map().AsRaw()["values"].([]any)[i].(map[string]any)["raw_stacktrace"]
			require.True(t, ok)
			assert.Equal(t, sentValues.Map().AsRaw()["values"].([]any)[i].(map[string]any)["stacktrace"], raw)
		}
	})
	t.Run("exception.stacktrace is rendered from the resolved frames", func(t *testing.T) {
		text, ok := lr.Attributes().Get("exception.stacktrace")
		require.True(t, ok)
		l, c := pos("return other * 2", "other")
		assert.True(t, strings.HasPrefix(text.Str(), fmt.Sprintf("TypeError: could not load order 4711\n    at Matrix.multiplyBy (src/app.js:%d:%d)\n", l, c)), text.Str())
		assert.Contains(t, text.Str(), "\nCaused by: Error: connect ECONNREFUSED\n    at isPrime (src/app.js:")
		assert.NotContains(t, text.Str(), "app.min.js")
	})
	t.Run("the grouping key is made of the resolved frames", func(t *testing.T) {
		hash, ok := lr.Attributes().Get(sentryattr.GroupingHash)
		require.True(t, ok)
		after := sentrygrouping.Group(sentrygrouping.FromLogRecord(lr, "node"))
		assert.Equal(t, after.Hash, hash.Str())
		assert.NotEqual(t, before.Hash, after.Hash)
		comps, _ := lr.Attributes().Get(sentryattr.GroupingComponents)
		assert.Contains(t, comps.Slice().AsRaw(), "function=isPrime")
	})
	t.Run("a second pass changes nothing", func(t *testing.T) {
		again := plog.NewLogs()
		sink.AllLogs()[0].CopyTo(again)
		consume(again)
		assert.Equal(t, sink.AllLogs()[0], sink.AllLogs()[1])
	})
}

// secondBuild writes a second build of the esbuild bundle into a new
// directory: other minified names, the code one line lower, another debug
// id; the same source and map.
func secondBuild(t testing.TB, b jsBuild) (dir, debugID string, build jsBuild) {
	t.Helper()
	const otherID = "2d6e8f10-1a2b-4c3d-8e9f-a0b1c2d3e4f5"
	bundle := strings.NewReplacer("function l(", "function k(", "l(100)", "k(100)", "function f(", "function g(", "f(r)&&", "g(r)&&", b.debugID, otherID).Replace(b.bundle)
	bundle = "/* build 2 */\n" + bundle
	m, err := os.ReadFile(testBundle + ".map")
	require.NoError(t, err)
	// one more generated line before the first: a leading ";"
	mapText := regexp.MustCompile(`"mappings":\s*"`).ReplaceAllLiteralString(strings.ReplaceAll(string(m), b.debugID, otherID), `"mappings":";`)
	require.NotEqual(t, string(m), mapText)
	// Another path than the first build's: the source map directories
	// serve one file per relative path, the first directory's.
	dir = t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "v2"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "v2", "app.min.js"), []byte(bundle), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "v2", "app.min.js.map"), []byte(mapText), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "src", "app.js"), []byte(b.source), 0o644))
	return dir, otherID, jsBuild{bundle: bundle, source: b.source, debugID: otherID}
}

// TestLogsGroupTwoBuildsAsOne: the same error thrown by two builds
// (different minified names and lines) has two grouping keys as sent and
// one after the processor, as Sentry groups after symbolicating.
func TestLogsGroupTwoBuildsAsOne(t *testing.T) {
	b1 := readBuild(t)
	dir2, id2, b2 := secondBuild(t, b1)
	eventOf := func(b jsBuild, url, debugID string, names [2]string) []byte {
		frames := []string{b.errorFrame(t, url, names[1]+"(r)&&e++"), b.errorFrame(t, url, "t%e===0")}
		for i := range frames {
			frames[i] = strings.Replace(frames[i], `"function":"?"`, fmt.Sprintf(`"function":%q`, names[i]), 1)
		}
		return nodeError(nil, frames, fmt.Sprintf(`{"type":"sourcemap","code_file":%q,"debug_id":%q}`, url, debugID))
	}
	e1 := eventOf(b1, "/srv/v1/app.min.js", b1.debugID, [2]string{"l", "f"})
	e2 := eventOf(b2, "/srv/v2/app.min.js", id2, [2]string{"k", "g"})
	keyOf := func(ld plog.Logs) string {
		return sentrygrouping.Group(sentrygrouping.FromLogRecord(recordOf(ld), "node")).Hash
	}
	assert.NotEqual(t, keyOf(eventLogs(t, "node", e1)), keyOf(eventLogs(t, "node", e2)), "two keys as sent")

	sink := new(consumertest.LogsSink)
	cfg := testConfig()
	cfg.SourceMaps.Directories = []string{mapsDir, dir2}
	consume := newLogsProcessor(t, cfg, sink)
	consume(eventLogs(t, "node", e1))
	consume(eventLogs(t, "node", e2))
	require.Len(t, sink.AllLogs(), 2)
	k1, _ := recordOf(sink.AllLogs()[0]).Attributes().Get(sentryattr.GroupingHash)
	k2, _ := recordOf(sink.AllLogs()[1]).Attributes().Get(sentryattr.GroupingHash)
	assert.Equal(t, k1.Str(), k2.Str(), "one key after symbolication")
	f1, f2 := exceptionFrames(t, recordOf(sink.AllLogs()[0]), 1), exceptionFrames(t, recordOf(sink.AllLogs()[1]), 1)
	assert.Equal(t, []any{f1[0]["function"], f1[1]["function"]}, []any{"computePrimes", "isPrime"})
	assert.Equal(t, f1[1]["lineno"], f2[1]["lineno"], "both builds map to the source's line")
}

func TestLogsResolveProGuardErrors(t *testing.T) {
	const uuid = "7d4bc6c9-5a6b-4b3a-9d1f-0a1b2c3d4e5f"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, uuid+".txt"), []byte(cartMapping), 0o644))
	frame := func(function, module string, line int) string {
		return fmt.Sprintf(`{"function":%q,"module":%q,"filename":"SourceFile","lineno":%d,"in_app":true}`, function, module, line)
	}
	event := fmt.Appendf(nil, `{"event_id":"9f1c5a0e8d3b4c2a9e7f6d5c4b3a2911","platform":"java","exception":{"values":[
{"type":"IllegalStateException","value":"empty cart","module":"java.lang","stacktrace":{"frames":[%s,%s,%s]}}]},
"debug_meta":{"images":[{"type":"proguard","uuid":%q}]}}`,
		frame("loop", "android.os.Looper", 160), frame("a", "a.a", 2), frame("a", "a.a", 4), uuid)
	sink := new(consumertest.LogsSink)
	cfg := testConfig()
	cfg.ProGuard.Directories = []string{dir}
	newLogsProcessor(t, cfg, sink)(eventLogs(t, "java", event))
	lr := recordOf(sink.AllLogs()[0])
	var got []string
	for _, f := range exceptionFrames(t, lr, 0) {
		got = append(got, fmt.Sprintf("%v.%v:%v (%v) %v", f["module"], f["function"], f["lineno"], f["filename"], f["data"]))
	}
	assert.Equal(t, []string{
		"android.os.Looper.loop:160 (SourceFile) <nil>",
		"com.example.shop.Cart.total:11 (Cart.java) map[symbolicated:true]",
		// total() at 13 calls the inlined tax(): two frames, innermost last
		"com.example.shop.Cart.total:13 (Cart.java) map[symbolicated:true]",
		"com.example.shop.Cart.tax:20 (Cart.java) map[symbolicated:true]",
	}, got)
	text, _ := lr.Attributes().Get("exception.stacktrace")
	assert.Equal(t, "IllegalStateException: empty cart\n"+
		"    at tax (Cart.java:20)\n    at total (Cart.java:13)\n    at total (Cart.java:11)\n    at loop (SourceFile:160)", text.Str())
}

// TestLogsLeaveOtherRecordsAlone: records without Sentry frames pass as
// they came, with no grouping key.
func TestLogsLeaveOtherRecordsAlone(t *testing.T) {
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("order 4711 shipped")
	lr.Attributes().PutStr("exception.stacktrace", "not a Sentry record")
	lr.Attributes().PutStr(sentryattr.EventException, "a string, not the receiver's map")
	want := plog.NewLogs()
	ld.CopyTo(want)
	sink := new(consumertest.LogsSink)
	cfg := testConfig()
	cfg.SourceMaps.Directories = []string{mapsDir}
	newLogsProcessor(t, cfg, sink)(ld)
	assert.Equal(t, want, sink.AllLogs()[0])
}

// TestProfilesAndLogsShareOneProcessor: the profiles and logs pipelines of
// one configuration use one processor, started with the first and stopped
// with the last.
func TestProfilesAndLogsShareOneProcessor(t *testing.T) {
	f := NewFactory()
	cfg := testConfig()
	cfg.SourceMaps.Directories = []string{mapsDir}
	set := processortest.NewNopSettings(metadata.Type)
	lp, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	pp, err := f.CreateProfiles(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	other := testConfig()
	other.SourceMaps.Directories = []string{mapsDir}
	op, err := f.CreateLogs(context.Background(), set, other, consumertest.NewNop())
	require.NoError(t, err)

	ctx, host := context.Background(), componenttest.NewNopHost()
	require.NoError(t, lp.Start(ctx, host))
	require.NoError(t, pp.Start(ctx, host))
	require.NoError(t, op.Start(ctx, host))
	require.NoError(t, lp.Shutdown(ctx))
	// The profiles pipeline still runs: its batches are resolved.
	b := readBuild(t)
	line, col, name := b.v8(t, "(t){for(let e=2;e*e")
	pd := toProfiles(t, nodeChunk([]string{frameJSON(name, "/srv/app/dist/app.min.js", line, col)}, ""))
	require.NoError(t, pp.ConsumeProfiles(ctx, pd))
	assert.Contains(t, framesByGenerated(pd), fmt.Sprintf("%s@%d", name, line))
	require.NoError(t, pp.Shutdown(ctx))
	require.NoError(t, op.Shutdown(ctx))
}

func TestSharedCoresOnePerConfig(t *testing.T) {
	s := newSharedCores()
	cfg, other := testConfig(), testConfig()
	set := componenttest.NewNopTelemetrySettings()
	h1, err := s.handle(cfg, set)
	require.NoError(t, err)
	h2, err := s.handle(cfg, set)
	require.NoError(t, err)
	h3, err := s.handle(other, set)
	require.NoError(t, err)
	assert.Same(t, h1.core, h2.core)
	assert.NotSame(t, h1.core, h3.core)
	ctx, host := context.Background(), componenttest.NewNopHost()
	require.NoError(t, h1.start(ctx, host))
	require.NoError(t, h2.start(ctx, host))
	require.NoError(t, h1.shutdown(ctx))
	assert.NoError(t, h1.core.p.stopping.Err(), "running while a pipeline uses it")
	require.NoError(t, h2.shutdown(ctx))
	assert.Error(t, h1.core.p.stopping.Err(), "stopped with the last")
	h4, err := s.handle(cfg, set)
	require.NoError(t, err)
	assert.NotSame(t, h1.core, h4.core, "a reload gets a fresh one")
	require.NoError(t, h3.shutdown(ctx))
	require.NoError(t, h4.shutdown(ctx))
}

// TestErrorImages reads the images of debug_meta.
func TestErrorImages(t *testing.T) {
	m := pcommon.NewMap()
	require.NoError(t, m.FromRaw(map[string]any{sentryattr.EventDebugMeta: map[string]any{"images": []any{
		map[string]any{"type": "sourcemap", "code_file": "/a.js", "debug_id": "id-a"},
		map[string]any{"type": "proguard", "uuid": "UUID-1"},
		map[string]any{"type": "proguard", "uuid": "uuid-2"},
		map[string]any{"type": "elf", "code_id": "BEEF", "image_addr": "0x2000", "image_size": 4096},
		map[string]any{"type": "elf", "code_id": "cafe", "image_addr": "0x1000"},
		map[string]any{"type": "elf", "image_addr": "0x9000"},
		"not an image",
	}}}))
	im := readErrorImages(m)
	assert.Equal(t, map[string]string{"/a.js": "id-a"}, im.sourceMaps)
	assert.Equal(t, "uuid-1", im.proguardUUID)
	tests := []struct {
		addr    uint64
		buildID string
	}{
		{0xfff, ""}, {0x1000, "cafe"}, {0x1fff, "cafe"}, {0x2000, "beef"}, {0x2fff, "beef"}, {0x3000, ""},
	}
	for _, tt := range tests {
		img, ok := im.nativeImageAt(tt.addr)
		assert.Equal(t, tt.buildID != "", ok, "%#x", tt.addr)
		assert.Equal(t, tt.buildID, img.buildID, "%#x", tt.addr)
	}
}

// TestLogsResolveThreadsAndEventStacktrace: the threads' stack traces and
// the event's own are resolved too, each keeping the one as sent.
func TestLogsResolveThreadsAndEventStacktrace(t *testing.T) {
	b := readBuild(t)
	const url = "/srv/app/dist/app.min.js"
	frame := b.errorFrame(t, url, "t%e===0")
	event := fmt.Appendf(nil, `{"event_id":"9f1c5a0e8d3b4c2a9e7f6d5c4b3a2914","platform":"node","message":"stuck",
"threads":{"values":[{"id":1,"crashed":true,"stacktrace":{"frames":[%s]}},{"id":2,"stacktrace":{"frames":[{"function":"idle","abs_path":"node:internal/x","lineno":1,"colno":1}]}}]},
"stacktrace":{"frames":[%s]},
"debug_meta":{"images":[{"type":"sourcemap","code_file":%q,"debug_id":%q}]}}`, frame, frame, url, b.debugID)
	sink := new(consumertest.LogsSink)
	cfg := testConfig()
	cfg.SourceMaps.Directories = []string{mapsDir}
	newLogsProcessor(t, cfg, sink)(eventLogs(t, "node", event))
	attrs := recordOf(sink.AllLogs()[0]).Attributes().AsRaw()
	threads := attrs[sentryattr.EventThreads].(map[string]any)["values"].([]any)
	crashed, idle := threads[0].(map[string]any), threads[1].(map[string]any)
	tests := []struct {
		name       string
		stacktrace any
		raw        any
		want       string
	}{
		{"the crashed thread", crashed["stacktrace"], crashed["raw_stacktrace"], "isPrime"},
		{"the event's stack trace", attrs[sentryattr.EventStacktrace], attrs[sentryattr.EventRawStacktrace], "isPrime"},
		{"a thread of node's own code", idle["stacktrace"], idle["raw_stacktrace"], "idle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frames := tt.stacktrace.(map[string]any)["frames"].([]any)
			require.Len(t, frames, 1)
			assert.Equal(t, tt.want, frames[0].(map[string]any)["function"])
			if tt.want == "idle" {
				assert.Nil(t, tt.raw, "nothing resolved, nothing kept twice")
				return
			}
			require.NotNil(t, tt.raw)
			assert.Equal(t, "?", tt.raw.(map[string]any)["frames"].([]any)[0].(map[string]any)["function"])
		})
	}
	_, hasText := attrs["exception.stacktrace"]
	assert.False(t, hasText, "a message gets no exception text")
	assert.Contains(t, attrs, sentryattr.GroupingHash)
}
