package sentryprofileexporter

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter/internal/metadata"
)

func TestCollectorInstanceID(t *testing.T) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Skipf("no host name here: %v", err)
	}
	tests := []struct {
		name     string
		instance string // the collector's service.instance.id, "" for none
		want     string
	}{
		{name: "the collector's service.instance.id", instance: "0b6a6f5e-collector", want: "0b6a6f5e-collector"},
		{name: "else the host name", want: host},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := exportertest.NewNopSettings(metadata.Type)
			if tt.instance != "" {
				set.Resource.Attributes().PutStr("service.instance.id", tt.instance)
			}
			assert.Equal(t, tt.want, collectorInstanceID(set))
		})
	}
}
