package symbolicationprocessor

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/pmap"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrygrouping"
)

// nodeErrorsDir is the npm project of the real @sentry/node errors.
const nodeErrorsDir = "testdata/nodeerrors"

// expectedFrame is what expect.mjs computed for one frame in node.
type expectedFrame struct {
	Function *string `json:"function"`
	Source   string  `json:"source"`
	Line     int64   `json:"line"`
	Column   int64   `json:"column"`
}

// TestRealNodeErrors: @sentry/node 11 throws from inside two minified
// esbuild builds of one app (named functions, an anonymous callback, a
// class method, a cause chain, an unhandled rejection, a captureMessage),
// its DSN pointed at the sentryprofile receiver, whose logs go through
// this processor. Every in-app frame gets the function, file, line and
// column that Mozilla's source-map and acorn give in node; each error has
// one grouping key across both builds, and two as sent.
func TestRealNodeErrors(t *testing.T) {
	node := testenv.LookPath(t, "node", "nodejs")
	npm := testenv.LookPath(t, "npm", "npm")
	installNodeModules(t, npm)
	out := t.TempDir()
	runNode(t, node, nil, "build.mjs", out)

	sink := new(consumertest.LogsSink)
	dsn := startReceiverWithProcessor(t, out, sink)
	events := filepath.Join(out, "events.jsonl")
	for _, build := range []string{"v1", "v2"} {
		runNode(t, node, []string{"SENTRY_DSN=" + dsn, "BUILD=" + build, "EVENTS_OUT=" + events,
			"NODE_PATH=" + absPath(t, filepath.Join(nodeErrorsDir, "node_modules"))}, filepath.Join(out, build, "app.js"))
	}
	var expected map[string][][]*expectedFrame
	require.NoError(t, json.Unmarshal(runNode(t, node, nil, "expect.mjs", events, out), &expected))
	require.Len(t, expected, 10, "five events from each build")

	records := waitForRecords(t, sink, len(expected))
	checked := 0
	for _, lr := range records {
		id, _ := lr.Attributes().Get("log.record.uid")
		want, ok := expected[strings.ReplaceAll(id.Str(), "-", "")]
		require.True(t, ok, "event %s was sent", id.Str())
		checked += checkNodeFrames(t, lr, want)
	}
	t.Logf("%d in-app frames checked in %d events", checked, len(records))
	assert.GreaterOrEqual(t, checked, 30, "in-app frames checked")

	checkNodeGrouping(t, records)
}

// checkNodeFrames compares a record's frames with node's expectations; it
// returns how many frames it checked.
func checkNodeFrames(t *testing.T, lr plog.LogRecord, want [][]*expectedFrame) int {
	t.Helper()
	checked := 0
	for i, frames := range want {
		got := rawFramesOf(t, lr, i, "stacktrace")
		require.Len(t, got, len(frames), "exception %d of %s", i, lr.Body().AsString())
		for j, w := range frames {
			if w == nil {
				continue
			}
			f := got[j]
			where := lr.Body().AsString() + " " + w.Source
			if w.Function != nil {
				assert.Equal(t, *w.Function, f["function"], "%s:%d", where, w.Line)
			}
			assert.Equal(t, filepath.Base(w.Source), filepath.Base(f["abs_path"].(string)), where)
			assert.Equal(t, []int64{w.Line, w.Column}, []int64{f["lineno"].(int64), f["colno"].(int64)}, "%s:%d", where, w.Line)
			assert.Equal(t, true, f["data"].(map[string]any)["symbolicated"], where)
			checked++
		}
	}
	return checked
}

// checkNodeGrouping: the records of one error from the two builds have one
// key after the processor, and had two as sent (raw_stacktrace); different
// errors have different keys.
func checkNodeGrouping(t *testing.T, records []plog.LogRecord) {
	t.Helper()
	after := map[string]map[string]bool{}
	before := map[string]map[string]bool{}
	for _, lr := range records {
		key := lr.Body().AsString()
		hash, ok := lr.Attributes().Get(sentryattr.GroupingHash)
		require.True(t, ok, key)
		add(after, key, hash.Str())
		add(before, key, sentrygrouping.Group(sentrygrouping.FromLogRecord(asSent(lr), "node")).Hash)
	}
	require.Len(t, after, 5, "five errors")
	seen := map[string]string{}
	for key, hashes := range after {
		assert.Len(t, hashes, 1, "%s: one key for both builds", key)
		assert.Len(t, before[key], 2, "%s: two keys as sent", key)
		for h := range hashes {
			assert.Empty(t, seen[h], "%s and %s share a key", key, seen[h])
			seen[h] = key
		}
	}
}

