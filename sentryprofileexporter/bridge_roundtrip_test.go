package sentryprofileexporter

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryschema"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/otelevent"
)

// bridgeReceiver is our receiver on a free port, its logs and metrics
// pipelines collecting what it decodes: the SDKs' first stop, and the
// Sentry stand-in the exporter sends to.
type bridgeReceiver struct {
	addr    string
	logs    *consumertest.LogsSink
	metrics *consumertest.MetricsSink
}

func startBridgeReceiver(t *testing.T) *bridgeReceiver {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	f := sentryprofilereceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*sentryprofilereceiver.Config)
	cfg.ServerConfig.NetAddr.Endpoint = addr
	// The receiver's strict mode: what Relay would drop is dropped.
	cfg.Validation = sentryprofilereceiver.ValidationRelay
	cfg.Links.Enabled = false
	require.NoError(t, cfg.Validate())
	r := &bridgeReceiver{addr: addr, logs: new(consumertest.LogsSink), metrics: new(consumertest.MetricsSink)}
	set := receivertest.NewNopSettings(f.Type())
	ctx := context.Background()
	lr, err := f.CreateLogs(ctx, set, cfg, r.logs)
	require.NoError(t, err)
	mr, err := f.CreateMetrics(ctx, set, cfg, r.metrics)
	require.NoError(t, err)
	for _, c := range []component.Component{lr, mr} {
		require.NoError(t, c.Start(ctx, componenttest.NewNopHost()))
		t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
	}
	return r
}

// post sends one item in an envelope, as an SDK would, and wants 200.
func (r *bridgeReceiver) post(t *testing.T, itemType string, payload []byte) {
	t.Helper()
	body := append([]byte(`{}`+"\n"), envelope.AppendItem(nil, envelope.ItemHeader{Type: itemType}, payload)...)
	req, err := http.NewRequest(http.MethodPost, "http://"+r.addr+"/api/42/envelope/?sentry_key="+testPublicKey+"&sentry_version=7", bytes.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "receiver refused a %s item", itemType)
}

// newBridgeExporter is this exporter with no queue (so that a Consume
// returns once Sentry answered), sending to dsn.
func newBridgeExporter(t *testing.T, dsn string) (exporter.Logs, exporter.Metrics) {
	t.Helper()
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.DSN = configopaque.String(dsn)
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	require.NoError(t, cfg.Validate())
	return startLogsAndMetrics(t, cfg)
}

// startLogsAndMetrics creates the exporter's logs and metrics signals of
// cfg (one shared exporter) and starts them until the test ends.
func startLogsAndMetrics(t *testing.T, cfg *Config) (exporter.Logs, exporter.Metrics) {
	t.Helper()
	f := NewFactory()
	set := exportertest.NewNopSettings(f.Type())
	ctx := context.Background()
	le, err := f.CreateLogs(ctx, set, cfg)
	require.NoError(t, err)
	me, err := f.CreateMetrics(ctx, set, cfg)
	require.NoError(t, err)
	for _, c := range []component.Component{le, me} {
		require.NoError(t, c.Start(ctx, componenttest.NewNopHost()))
		t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
	}
	return le, me
}

// capturedPayloads are the events and trace_metric containers real Sentry
// SDKs sent (captured by the receiver's translators' tests).
func capturedPayloads(t *testing.T, dir, pattern string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "translator", dir, "testdata", pattern))
	require.NoError(t, err)
	if len(files) == 0 {
		t.Skipf("no captured payloads under translator/%s/testdata", dir)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		out[filepath.Base(f)] = b
	}
	return out
}

