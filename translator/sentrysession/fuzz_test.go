package sentrysession

import (
	"errors"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

func countPoints(dst pmetric.MetricSlice) int {
	n := 0
	for _, m := range dst.All() {
		switch m.Type() {
		case pmetric.MetricTypeSum:
			n += m.Sum().DataPoints().Len()
		case pmetric.MetricTypeExponentialHistogram:
			n += m.ExponentialHistogram().DataPoints().Len()
		}
	}
	return n
}

// FuzzAppend: both item types report the points they append and type
// their errors; a "session" item appends all or nothing.
func FuzzAppend(f *testing.F) {
	for _, file := range []string{"node11_session_crashed.json", "python268_session_exited.json", "python268_sessions_aggregate.json"} {
		f.Add(signaltest.ReadTestdata(f, file))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		dst := pmetric.NewMetricSlice()
		n, err := AppendSession(payload, sentrysignal.Options{}, dst)
		var de *sentrysignal.DecodeError
		if n != countPoints(dst) || (err != nil && (!errors.As(err, &de) || dst.Len() != 0)) {
			t.Fatalf("session: n=%d points=%d err=%v", n, countPoints(dst), err)
		}
		dst = pmetric.NewMetricSlice()
		n, err = AppendSessions(payload, sentrysignal.Options{MaxItems: 20}, dst)
		var pe *sentrysignal.PartialError
		if n != countPoints(dst) || (err != nil && !errors.As(err, &pe) && !errors.As(err, &de)) {
			t.Fatalf("sessions: n=%d points=%d err=%v", n, countPoints(dst), err)
		}
	})
}
