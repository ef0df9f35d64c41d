package sentryevent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// TestLogsFacts: an event's resource fields become the attributes a
// profile's would (the app and browser contexts have no resource field),
// its id is the event the facts name, and Append writes the record
// PutLogRecord writes.
func TestLogsFacts(t *testing.T) {
	payload := []byte(`{"event_id":"0F1E2D3C4B5A69788796A5B4C3D2E1F0","release":"shop@1.4.2","environment":"production",
		"dist":"17","platform":"node","server_name":"build-7","sdk":{"name":"sentry.javascript.node","version":"11.1.0"},
		"contexts":{"os":{"name":"Linux","version":"6.18.0"},"runtime":{"name":"node","version":"v20.19.2"},
		"device":{"arch":"x64","model":"Pixel 8","manufacturer":"Google","family":"Pixel"},
		"app":{"app_name":"Shop"},"browser":{"name":"Chrome"}},"message":"hi"}`)
	logs, err := Logs(payload, sentrysignal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	assert.Equal(t, "0f1e2d3c4b5a69788796a5b4c3d2e1f0", logs.EventID)
	assert.Empty(t, logs.AboutEventID)
	r := logs.Resource
	r.ProjectID = "42"
	res := pcommon.NewResource()
	r.CopyTo(res)
	assert.Equal(t, map[string]any{
		"service.name": "shop", "service.version": "shop@1.4.2", "deployment.environment.name": "production",
		"sentry.dist": "17", "sentry.platform": "node", "sentry.project.id": "42", "host.name": "build-7",
		"telemetry.sdk.name": "sentry.javascript.node", "telemetry.sdk.version": "11.1.0",
		"os.name": "Linux", "os.version": "6.18.0", "process.runtime.name": "node", "process.runtime.version": "v20.19.2",
		"host.arch": "x64", "device.model.identifier": "Pixel 8", "device.manufacturer": "Google",
	}, res.Attributes().AsRaw())

	dst := plog.NewLogRecordSlice()
	assert.Equal(t, 1, logs.Append(dst))
	ev, err := Decode(payload, sentrysignal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := plog.NewLogRecordSlice()
	ev.PutLogRecord(want.AppendEmpty(), sentrysignal.Options{})
	assert.Equal(t, want.At(0).Attributes().AsRaw(), dst.At(0).Attributes().AsRaw())
	assert.Equal(t, "hi", dst.At(0).Body().Str())

	if _, err := Logs([]byte(`{"event_id":"nope"}`), sentrysignal.Options{}); err == nil {
		t.Error("a bad event id: no error")
	}
}
