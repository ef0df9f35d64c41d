package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"
)

// bridgeKey is the DSN key of the Sentry stand-in.
const bridgeKey = "0123456789abcdef0123456789abcdef"

// producer is a real OpenTelemetry SDK program, what it records, and what
// should come out of Sentry for it.
type producer struct {
	name    string
	command func(t *testing.T) *exec.Cmd
	release string
	// exception type and message of both exceptions (span and log)
	excType, excValue string
	// metric name → Sentry's view "type value unit" of one of its items
	metrics map[string]string
}

// TestBridgeRealProducers (E2E=1): the OpenTelemetry SDKs for Go and for
// Node record an exception on a span, log one, and emit a counter, a gauge
// and a histogram; the built collector runs examples/otel-to-sentry-issues.yaml
// (its otlp receiver, this exporter, and otlp_http to Sentry's own OTLP
// intake); our receiver stands in for Sentry in strict Relay mode. Every
// exception must arrive as an error event with its type, value, frames,
// level, trace context, release and environment, and every metric with
// its name, type, value and unit.
func TestBridgeRealProducers(t *testing.T) {
	requireE2E(t)
	bin := requireBinary(t)
	root := repoRoot(t)

	sentry := startSentryStandIn(t)
	otlpIntake := newOTLPIntake(t)

	grpcAddr, httpAddr := testnet.FreeLoopbackAddr(t), testnet.FreeLoopbackAddr(t)
	example, err := os.ReadFile(filepath.Join(root, "examples", "otel-to-sentry-issues.yaml"))
	require.NoError(t, err)
	cfg := strings.NewReplacer("0.0.0.0:4317", grpcAddr, "0.0.0.0:4318", httpAddr).Replace(string(example))
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))
	col := startCollector(t, bin, []string{
		"SENTRY_DSN=http://" + bridgeKey + "@" + sentry.addr + "/42",
		"SENTRY_OTLP_URL=" + otlpIntake.URL + "/api/42/integration/otlp",
		"SENTRY_PUBLIC_KEY=" + bridgeKey,
	}, "--config", cfgPath)
	col.waitListening(t, httpAddr)

	producers := []producer{
		{
			name: "opentelemetry-go",
			command: func(t *testing.T) *exec.Cmd {
				binPath := filepath.Join(t.TempDir(), "otelgo")
				build := exec.Command("go", "build", "-o", binPath, ".")
				build.Dir = filepath.Join(root, "e2e", "otelgo")
				out, err := build.CombinedOutput()
				require.NoError(t, err, "building the Go producer:\n%s", out)
				return exec.Command(binPath)
			},
			release: "otelgo-shop@1.2.3", excType: "*errors.errorString", excValue: "item 42 out of stock",
			metrics: map[string]string{
				"shop.orders":            "Sum 3 1",
				"shop.queue.depth":       "Gauge 7 ",
				"shop.checkout.duration": "ExponentialHistogram 187.5 ms",
			},
		},
		{
			name: "opentelemetry-js",
			command: func(t *testing.T) *exec.Cmd {
				dir := filepath.Join(root, "e2e", "otelnode")
				if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
					ci := exec.Command("npm", "ci", "--no-audit", "--no-fund")
					ci.Dir = dir
					out, err := ci.CombinedOutput()
					require.NoError(t, err, "npm ci:\n%s", out)
				}
				cmd := exec.Command("node", "app.js")
				cmd.Dir = dir
				return cmd
			},
			release: "otelnode-shop@2.0.1", excType: "RangeError", excValue: "amount 250 over the card limit",
			metrics: map[string]string{
				"shop.payments":         "Sum 2 1",
				"shop.cart.items":       "Gauge 5 ",
				"shop.payment.duration": "ExponentialHistogram 42.5 ms",
			},
		},
	}
	for _, p := range producers {
		t.Run(p.name, func(t *testing.T) {
			cmd := p.command(t)
			cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+httpAddr)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s:\n%s", p.name, out)
			traceID, spanID := idsFrom(t, string(out))

			var excs []receivedException
			require.Eventually(t, func() bool {
				excs = sentry.exceptions(traceID)
				return len(excs) >= 2
			}, 30*time.Second, 100*time.Millisecond, "%s: want 2 error events of trace %s, got %d", p.name, traceID, len(excs))
			frames := 0
			for _, e := range excs {
				assert.Equal(t, p.excType, e.typ)
				assert.Equal(t, p.excValue, e.value)
				assert.Equal(t, "error", e.level)
				assert.Equal(t, p.release, e.release)
				assert.Equal(t, "e2e", e.environment)
				assert.Positive(t, e.frames, "%s: an exception without frames", p.name)
				frames += e.frames
			}
			// The span's exception names its span.
			assert.Contains(t, []string{excs[0].spanID, excs[1].spanID}, spanID)

			var got map[string]string
			require.Eventually(t, func() bool {
				got = sentry.metricsOf(p.release, p.metrics)
				return len(got) == len(p.metrics)
			}, 30*time.Second, 100*time.Millisecond, "%s: metrics %v, want %v", p.name, got, p.metrics)
			assert.Equal(t, p.metrics, got)
			t.Logf("%s: %d exceptions (%d frames) and %d metrics through the collector to the Sentry stand-in", p.name, len(excs), frames, len(got))
		})
	}
	otlpIntake.mu.Lock()
	defer otlpIntake.mu.Unlock()
	assert.Positive(t, otlpIntake.paths["/api/42/integration/otlp/v1/traces"], "spans reach Sentry's OTLP intake")
	assert.Positive(t, otlpIntake.paths["/api/42/integration/otlp/v1/logs"], "logs reach Sentry's OTLP intake")
}

