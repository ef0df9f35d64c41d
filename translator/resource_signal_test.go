package translator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// TestResourceOfSignal: an event's resource fields become the attributes a
// profile's would (the app and browser contexts have no resource field).
func TestResourceOfSignal(t *testing.T) {
	s := sentrysignal.Resource{
		Release: "shop@1.4.2", Environment: "production", Dist: "17", Platform: "node", ServerName: "build-7",
		SDKName: "sentry.javascript.node", SDKVersion: "11.1.0", OSName: "Linux", OSVersion: "6.18.0",
		RuntimeName: "node", RuntimeVersion: "v20.19.2", DeviceArch: "x64", DeviceModel: "Pixel 8",
		DeviceManufacturer: "Google", AppName: "Shop", BrowserName: "Chrome",
	}
	r := ResourceOfSignal(s)
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

	empty := pcommon.NewResource()
	none := ResourceOfSignal(sentrysignal.Resource{})
	none.CopyTo(empty)
	assert.Equal(t, map[string]any{"service.name": "unknown_service"}, empty.Attributes().AsRaw(), "absent fields write nothing")
}
