// Package v04 checks the receiver's output as read by the OTLP profiles
// proto v0.4.0, the way Grafana Pyroscope's ingester reads it.
package v04

import (
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	collectorv1 "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	"google.golang.org/protobuf/proto"

	"github.com/sentryprofile/otelcol-sentryprofile/compat/pyroscope"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtureprofiles"
)

func TestPyroscopeReadsV040(t *testing.T) {
	for _, f := range fixtureprofiles.Translate(t, profilesin.ReceiveOptions{}, fixtureprofiles.Readable...) {
		t.Run(f.Name, func(t *testing.T) {
			c := pprofile.NewProfiles()
			f.Profiles.CopyTo(c)
			buf, err := pprofileotlp.NewExportRequestFromProfiles(c).MarshalProto()
			require.NoError(t, err)
			var req collectorv1.ExportProfilesServiceRequest
			require.NoError(t, proto.Unmarshal(buf, &req))
			series, err := pyroscope.Read(&req)
			require.NoError(t, err, "Pyroscope would refuse the request")
			assert.NoError(t, pyroscope.Check(series, f.Profiles, f.Samples))
		})
	}
}