func idsFrom(t *testing.T, out string) (traceID, spanID string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "trace_id=%32s span_id=%16s", &traceID, &spanID); err == nil {
			return traceID, spanID
		}
	}
	t.Fatalf("no trace_id in the producer's output:\n%s", out)
	return "", ""
}

// sentryStandIn is our receiver in strict Relay mode, as Sentry.
type sentryStandIn struct {
	addr    string
	logs    *consumertest.LogsSink
	metrics *consumertest.MetricsSink
}

func startSentryStandIn(t *testing.T) *sentryStandIn {
	t.Helper()
	f := sentryprofilereceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*sentryprofilereceiver.Config)
	s := &sentryStandIn{addr: testnet.FreeLoopbackAddr(t), logs: new(consumertest.LogsSink), metrics: new(consumertest.MetricsSink)}
	cfg.ServerConfig.NetAddr.Endpoint = s.addr
	cfg.Validation = sentryprofilereceiver.ValidationRelay
	cfg.Links.Enabled = false
	set := receivertest.NewNopSettings(f.Type())
	ctx := context.Background()
	lr, err := f.CreateLogs(ctx, set, cfg, s.logs)
	require.NoError(t, err)
	mr, err := f.CreateMetrics(ctx, set, cfg, s.metrics)
	require.NoError(t, err)
	for _, c := range []component.Component{lr, mr} {
		require.NoError(t, c.Start(ctx, componenttest.NewNopHost()))
		t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
	}
	return s
}

type receivedException struct {
	typ, value, level, spanID, release, environment string
	frames                                          int
}

// exceptions are the error events of one trace the stand-in received.
func (s *sentryStandIn) exceptions(traceID string) []receivedException {
	var out []receivedException
	for _, ld := range s.logs.AllLogs() {
		for _, rl := range ld.ResourceLogs().All() {
			res := rl.Resource().Attributes()
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					typ, ok := lr.Attributes().Get("exception.type")
					if !ok || lr.TraceID().String() != traceID {
						continue
					}
					out = append(out, receivedException{
						typ: typ.AsString(), value: attrString(lr.Attributes(), "exception.message"),
						level: lr.SeverityText(), spanID: lr.SpanID().String(),
						release:     attrString(res, "service.version"),
						environment: attrString(res, "deployment.environment.name"),
						frames:      frameCount(lr.Attributes()),
					})
				}
			}
		}
	}
	return out
}

func frameCount(attrs pcommon.Map) int {
	v, ok := attrs.Get("sentry.exception")
	if !ok {
		return 0
	}
	vals, ok := v.Map().Get("values")
	if !ok {
		return 0
	}
	n := 0
	for _, ev := range vals.Slice().All() {
		if st, ok := ev.Map().Get("stacktrace"); ok {
			if fr, ok := st.Map().Get("frames"); ok {
				n += fr.Slice().Len()
			}
		}
	}
	return n
}

// metricsOf finds, among the points of one release, one of each wanted
// metric with the wanted "type value unit"; the result holds those found.
func (s *sentryStandIn) metricsOf(release string, want map[string]string) map[string]string {
	got := map[string]string{}
	for _, md := range s.metrics.AllMetrics() {
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					w, ok := want[m.Name()]
					if !ok {
						continue
					}
					for _, v := range sentryValues(m, release) {
						if v == w {
							got[m.Name()] = v
						}
					}
				}
			}
		}
	}
	return got
}

// sentryValues are "type value unit" of a metric's points of one release
// (the SDKs' sentry.release attribute, which this exporter writes).
func sentryValues(m pmetric.Metric, release string) []string {
	var out []string
	of := func(attrs pcommon.Map, v string) {
		if attrString(attrs, "sentry.release") == release {
			out = append(out, m.Type().String()+" "+v+" "+m.Unit())
		}
	}
	num := func(p pmetric.NumberDataPoint) string {
		if p.ValueType() == pmetric.NumberDataPointValueTypeInt {
			return fmt.Sprint(p.IntValue())
		}
		return fmt.Sprint(p.DoubleValue())
	}
	switch m.Type() {
	case pmetric.MetricTypeSum:
		for _, p := range m.Sum().DataPoints().All() {
			of(p.Attributes(), num(p))
		}
	case pmetric.MetricTypeGauge:
		for _, p := range m.Gauge().DataPoints().All() {
			of(p.Attributes(), num(p))
		}
	case pmetric.MetricTypeExponentialHistogram:
		for _, p := range m.ExponentialHistogram().DataPoints().All() {
			of(p.Attributes(), fmt.Sprint(p.Sum()))
		}
	}
	return out
}

func attrString(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}

// otlpIntake stands in for Sentry's own OTLP endpoints: it accepts
// everything and counts requests by path.
type otlpIntake struct {
	*httptest.Server
	mu    sync.Mutex
	paths map[string]int
}

func newOTLPIntake(t *testing.T) *otlpIntake {
	o := &otlpIntake{paths: map[string]int{}}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.paths[r.URL.Path]++
		o.mu.Unlock()
		w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(o.Close)
	return o
}
