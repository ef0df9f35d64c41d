package sentryprofilereceiver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadatatest"
)

// BenchmarkErrorEventEnvelope: an envelope with @sentry/node's chained
// error event through the handler (read, auth, route, translate to a log
// record, consume), against encoding/json decoding the same event into a
// map in the same run: the floor any JSON reader of the event pays.
func BenchmarkErrorEventEnvelope(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("..", "translator", "sentryevent", "testdata", "node11_error_chained.json"))
	require.NoError(b, err)
	var compact bytes.Buffer
	require.NoError(b, json.Compact(&compact, raw))
	event := compact.Bytes()
	body := envelopeOf(eventHeader, item{header: `{"type":"event"}`, payload: string(event)})

	b.Run("handler", func(b *testing.B) {
		f := NewFactory()
		cfg := f.CreateDefaultConfig().(*Config)
		rcv, err := newReceiver(cfg, metadatatest.NewSettings(componenttest.NewTelemetry()))
		require.NoError(b, err)
		rcv.router.logs = consumertest.NewNop()
		mux := rcv.handler.routes()
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest(http.MethodPost, "/api/42/envelope/?sentry_key="+testKey, bytes.NewReader(body))
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatal(w.Code, w.Body.String())
			}
		}
	})
	b.Run("encoding/json map", func(b *testing.B) {
		b.SetBytes(int64(len(event)))
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(event, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzSignalItem: any payload of any logs, metrics or client report item
// type, through the handler, is answered 200 (the item is translated or
// dropped alone) and never panics.
func FuzzSignalItem(f *testing.F) {
	for _, p := range []string{eventPayload, logPayload, otelLogPayload, checkInPayload, feedbackPayload, userReportPayload,
		traceMetricPayload, statsdPayload, sessionPayload, sessionsPayload, clientReportPayload} {
		for i := range itemRoutes {
			if itemRoutes[i].isSignal() {
				f.Add(uint8(i), p)
			}
		}
	}
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	rcv, err := newReceiver(cfg, metadatatest.NewSettings(componenttest.NewTelemetry()))
	require.NoError(f, err)
	rcv.router.logs = consumertest.NewNop()
	rcv.router.metrics = consumertest.NewNop()
	mux := rcv.handler.routes()
	f.Fuzz(func(t *testing.T, route uint8, payload string) {
		r := itemRoutes[int(route)%len(itemRoutes)]
		if !r.isSignal() || bytes.ContainsAny([]byte(payload), "\n") {
			return
		}
		body := envelopeOf(eventHeader, item{header: `{"type":"` + r.itemType + `"}`, payload: payload})
		req := httptest.NewRequest(http.MethodPost, "/api/42/envelope/?sentry_key="+testKey, bytes.NewReader(body))
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("%s item: %d %s", r.itemType, w.Code, w.Body.String())
		}
	})
}
