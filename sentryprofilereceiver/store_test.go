package sentryprofilereceiver

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
)

// capturedStoreBody is a /store/ body sentry-python 1.9.10 sent on this machine
// (translator/sentryevent/testdata), with its event_id and release read
// here with encoding/json.
func capturedStoreBody(t *testing.T) (body []byte, eventID, release string) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "translator", "sentryevent", "testdata", "python1910_captured_store_1.json"))
	require.NoError(t, err)
	var doc struct {
		EventID string `json:"event_id"`
		Release string `json:"release"`
	}
	require.NoError(t, json.Unmarshal(body, &doc))
	require.NotEmpty(t, doc.EventID)
	return body, doc.EventID, doc.Release
}

// xSentryAuth is the header sentry-python 1.x authenticates with.
func xSentryAuth(key string) map[string]string {
	return map[string]string{
		"X-Sentry-Auth":    "Sentry sentry_key=" + key + ", sentry_version=7, sentry_client=sentry.python/1.9.10",
		"Content-Encoding": "gzip", "Content-Type": "application/json",
	}
}

// TestStoreEndpoint: a /store/ event goes to the logs signal once and is
// answered as Relay answers it; auth and bad bodies as for envelopes.
func TestStoreEndpoint(t *testing.T) {
	body, eventID, release := capturedStoreBody(t)
	tests := []struct {
		name        string
		path, key   string
		body        []byte
		wantStatus  int
		wantRecords int
	}{
		{name: "gzip, X-Sentry-Auth", path: "/api/42/store/", key: testKey, body: compresstest.Bytes(t, "gzip", body), wantStatus: http.StatusOK, wantRecords: 1},
		{name: "no trailing slash", path: "/api/42/store", key: testKey, body: compresstest.Bytes(t, "gzip", body), wantStatus: http.StatusOK, wantRecords: 1},
		{name: "unknown key", path: "/api/42/store/", key: "ffffffffffffffffffffffffffffffff", body: compresstest.Bytes(t, "gzip", body), wantStatus: http.StatusForbidden},
		{name: "not an event", path: "/api/42/store/", key: testKey, body: compresstest.Bytes(t, "gzip", []byte(`[1,2]`)), wantStatus: http.StatusBadRequest},
		{name: "project slug", path: "/api/shop/store/", key: testKey, body: compresstest.Bytes(t, "gzip", body), wantStatus: http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := new(consumertest.LogsSink)
			tr := startSignals(t, signalSinks{logs: logs}, func(c *Config) {
				c.PublicKeys = []configopaque.String{testKey}
			})
			resp := do(t, newRequest(t, http.MethodPost, tr.url+tt.path, tt.body, xSentryAuth(tt.key)))
			require.Equal(t, tt.wantStatus, resp.status, resp.body)
			assert.Equal(t, tt.wantRecords, logs.LogRecordCount())
			if tt.wantStatus != http.StatusOK {
				return
			}
			assert.JSONEq(t, `{"id":"`+eventID+`"}`, resp.body)
			records, resources := logRecords(logs)
			assert.Equal(t, "ZeroDivisionError: division by zero", records[0].Body().AsString())
			assert.Equal(t, release, attrStr(resources[0].Attributes(), "service.version"))
			assert.Equal(t, "42", attrStr(resources[0].Attributes(), "sentry.project.id"))
		})
	}
}

// TestStoreWithoutLogsPipeline: the event is accepted and counted as
// ignored, as an envelope's event item is.
func TestStoreWithoutLogsPipeline(t *testing.T) {
	body, eventID, _ := capturedStoreBody(t)
	tr := startSignals(t, signalSinks{profiles: new(consumertest.ProfilesSink)}, nil)
	resp := do(t, newRequest(t, http.MethodPost, tr.url+"/api/42/store/", compresstest.Bytes(t, "gzip", body), xSentryAuth(testKey)))
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	assert.JSONEq(t, `{"id":"`+eventID+`"}`, resp.body)
	_, err := tr.telemetry.GetMetric("otelcol_receiver_sentryprofile_ignored_items")
	assert.NoError(t, err)
}

// TestStoreForwarded: with forwarding, the upstream gets the store
// request as it came, the SDK the upstream's answer, and the event still
// goes to the logs signal.
func TestStoreForwarded(t *testing.T) {
	body, _, _ := capturedStoreBody(t)
	upstream := newFakeSentry(t)
	logs := new(consumertest.LogsSink)
	tr := startSignals(t, signalSinks{logs: logs}, forwardTo(upstream.URL))
	sent := compresstest.Bytes(t, "gzip", body)
	resp := do(t, newRequest(t, http.MethodPost, tr.url+"/api/42/store/", sent, xSentryAuth(testKey)))
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	assert.JSONEq(t, `{"id":"from-upstream"}`, resp.body)
	got := upstream.got()
	require.Len(t, got, 1)
	assert.Equal(t, "/api/42/store/", got[0].path)
	assert.Equal(t, sent, got[0].body, "byte for byte")
	assert.Equal(t, 1, logs.LogRecordCount())
}
