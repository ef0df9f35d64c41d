package pyroscope

import (
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	collectorv1 "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	"google.golang.org/protobuf/proto"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtureprofiles"
)

// marshal is the receiver's output as an OTLP exporter sends it: pdata
// writes resource attributes as string-table references.
func marshal(t *testing.T, pd pprofile.Profiles) []byte {
	t.Helper()
	c := pprofile.NewProfiles()
	pd.CopyTo(c)
	buf, err := pprofileotlp.NewExportRequestFromProfiles(c).MarshalProto()
	require.NoError(t, err)
	return buf
}

// TestPyroscopeReadsV030 decodes the receiver's output for every readable
// fixture with the OTLP profiles proto Pyroscope pins (v0.3.0, before
// string-table references for resource attributes) and reads it as
// Pyroscope's ingester does.
func TestPyroscopeReadsV030(t *testing.T) {
	for _, f := range fixtureprofiles.Translate(t, profilesin.ReceiveOptions{}, fixtureprofiles.Readable...) {
		t.Run(f.Name, func(t *testing.T) {
			var req collectorv1.ExportProfilesServiceRequest
			require.NoError(t, proto.Unmarshal(marshal(t, f.Profiles), &req))
			series, err := Read(&req)
			require.NoError(t, err, "Pyroscope would refuse the request")
			for _, s := range series {
				t.Logf("service %q, %s (%s), %d samples, total %d %s, labels %v", s.Service, s.Name, s.ProfileType, s.Samples, s.Total, s.Unit, s.SampleLabels)
			}
			assert.NoError(t, Check(series, f.Profiles, f.Samples))
		})
	}
}

// TestPyroscopeSeesCountsWhenGrouped documents the other shape: with
// group_samples, Pyroscope reads counts, not time.
func TestPyroscopeSeesCountsWhenGrouped(t *testing.T) {
	f := fixtureprofiles.Translate(t, profilesin.ReceiveOptions{GroupSamples: true}, fixtureprofiles.Readable[1])[0]
	var req collectorv1.ExportProfilesServiceRequest
	require.NoError(t, proto.Unmarshal(marshal(t, f.Profiles), &req))
	series, err := Read(&req)
	require.NoError(t, err)
	require.NotEmpty(t, series)
	assert.Equal(t, "count", series[0].Unit)
	assert.Error(t, Check(series, f.Profiles, f.Samples))
}
