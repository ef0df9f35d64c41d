package sentryresource

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// TestResourceFill checks the merge rule: each top-level field from the
// first source that has it, each context whole from the first that has any
// of it.
func TestResourceFill(t *testing.T) {
	tests := []struct {
		name    string
		sources []Resource
		want    Resource
	}{
		{
			name: "first source wins, field by field",
			sources: []Resource{
				{Release: "a@1", Platform: "python"},
				{Release: "b@2", Environment: "prod", Platform: "node"},
			},
			want: Resource{Release: "a@1", Environment: "prod", Platform: "python"},
		},
		{
			name: "a context comes whole from one source",
			sources: []Resource{
				{Runtime: sentry.Runtime{Name: "CPython"}, SDK: sentry.ClientSDK{Name: "sentry.python", Version: "2.68.0"}},
				{Runtime: sentry.Runtime{Name: "CPython", Version: "3.11.7"}, OS: sentry.OS{Name: "Linux"}},
			},
			want: Resource{
				Runtime: sentry.Runtime{Name: "CPython"}, OS: sentry.OS{Name: "Linux"},
				SDK: sentry.ClientSDK{Name: "sentry.python", Version: "2.68.0"},
			},
		},
		{
			name:    "nothing fills nothing",
			sources: []Resource{{}, {Device: sentry.Device{Architecture: "arm64e"}}},
			want:    Resource{Device: sentry.Device{Architecture: "arm64e"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Resource
			for _, s := range tt.sources {
				got.Fill(s)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestResourceCopyTo pins the keys each field becomes.
func TestResourceCopyTo(t *testing.T) {
	r := Resource{
		ProjectID: "7", Release: "shop@2.0.1+9", Environment: "prod", Dist: "9", Platform: "cocoa", ServerName: "web-1",
		SDK:     sentry.ClientSDK{Name: "sentry.cocoa", Version: "8.40.0"},
		OS:      sentry.OS{Name: "iOS", Version: "18.1", BuildNumber: "22B83"},
		Device:  sentry.Device{Architecture: "arm64e", Model: "iPhone16,1", Manufacturer: "Apple", Locale: "en_US", Classification: "high", IsEmulator: sentry.BoolFalse},
		Runtime: sentry.Runtime{Name: "swift", Version: "6.0"},
	}
	res := pcommon.NewResource()
	r.CopyTo(res)
	assert.Equal(t, map[string]any{
		"service.name": "shop", "service.version": "shop@2.0.1+9", "deployment.environment.name": "prod",
		"sentry.dist": "9", "sentry.platform": "cocoa", "sentry.project.id": "7", "host.name": "web-1",
		"telemetry.sdk.name": "sentry.cocoa", "telemetry.sdk.version": "8.40.0",
		"os.name": "iOS", "os.version": "18.1", "os.build_id": "22B83",
		"host.arch": "arm64e", "device.model.identifier": "iPhone16,1", "device.manufacturer": "Apple",
		"sentry.device.locale": "en_US", "sentry.device.classification": "high", "sentry.device.is_emulator": false,
		"process.runtime.name": "swift", "process.runtime.version": "6.0",
	}, res.Attributes().AsRaw())

	override := Resource{ServiceName: "checkout", Platform: "node"}
	res = pcommon.NewResource()
	override.CopyTo(res)
	assert.Equal(t, map[string]any{"service.name": "checkout", "sentry.platform": "node"}, res.Attributes().AsRaw())
}
