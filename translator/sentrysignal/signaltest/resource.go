package signaltest

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
)

// The resource of records read back from their attributes, as a receiver
// once learned it: the yardstick the translators' own Facts are checked
// against.

// ResourceOfAttributes is what one record's (or point's) string
// attributes sentry.release, sentry.environment, sentry.sdk.name,
// sentry.sdk.version and server.address name.
func ResourceOfAttributes(attrs pcommon.Map) sentryresource.Resource {
	str := func(k string) string {
		if v, ok := attrs.Get(k); ok && v.Type() == pcommon.ValueTypeStr {
			return v.Str()
		}
		return ""
	}
	r := sentryresource.Resource{
		Release:     str(sentryattr.Release),
		Environment: str(sentryattr.Environment),
		ServerName:  str(string(semconv.ServerAddressKey)),
	}
	r.SDK.Name, r.SDK.Version = str(sentryattr.SDKName), str(sentryattr.SDKVersion)
	return r
}

// ResourceOfRecords fills a resource from every record, in order.
func ResourceOfRecords(records plog.LogRecordSlice) sentryresource.Resource {
	var r sentryresource.Resource
	for i := 0; i < records.Len(); i++ {
		r.Fill(ResourceOfAttributes(records.At(i).Attributes()))
	}
	return r
}

// ResourceOfMetrics fills a resource from the first point of every
// metric, in order.
func ResourceOfMetrics(metrics pmetric.MetricSlice) sentryresource.Resource {
	var r sentryresource.Resource
	for i := 0; i < metrics.Len(); i++ {
		if attrs, ok := firstPointAttributes(metrics.At(i)); ok {
			r.Fill(ResourceOfAttributes(attrs))
		}
	}
	return r
}

// firstPointAttributes are the attributes of a metric's first data point.
func firstPointAttributes(m pmetric.Metric) (pcommon.Map, bool) {
	var points interface {
		Len() int
	}
	var first func() pcommon.Map
	switch m.Type() {
	case pmetric.MetricTypeSum:
		dps := m.Sum().DataPoints()
		points, first = dps, func() pcommon.Map { return dps.At(0).Attributes() }
	case pmetric.MetricTypeGauge:
		dps := m.Gauge().DataPoints()
		points, first = dps, func() pcommon.Map { return dps.At(0).Attributes() }
	case pmetric.MetricTypeExponentialHistogram:
		dps := m.ExponentialHistogram().DataPoints()
		points, first = dps, func() pcommon.Map { return dps.At(0).Attributes() }
	default:
		return pcommon.Map{}, false
	}
	if points.Len() == 0 {
		return pcommon.Map{}, false
	}
	return first(), true
}