func add(m map[string]map[string]bool, key, value string) {
	if m[key] == nil {
		m[key] = map[string]bool{}
	}
	m[key][value] = true
}

// asSent is a record with its exceptions' frames as the SDK sent them.
func asSent(lr plog.LogRecord) plog.LogRecord {
	c := plog.NewLogRecord()
	lr.CopyTo(c)
	v, _ := c.Attributes().Get(sentryattr.EventException)
	values := pmap.Slice(v.Map(), "values")
	for _, e := range values.All() {
		if raw, ok := e.Map().Get("raw_stacktrace"); ok {
			raw.CopyTo(e.Map().PutEmpty("stacktrace"))
		}
	}
	return c
}

// rawFramesOf are the frames at key of exception i.
func rawFramesOf(t *testing.T, lr plog.LogRecord, i int, key string) []map[string]any {
	t.Helper()
	v, ok := lr.Attributes().Get(sentryattr.EventException)
	require.True(t, ok)
	e := v.Map().AsRaw()["values"].([]any)[i].(map[string]any)
	var out []map[string]any
	for _, f := range e[key].(map[string]any)["frames"].([]any) {
		out = append(out, f.(map[string]any))
	}
	return out
}

// startReceiverWithProcessor runs the sentryprofile receiver whose logs go
// through this processor (source maps under dir) to sink; it returns the
// DSN.
func startReceiverWithProcessor(t *testing.T, dir string, sink *consumertest.LogsSink) string {
	t.Helper()
	ctx, host := context.Background(), componenttest.NewNopHost()
	pcfg := testConfig()
	pcfg.SourceMaps.Directories = []string{dir}
	require.NoError(t, pcfg.Validate())
	p, err := NewFactory().CreateLogs(ctx, processortest.NewNopSettings(metadata.Type), pcfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(ctx, host))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })

	rf := sentryprofilereceiver.NewFactory()
	rcfg := rf.CreateDefaultConfig().(*sentryprofilereceiver.Config)
	addr := testnet.FreeLoopbackAddr(t)
	rcfg.ServerConfig.NetAddr.Endpoint = addr
	r, err := rf.CreateLogs(ctx, receivertest.NewNopSettings(rf.Type()), rcfg, p)
	require.NoError(t, err)
	require.NoError(t, r.Start(ctx, host))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	return "http://0123456789abcdef0123456789abcdef@" + addr + "/1"
}

// waitForRecords waits until the sink holds n records.
func waitForRecords(t *testing.T, sink *consumertest.LogsSink, n int) []plog.LogRecord {
	t.Helper()
	var records []plog.LogRecord
	require.Eventually(t, func() bool {
		records = records[:0]
		for _, ld := range sink.AllLogs() {
			for _, rl := range ld.ResourceLogs().All() {
				for _, sl := range rl.ScopeLogs().All() {
					for _, lr := range sl.LogRecords().All() {
						records = append(records, lr)
					}
				}
			}
		}
		return len(records) >= n
	}, 30*time.Second, 50*time.Millisecond, "the receiver's records")
	return records
}

// runNode runs a node script in the npm project and returns its stdout.
func runNode(t *testing.T, node string, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(node, args...)
	cmd.Dir = nodeErrorsDir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	require.NoError(t, err, "node %s: %s", strings.Join(args, " "), stderr.String())
	return b
}

// installNodeModules runs npm ci when node_modules is missing or older
// than the lockfile (npm writes node_modules/.package-lock.json last).
func installNodeModules(t testing.TB, npm string) {
	t.Helper()
	lock, err := os.Stat(filepath.Join(nodeErrorsDir, "package-lock.json"))
	require.NoError(t, err)
	if done, err := os.Stat(filepath.Join(nodeErrorsDir, "node_modules", ".package-lock.json")); err == nil && !done.ModTime().Before(lock.ModTime()) {
		return
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = nodeErrorsDir
	if b, err := cmd.CombinedOutput(); err != nil {
		testenv.MissingTool(t, "npm ci in %s: %v\n%s", nodeErrorsDir, err, b)
	}
}

func absPath(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	require.NoError(t, err)
	return a
}
