package sentrymetric

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// The statsd item @sentry/node 8.55.2 sent for Sentry.metrics.increment
// (twice), distribution (twice), gauge (twice) and set (three values),
// captured from the SDK.
func TestStatsdCapturedNode8(t *testing.T) {
	dst := pmetric.NewMetricSlice()
	n, err := AppendStatsd(signaltest.ReadTestdata(t, "node8_captured_statsd.txt"), sentrysignal.Options{}, dst)
	if n != 4 || err != nil || dst.Len() != 4 {
		t.Fatalf("AppendStatsd = %d, %v (%d metrics)", n, err, dst.Len())
	}
	const ts = 1795646343000000000
	counter := dst.At(0)
	if counter.Name() != "orders.shipped" || counter.Unit() != "1" || counter.Sum().DataPoints().At(0).IntValue() != 3 ||
		uint64(counter.Sum().DataPoints().At(0).Timestamp()) != ts {
		t.Errorf("counter %s %q %d", counter.Name(), counter.Unit(), counter.Sum().DataPoints().At(0).IntValue())
	}
	tags := counter.Sum().DataPoints().At(0).Attributes().AsRaw()
	if !reflect.DeepEqual(tags, map[string]any{"release": "shop@1.4.2", "environment": "production", "region": "eu-1"}) {
		t.Errorf("tags %v", tags)
	}
	dist := dst.At(1).ExponentialHistogram().DataPoints().At(0)
	if dst.At(1).Unit() != "ms" || dist.Count() != 2 || dist.Sum() != 199.5 || dist.Min() != 12 || dist.Max() != 187.5 {
		t.Errorf("distribution %q count %d sum %v min %v max %v", dst.At(1).Unit(), dist.Count(), dist.Sum(), dist.Min(), dist.Max())
	}
	if g := dst.At(2).Gauge().DataPoints().At(0); g.IntValue() != 40 {
		t.Errorf("gauge last %d, want 40", g.IntValue())
	}
	if s := dst.At(3).Gauge().DataPoints().At(0); s.IntValue() != 3 {
		t.Errorf("set distinct count %d, want 3", s.IntValue())
	}
	for i, typ := range []string{"c", "d", "g", "s"} {
		if v, _ := dst.At(i).Metadata().Get(MetadataStatsdType); v.Str() != typ {
			t.Errorf("metric %d metadata type %q", i, v.Str())
		}
	}
}

// statsdFromOTLP writes the output back as statsd lines: what of a bucket
// the mapping keeps (a gauge's last value, a set's distinct count, a
// distribution's count, sum, min and max).
func statsdFromOTLP(dst pmetric.MetricSlice) []string {
	var out []string
	line := func(m pmetric.Metric, typ, values string, ts pcommon.Timestamp, attrs pcommon.Map) {
		var tags []string
		for k, v := range attrs.All() {
			tags = append(tags, k+":"+v.Str())
		}
		sort.Strings(tags)
		out = append(out, fmt.Sprintf("%s@%s:%s|%s|#%s|T%d", m.Name(), SentryUnit(m.Unit()), values, typ, strings.Join(tags, ","), uint64(ts)/1e9))
	}
	for _, m := range dst.All() {
		typ, _ := m.Metadata().Get(MetadataStatsdType)
		switch m.Type() {
		case pmetric.MetricTypeSum:
			for _, dp := range m.Sum().DataPoints().All() {
				line(m, "c", fmt.Sprint(dp.IntValue()), dp.Timestamp(), dp.Attributes())
			}
		case pmetric.MetricTypeGauge:
			for _, dp := range m.Gauge().DataPoints().All() {
				line(m, typ.Str(), fmt.Sprint(dp.IntValue()), dp.Timestamp(), dp.Attributes())
			}
		case pmetric.MetricTypeExponentialHistogram:
			for _, dp := range m.ExponentialHistogram().DataPoints().All() {
				line(m, "d", fmt.Sprintf("count=%d,sum=%v,min=%v,max=%v", dp.Count(), dp.Sum(), dp.Min(), dp.Max()), dp.Timestamp(), dp.Attributes())
			}
		}
	}
	return out
}

func TestStatsdRoundTrip(t *testing.T) {
	dst := pmetric.NewMetricSlice()
	if _, err := AppendStatsd(signaltest.ReadTestdata(t, "node8_captured_statsd.txt"), sentrysignal.Options{}, dst); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"orders.shipped@none:3|c|#environment:production,region:eu-1,release:shop@1.4.2|T1795646343",
		"checkout.duration@millisecond:count=2,sum=199.5,min=12,max=187.5|d|#environment:production,release:shop@1.4.2,route:/pay|T1795646343",
		"queue.depth@none:40|g|#environment:production,release:shop@1.4.2|T1795646343",
		"users.seen@none:3|s|#environment:production,release:shop@1.4.2|T1795646343",
	}
	if got := statsdFromOTLP(dst); !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestStatsdLines(t *testing.T) {
	payload := strings.Join([]string{
		`ok@second:1.5|c|#k:a\u{2c}b\u{7c}c\\n|T1795646343`,
		`no-type:1`,
		`bad-type:1|x|T1`,
		`nan:NaN|c|T1`,
		`gauge:1:2|g|T1`,
		`two:1:2|c|T1`,
		`no-time:1|c`,
		`neg-time:1|c|T-5`,
		`:1|c|T1`,
		``,
		`ok@second:2.5|c|@0.5|T1795646344`,
	}, "\n")
	dst := pmetric.NewMetricSlice()
	n, err := AppendStatsd([]byte(payload), sentrysignal.Options{}, dst)
	var pe *sentrysignal.PartialError
	if n != 2 || !errors.As(err, &pe) || pe.Dropped != 8 {
		t.Fatalf("AppendStatsd = %d, %v", n, err)
	}
	dp := dst.At(0).Sum().DataPoints()
	if dst.Len() != 1 || dp.Len() != 2 || dp.At(0).DoubleValue() != 1.5 || dst.At(0).Unit() != "s" {
		t.Fatalf("metrics %d points %d", dst.Len(), dp.Len())
	}
	if k, _ := dp.At(0).Attributes().Get("k"); k.Str() != "a,b|c\\n" {
		t.Errorf("unescaped tag %q", k.Str())
	}
	if _, err := AppendStatsd([]byte("a:1|c|T1\nb:1|c|T1"), sentrysignal.Options{MaxItems: 1}, pmetric.NewMetricSlice()); err == nil {
		t.Error("more lines than the limit accepted")
	}
}

func FuzzAppendStatsd(f *testing.F) {
	f.Add(signaltest.ReadTestdata(f, "node8_captured_statsd.txt"))
	f.Fuzz(func(t *testing.T, payload []byte) {
		dst := pmetric.NewMetricSlice()
		n, err := AppendStatsd(payload, sentrysignal.Options{MaxItems: 50}, dst)
		points := 0
		for _, m := range dst.All() {
			points += pointCount(m)
		}
		var pe *sentrysignal.PartialError
		var de *sentrysignal.DecodeError
		if points != n || (err != nil && !errors.As(err, &pe) && !errors.As(err, &de)) {
			t.Fatalf("n=%d points=%d err=%v", n, points, err)
		}
	})
}
