package sentryfeedback

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// TestFacts: feedback and user reports name the event they are about
// (normalized, only when it is an id), feedback its event's resource.
func TestFacts(t *testing.T) {
	tests := []struct {
		name           string
		decode         sentrysignal.LogsDecoder
		payload        string
		about, release string
	}{
		{"feedback", FeedbackLogs, `{"release":"web@2","contexts":{"feedback":{"message":"slow",
			"associated_event_id":"0F1E2D3C4B5A69788796A5B4C3D2E1F0"}}}`, "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "web@2"},
		{"feedback about no id", FeedbackLogs, `{"contexts":{"feedback":{"message":"slow","associated_event_id":"x"}}}`, "", ""},
		{"user report", UserReportLogs, `{"event_id":"0f1e2d3c4b5a69788796a5b4c3d2e1f0","comments":"broke"}`,
			"0f1e2d3c4b5a69788796a5b4c3d2e1f0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs, err := tt.decode([]byte(tt.payload), sentrysignal.Options{})
			if err != nil {
				t.Fatal(err)
			}
			assert.Equal(t, tt.about, logs.AboutEventID)
			assert.Empty(t, logs.EventID)
			assert.Equal(t, tt.release, logs.Resource.Release)
			dst := plog.NewLogRecordSlice()
			assert.Equal(t, 1, logs.Append(dst))
			v, ok := dst.At(0).Attributes().Get(AttrAssociatedEventID)
			assert.Equal(t, tt.about != "", ok)
			if ok {
				assert.Equal(t, tt.about, v.Str())
			}
		})
	}
}
