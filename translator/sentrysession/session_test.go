package sentrysession

import (
	"errors"
	"reflect"
	"sort"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// point is one data point as the tests compare them.
type point struct {
	metric  string
	value   float64
	status  string
	errored string
}

func points(dst pmetric.MetricSlice) []point {
	var out []point
	for _, m := range dst.All() {
		switch m.Type() {
		case pmetric.MetricTypeSum:
			for _, dp := range m.Sum().DataPoints().All() {
				out = append(out, point{m.Name(), float64(dp.IntValue()), attr(dp.Attributes(), AttrStatus), attr(dp.Attributes(), AttrErrored)})
			}
		case pmetric.MetricTypeExponentialHistogram:
			for _, dp := range m.ExponentialHistogram().DataPoints().All() {
				out = append(out, point{m.Name(), dp.Sum(), "", ""})
			}
		}
	}
	return out
}

func attr(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}

func TestAppendSession(t *testing.T) {
	tests := []struct {
		file string
		want []point
	}{
		{"node11_session_init.json", []point{{MetricStarted, 1, "", ""}}},
		// node's process session gets no "exited" after the crash
		{"node11_session_crashed.json", []point{{MetricEnded, 1, "crashed", "true"}, {MetricErrored, 1, "", ""},
			{MetricErrors, 1, "", ""}, {MetricDuration, 12.345, "", ""}}},
		{"browser11_session_init.json", []point{{MetricStarted, 1, "", ""}}},
		// browser 11 marks an unhandled error "unhandled", not "crashed"
		{"browser11_session_unhandled.json", []point{{MetricEnded, 1, "unhandled", "true"}, {MetricErrored, 1, "", ""},
			{MetricErrors, 1, "", ""}}},
		// python sends its session once, at the end
		{"python268_session_exited.json", []point{{MetricStarted, 1, "", ""}, {MetricEnded, 1, "exited", "false"},
			{MetricDuration, 5.5, "", ""}}},
		// captured from @sentry/browser 11.1.0 in headless Chromium: the page's
		// session, then "unhandled" after an unhandled error, never "exited"
		{"browser11_captured_session_1.json", []point{{MetricStarted, 1, "", ""}}},
		{"browser11_captured_session_2.json", []point{{MetricEnded, 1, "unhandled", "true"}, {MetricErrored, 1, "", ""},
			{MetricErrors, 1, "", ""}}},
		// captured from sentry-python 2.68.0: one update at the end, with the
		// error and without a duration
		{"python268_captured_session_1.json", []point{{MetricStarted, 1, "", ""}, {MetricEnded, 1, "exited", "true"},
			{MetricErrored, 1, "", ""}, {MetricErrors, 1, "", ""}}},
		// captured from @sentry/node 11.1.0: the process session starts with
		// the error already counted, then exits
		{"node11_captured_session_1.json", []point{{MetricStarted, 1, "", ""}}},
		{"node11_captured_session_2.json", []point{{MetricEnded, 1, "exited", "true"}, {MetricErrored, 1, "", ""},
			{MetricErrors, 1, "", ""}, {MetricDuration, 0.5806174278259277, "", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			dst := pmetric.NewMetricSlice()
			n, err := AppendSession(signaltest.ReadTestdata(t, tt.file), sentrysignal.Options{}, dst)
			if err != nil || n != len(tt.want) {
				t.Fatalf("AppendSession = %d, %v", n, err)
			}
			if got := points(dst); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("points %v\nwant %v", got, tt.want)
			}
			for _, m := range dst.All() {
				if m.Type() == pmetric.MetricTypeSum && (m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityDelta || !m.Sum().IsMonotonic()) {
					t.Errorf("%s is not a monotonic delta sum", m.Name())
				}
			}
		})
	}
}

func TestLabelsAndTimes(t *testing.T) {
	dst := pmetric.NewMetricSlice()
	if _, err := AppendSession(signaltest.ReadTestdata(t, "python268_session_exited.json"), sentrysignal.Options{}, dst); err != nil {
		t.Fatal(err)
	}
	started := dst.At(0).Sum().DataPoints().At(0)
	ended := dst.At(1).Sum().DataPoints().At(0)
	if uint64(started.Timestamp()) != 1795644004000000000 || uint64(ended.Timestamp()) != 1795644009500000000 {
		t.Errorf("started at %d, ended at %d", started.Timestamp(), ended.Timestamp())
	}
	want := map[string]any{AttrRelease: "worker@1.0", AttrEnvironment: "staging"}
	if got := started.Attributes().AsRaw(); !reflect.DeepEqual(got, want) {
		t.Errorf("labels %v", got)
	}
	if dst.At(0).Unit() != "{session}" || dst.At(2).Unit() != "s" {
		t.Errorf("units %q %q", dst.At(0).Unit(), dst.At(2).Unit())
	}
	u, _ := DecodeUpdate(signaltest.ReadTestdata(t, "python268_session_exited.json"), sentrysignal.Options{})
	if u.Resource.Release != "worker@1.0" || u.Resource.Environment != "staging" {
		t.Errorf("resource %+v", u.Resource)
	}
}

// updateFromMetrics reads the points of one update back into the fields
// of the update they were written from: the "back" column of README.md.
func updateFromMetrics(dst pmetric.MetricSlice) Update {
	u := Update{Status: "ok"}
	for _, m := range dst.All() {
		switch m.Name() {
		case MetricStarted:
			dp := m.Sum().DataPoints().At(0)
			u.Init, u.Started = true, dp.Timestamp()
			u.Release, u.Environment = attr(dp.Attributes(), AttrRelease), attr(dp.Attributes(), AttrEnvironment)
		case MetricEnded:
			dp := m.Sum().DataPoints().At(0)
			u.Status, u.Timestamp = attr(dp.Attributes(), AttrStatus), dp.Timestamp()
			u.AbnormalMechanism = attr(dp.Attributes(), AttrAbnormalMechanism)
			u.Release, u.Environment = attr(dp.Attributes(), AttrRelease), attr(dp.Attributes(), AttrEnvironment)
		case MetricErrors:
			u.Errors = m.Sum().DataPoints().At(0).IntValue()
		case MetricDuration:
			u.Duration, u.HasDur = m.ExponentialHistogram().DataPoints().At(0).Sum(), true
		}
	}
	return u
}

func TestRoundTrip(t *testing.T) {
	for _, file := range []string{"node11_session_crashed.json", "browser11_session_unhandled.json", "python268_session_exited.json",
		"node11_captured_session_2.json", "python268_captured_session_1.json", "browser11_captured_session_2.json"} {
		t.Run(file, func(t *testing.T) {
			u, err := DecodeUpdate(signaltest.ReadTestdata(t, file), sentrysignal.Options{})
			if err != nil {
				t.Fatal(err)
			}
			dst := pmetric.NewMetricSlice()
			u.AppendMetrics(dst)
			got := updateFromMetrics(dst)
			want := *u
			want.Resource = sentryresource.Resource{}
			if !want.Init {
				want.Started = 0 // an update that does not start the session does not say when it started
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read back %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestAppendSessions(t *testing.T) {
	dst := pmetric.NewMetricSlice()
	n, err := AppendSessions(signaltest.ReadTestdata(t, "python268_sessions_aggregate.json"), sentrysignal.Options{}, dst)
	if err != nil || n != 8 {
		t.Fatalf("AppendSessions = %d, %v", n, err)
	}
	want := []point{
		{MetricStarted, 14, "", ""}, {MetricStarted, 4, "", ""},
		{MetricEnded, 12, "exited", "false"}, {MetricEnded, 2, "exited", "true"},
		{MetricEnded, 3, "exited", "false"}, {MetricEnded, 1, "crashed", "true"},
		{MetricErrored, 2, "", ""}, {MetricErrored, 1, "", ""},
	}
	if got := points(dst); !reflect.DeepEqual(got, want) {
		t.Errorf("points %v\nwant %v", got, want)
	}
	// back: each bucket's counts by status
	buckets := map[uint64]map[string]int64{}
	for _, dp := range dst.At(1).Sum().DataPoints().All() {
		b := buckets[uint64(dp.Timestamp())]
		if b == nil {
			b = map[string]int64{}
			buckets[uint64(dp.Timestamp())] = b
		}
		member := attr(dp.Attributes(), AttrStatus)
		if member == "exited" && attr(dp.Attributes(), AttrErrored) == "true" {
			member = "errored"
		}
		b[member] = dp.IntValue()
	}
	wantBuckets := map[uint64]map[string]int64{
		1795644000000000000: {"exited": 12, "errored": 2},
		1795644060000000000: {"exited": 3, "crashed": 1},
	}
	if !reflect.DeepEqual(buckets, wantBuckets) {
		t.Errorf("buckets %v", buckets)
	}
}

func TestErrors(t *testing.T) {
	updates := []struct{ payload, field string }{
		{`{"init":true}`, "started"},
		{`{"started":"2026-11-25T22:00:00Z","timestamp":"later"}`, "timestamp"},
		{`[1]`, ""},
		{`{`, ""},
	}
	for _, tt := range updates {
		dst := pmetric.NewMetricSlice()
		n, err := AppendSession([]byte(tt.payload), sentrysignal.Options{}, dst)
		var de *sentrysignal.DecodeError
		if n != 0 || dst.Len() != 0 || !errors.As(err, &de) || de.Field != tt.field {
			t.Errorf("%s: %d, %v", tt.payload, n, err)
		}
	}
	payload := `{"aggregates":[{"started":"x","exited":1},{"started":"2026-11-25T22:00:00Z","exited":-1},
		{"started":"2026-11-25T22:00:00Z","crashed":"2"},7,{"started":"2026-11-25T22:00:00Z","exited":5}],"attrs":{}}`
	dst := pmetric.NewMetricSlice()
	n, err := AppendSessions([]byte(payload), sentrysignal.Options{}, dst)
	var pe *sentrysignal.PartialError
	if n != 2 || !errors.As(err, &pe) || pe.Dropped != 4 {
		t.Errorf("AppendSessions = %d, %v", n, err)
	}
	fields := []string{}
	for _, de := range pe.Errors {
		fields = append(fields, de.Field)
	}
	sort.Strings(fields)
	if !reflect.DeepEqual(fields, []string{"", "crashed", "exited", "started"}) {
		t.Errorf("fields %v", fields)
	}
	for _, bad := range []string{`{"aggregates":{}}`, `[]`} {
		if n, err := AppendSessions([]byte(bad), sentrysignal.Options{}, pmetric.NewMetricSlice()); n != 0 || err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// Request-mode sessions as sentry-python 2.68.0 aggregated them.
func TestCapturedPython268Aggregates(t *testing.T) {
	dst := pmetric.NewMetricSlice()
	n, err := AppendSessions(signaltest.ReadTestdata(t, "python268_captured_sessions_1.json"), sentrysignal.Options{}, dst)
	if n != 2 || err != nil {
		t.Fatalf("AppendSessions = %d, %v", n, err)
	}
	want := []point{{MetricStarted, 2, "", ""}, {MetricEnded, 2, "exited", "false"}}
	if got := points(dst); !reflect.DeepEqual(got, want) {
		t.Errorf("points %v", got)
	}
}
