package sentrysession

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
)

// The metrics this package writes.
const (
	// MetricStarted counts sessions that started (an update with
	// "init": true, or every session of an aggregate bucket).
	MetricStarted = "sentry.sessions.started"
	// MetricEnded counts sessions that ended, by AttrStatus and AttrErrored.
	MetricEnded = "sentry.sessions.ended"
	// MetricErrored counts ended sessions that had an error: errors > 0,
	// or a status other than "exited".
	MetricErrored = "sentry.sessions.errored"
	// MetricErrors counts the errors ended sessions report ("errors").
	MetricErrors = "sentry.session.errors"
	// MetricDuration is the duration of ended sessions that report one.
	MetricDuration = "sentry.session.duration"
)

// Attribute keys of the data points.
const (
	// AttrStatus is the status a session ended with: "exited",
	// "unhandled" (browser SDKs: an unhandled error that did not crash),
	// "crashed", "abnormal", or what else an SDK sends.
	AttrStatus = "sentry.session.status"
	// AttrErrored says whether the ended session had an error.
	AttrErrored = "sentry.session.errored"
	// AttrAbnormalMechanism is "abnormal_mechanism" (e.g. anr_foreground).
	AttrAbnormalMechanism = "sentry.session.abnormal_mechanism"
	// AttrRelease and AttrEnvironment are "attrs.release" and
	// "attrs.environment", the names Sentry's logs and metrics use.
	AttrRelease     = sentryattr.Release
	AttrEnvironment = sentryattr.Environment
)

// metricSet starts each metric the first time it gets a point, in a fixed
// order, so that an item writes only the metrics it has points for.
type metricSet struct {
	dst     pmetric.MetricSlice
	started pmetric.NumberDataPointSlice
	ended   pmetric.NumberDataPointSlice
	errored pmetric.NumberDataPointSlice
	errors  pmetric.NumberDataPointSlice
	dur     pmetric.ExponentialHistogramDataPointSlice
	has     [5]bool
	points  int
}

func (s *metricSet) counter(which int, name string, slot *pmetric.NumberDataPointSlice) pmetric.NumberDataPoint {
	if !s.has[which] {
		m := s.dst.AppendEmpty()
		m.SetName(name)
		m.SetUnit("{session}")
		if name == MetricErrors {
			m.SetUnit("{error}")
		}
		sum := m.SetEmptySum()
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
		sum.SetIsMonotonic(true)
		*slot = sum.DataPoints()
		s.has[which] = true
	}
	s.points++
	return slot.AppendEmpty()
}

// count adds a delta of n sessions at ts.
func (s *metricSet) count(name string, ts pcommon.Timestamp, n int64, labels labels) pmetric.NumberDataPoint {
	var dp pmetric.NumberDataPoint
	switch name {
	case MetricStarted:
		dp = s.counter(0, name, &s.started)
	case MetricEnded:
		dp = s.counter(1, name, &s.ended)
	case MetricErrored:
		dp = s.counter(2, name, &s.errored)
	default:
		dp = s.counter(3, MetricErrors, &s.errors)
	}
	dp.SetStartTimestamp(ts)
	dp.SetTimestamp(ts)
	dp.SetIntValue(n)
	labels.put(dp.Attributes())
	return dp
}

// duration observes one ended session's duration in seconds.
func (s *metricSet) duration(ts pcommon.Timestamp, seconds float64, labels labels) pmetric.ExponentialHistogramDataPoint {
	if !s.has[4] {
		m := s.dst.AppendEmpty()
		m.SetName(MetricDuration)
		m.SetUnit("s")
		h := m.SetEmptyExponentialHistogram()
		h.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
		s.dur = h.DataPoints()
		s.has[4] = true
	}
	s.points++
	dp := s.dur.AppendEmpty()
	dp.SetStartTimestamp(ts)
	dp.SetTimestamp(ts)
	sentrysignal.PutObservation(dp, seconds)
	labels.put(dp.Attributes())
	return dp
}

// labels are the attributes every point of an item carries.
type labels struct{ release, environment string }

func (l labels) put(attrs pcommon.Map) {
	if l.release != "" {
		attrs.PutStr(AttrRelease, l.release)
	}
	if l.environment != "" {
		attrs.PutStr(AttrEnvironment, l.environment)
	}
}