// TestBridgeRoundTrip: real SDK events and metrics → our receiver → OTLP →
// this exporter → our receiver as the Sentry stand-in (strict Relay
// validation) → OTLP again; what Sentry shows of each must survive.
func TestBridgeRoundTrip(t *testing.T) {
	first := startBridgeReceiver(t)
	stand := startBridgeReceiver(t)
	logsExp, metricsExp := newBridgeExporter(t, "http://"+testPublicKey+"@"+stand.addr+"/42")

	events := capturedPayloads(t, "sentryevent", "*_captured_*.json")
	for _, name := range sortedKeys(events) {
		first.post(t, "event", events[name])
	}
	containers := capturedPayloads(t, "sentrymetric", "*_captured_*.json")
	for _, name := range sortedKeys(containers) {
		first.post(t, "trace_metric", containers[name])
	}

	ctx := context.Background()
	for _, ld := range first.logs.AllLogs() {
		require.NoError(t, logsExp.ConsumeLogs(ctx, ld))
	}
	t.Run("schema", func(t *testing.T) {
		// What the exporter sent of each real SDK event, against Sentry's
		// published event schema.
		schema := sentryschema.Event(t)
		n := 0
		for _, ld := range first.logs.AllLogs() {
			otelevent.FromLogs(ld, otelevent.EventOptions{}, func(ev otelevent.Event) {
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(ev.Payload))
				require.NoError(t, err)
				assert.NoError(t, schema.Validate(inst), "%s", ev.Payload)
				n++
			})
		}
		require.Positive(t, n)
		t.Logf("%d events of real SDKs, as this exporter writes them, valid against relay/event.schema.json", n)
	})
	for _, md := range first.metrics.AllMetrics() {
		require.NoError(t, metricsExp.ConsumeMetrics(ctx, md))
	}

	t.Run("exceptions", func(t *testing.T) {
		before := exceptionsByID(first.logs)
		after := exceptionsByID(stand.logs)
		require.NotEmpty(t, before)
		frames := 0
		for id, want := range before {
			got, ok := after[id]
			if !ok {
				t.Errorf("event %s (%s) did not come back", id, want.typ)
				continue
			}
			require.Equal(t, want, got, "event %s", id)
			frames += strings.Count(want.frames, "\n")
		}
		t.Logf("round trip: %d exceptions of %d captured events, %d frames compared", len(before), len(events), frames)
	})
	t.Run("metrics", func(t *testing.T) {
		before := metricPoints(first.metrics)
		after := metricPoints(stand.metrics)
		require.NotEmpty(t, before)
		require.Len(t, after, len(before))
		for i := range before {
			w, g := before[i], after[i]
			require.Equal(t, w.name+" "+w.kind+" "+w.unit+" "+w.value, g.name+" "+g.kind+" "+g.unit+" "+g.value, "point %d", i)
			for k, v := range w.attrs {
				require.Equal(t, v, g.attrs[k], "point %d (%s) attribute %s", i, w.name, k)
			}
		}
		t.Logf("round trip: %d metric points (name, type, value, unit, attributes) compared", len(before))
	})
}

// exception is what Sentry shows of an error event, read from the OTLP
// record our receiver made of it.
type exception struct {
	typ, value, level, traceID, spanID, release, environment string
	frames                                                   string // function module|filename:line, one a line, of every value
}

func exceptionsByID(sink *consumertest.LogsSink) map[string]exception {
	out := map[string]exception{}
	for _, ld := range sink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			res := rl.Resource().Attributes()
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				lrs := rl.ScopeLogs().At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					lr := lrs.At(k)
					typ, ok := lr.Attributes().Get("exception.type")
					if !ok {
						continue
					}
					id, _ := lr.Attributes().Get("log.record.uid")
					out[id.AsString()] = exception{
						typ: typ.AsString(), value: attr(lr.Attributes(), "exception.message"), level: lr.SeverityText(),
						traceID: lr.TraceID().String(), spanID: lr.SpanID().String(),
						release: attr(res, "service.version"), environment: attr(res, "deployment.environment.name"),
						frames: framesOf(lr),
					}
				}
			}
		}
	}
	return out
}

func framesOf(lr plog.LogRecord) string {
	v, ok := lr.Attributes().Get("sentry.exception")
	if !ok {
		return ""
	}
	vals, ok := v.Map().Get("values")
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, ev := range vals.Slice().All() {
		st, ok := ev.Map().Get("stacktrace")
		if !ok {
			continue
		}
		frames, _ := st.Map().Get("frames")
		for _, f := range frames.Slice().All() {
			m := f.Map()
			fmt.Fprintf(&b, "%s %s|%s:%s\n", attr(m, "function"), attr(m, "module"), attr(m, "filename"), attr(m, "lineno"))
		}
	}
	return b.String()
}

func attr(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}

type point struct {
	name, kind, unit, value string
	attrs                   map[string]string
}

// metricPoints lists every point in the order received, with what Sentry
// shows of it.
func metricPoints(sink *consumertest.MetricsSink) []point {
	var out []point
	for _, md := range sink.AllMetrics() {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			sms := md.ResourceMetrics().At(i).ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					out = append(out, pointsOf(ms.At(k))...)
				}
			}
		}
	}
	return out
}

func pointsOf(m pmetric.Metric) []point {
	var out []point
	add := func(v string, attrs pcommon.Map) {
		p := point{name: m.Name(), kind: m.Type().String(), unit: m.Unit(), value: v, attrs: map[string]string{}}
		for k, a := range attrs.All() {
			p.attrs[k] = a.AsString()
		}
		out = append(out, p)
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
			add(num(p), p.Attributes())
		}
	case pmetric.MetricTypeGauge:
		for _, p := range m.Gauge().DataPoints().All() {
			add(num(p), p.Attributes())
		}
	case pmetric.MetricTypeExponentialHistogram:
		for _, p := range m.ExponentialHistogram().DataPoints().All() {
			add(fmt.Sprint(p.Count(), " ", p.Sum()), p.Attributes())
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
