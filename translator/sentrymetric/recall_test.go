package sentrymetric

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// recallEntries are metrics whose attributes repeat as an SDK's batch
// repeats them: the scanner recalls them by their text, and the
// translator writes an entry whose attributes are all those of the entry
// before of their shape (but its sentry.timestamp.sequence) as a copy.
// Each comment says what the entry exercises.
var recallEntries = func() []string {
	attrs := func(release, region string, seq int, extra string) string {
		s := `"server.address":{"value":"vm","type":"string"},` +
			`"user.id":{"value":"u-1","type":"string"},"user.email":{"value":"ada@example.com","type":"string"},` +
			`"sentry.release":{"value":"` + release + `","type":"string"},"sentry.environment":{"value":"prod","type":"string"},` +
			`"sentry.sdk.name":{"value":"sentry.javascript.node","type":"string"},"sentry.sdk.version":{"value":"11.1.0","type":"string"},`
		if region != "" {
			s += `"region":{"value":"` + region + `","type":"string"},`
		}
		s += `"count":{"value":3,"type":"integer"},"ratio":{"value":0.5,"type":"double"},` +
			`"odd":{"value":"x","type":"version"},` + extra +
			fmt.Sprintf(`"sentry.timestamp.sequence":{"value":%d,"type":"integer"}`, seq)
		return s
	}
	entry := func(name, typ, unit, members, attributes string) string {
		if unit != "" {
			unit = `"unit":"` + unit + `",`
		}
		return `{"timestamp":1795646059.25,"trace_id":"f2383fbd04214115a8ddb090beaffebd","span_id":"b041fbb7f99f4835",` +
			`"name":"` + name + `","type":"` + typ + `",` + unit + `"value":1.5,` + members + `"attributes":{` + attributes + `}}`
	}
	return []string{
		entry("p", "gauge", "", "", `"sentry.environment":{"value":"e0","type":"string"}`),                                                      // series p starts: its resource
		entry("p", "gauge", "", "", `"sentry.release":{"value":"rp","type":"string"},"sentry.timestamp.sequence":{"value":0,"type":"integer"}`), // not its first point: no resource
		entry("q", "gauge", "", "", `"sentry.release":{"value":"rp","type":"string"},"sentry.timestamp.sequence":{"value":1,"type":"integer"}`), // a copy starts series q: its resource
		entry("c", "counter", "", "", attrs("r1", "eu", 0, "")),                                                                                 // a shape's first entry
		entry("c", "counter", "", "", attrs("r1", "eu", 1, "")),                                                                                 // the same but the sequence: a copy
		entry("c", "counter", "", "", attrs("r1", "eu", 1, "")),                                                                                 // all the same: a copy
		entry("d", "distribution", "ms", "", attrs("r1", "", 0, "")),                                                                            // another shape
		entry("c", "counter", "", "", attrs("r1", "eu", 2, "")),                                                                                 // back to the first shape: a copy
		entry("c", "counter", "", "", attrs("r2", "eu", 3, "")),                                                                                 // another release: written
		entry("c", "counter", "", "", attrs("r2", "eu", 4, "")),                                                                                 // a copy noting r2
		entry("c", "counter", "", `"extra":1,`, attrs("r2", "eu", 5, "")),                                                                       // a member of its own: written, not told
		entry("c", "counter", "", "", attrs("r2", "eu", 6, "")),                                                                                 // after an entry not told: written
		entry("c", "counter", "", "", attrs("r2", "us", 7, `"flag":{"value":true,"type":"boolean"},`)),                                          // a boolean (read as a value, not recalled): written
		entry("c", "counter", "", "", attrs("r2", "us", 7, `"flag":{"value":true,"type":"boolean"},`)),                                          // and again
		entry("c", "counter", "", "", attrs("r2", "us", 7, "")),                                                                                 // one attribute differs: written
		entry("g", "gauge", "", "", attrs("r2", "us", 8, `"region":{"value":"ap","type":"string"},`)),                                           // a repeated key: its last value
		entry("g", "gauge", "", "", attrs("r2", "us", 9, `"region":{"value":"ap","type":"string"},`)),                                           // and its copy
		entry("c", "counter", "", "", `"sentry.timestamp.sequence":{"value":1,"type":"integer"},"a":{"value":"b","type":"string"}`),             // the sequence first
		entry("c", "counter", "", "", `"sentry.timestamp.sequence":{"value":2,"type":"integer"},"a":{"value":"b","type":"string"}`),             // and its copy
	}
}()

// TestRecalledAttributesAsAlone: each metric of a container whose entries
// repeat their attributes has the point (attributes, exemplar) and the
// resource it has alone in a container, where nothing is recalled; and the
// truncations counted are those counted alone.
func TestRecalledAttributesAsAlone(t *testing.T) {
	for _, opts := range []sentrysignal.Options{{}, {IncludeUserData: true}, {MaxMapEntries: 4}} {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			if err := asAlone(recallEntries, opts); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// FuzzRecalledAttributesAsAlone is TestRecalledAttributesAsAlone of any
// entries (one per line).
func FuzzRecalledAttributesAsAlone(f *testing.F) {
	f.Add(strings.Join(recallEntries, "\n"))
	f.Add(strings.Join(recallEntries[3:9], "\n"))
	f.Fuzz(func(t *testing.T, lines string) {
		entries := strings.Split(lines, "\n")
		if len(entries) > 64 {
			return
		}
		for _, e := range entries {
			var obj map[string]any
			if json.Unmarshal([]byte(e), &obj) != nil {
				return // entries are objects; a container of others is not what is compared
			}
		}
		for _, opts := range []sentrysignal.Options{{}, {MaxMapEntries: 4}} {
			if err := asAlone(entries, opts); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// asAlone translates entries as one container and each alone, and says
// where they differ: a point's attributes and exemplars, the resource of
// the series' first points, the truncations counted.
func asAlone(entries []string, opts sentrysignal.Options) error {
	var truncTogether, truncAlone sentrysignal.Truncations
	o := opts
	o.Truncations = &truncTogether
	together, err := translate("["+strings.Join(entries, ",")+"]", o)
	if err != nil {
		return nil // the container is not one: nothing to compare
	}
	seen := map[seriesKey]int{} // points taken of each series
	var resource sentryresource.Resource
	for i, e := range entries {
		o := opts
		o.Truncations = &truncAlone
		alone, err := translate("["+e+"]", o)
		if err != nil || alone.metrics.Len() == 0 {
			continue // an entry dropped alone is dropped in the container too
		}
		m := alone.metrics.At(0)
		key := seriesKey{m.Name(), m.Type(), m.Unit()}
		if seen[key] == 0 {
			resource.Fill(alone.resource)
		}
		got, ok := pointOf(together.metrics, key, seen[key])
		want, _ := pointOf(alone.metrics, key, 0)
		seen[key]++
		if !ok || got != want {
			return fmt.Errorf("entry %d:\n got %s\nwant %s", i, got, want)
		}
	}
	if together.resource != resource {
		return fmt.Errorf("resource %+v, alone %+v", together.resource, resource)
	}
	if truncTogether != truncAlone {
		return fmt.Errorf("truncations %+v, alone %+v", truncTogether, truncAlone)
	}
	return nil
}

type seriesKey struct {
	name string
	typ  pmetric.MetricType
	unit string
}

type translated struct {
	metrics  pmetric.MetricSlice
	resource sentryresource.Resource
}

func translate(items string, opts sentrysignal.Options) (translated, error) {
	m, err := Metrics([]byte(`{"items":`+items+`}`), opts)
	var de *sentrysignal.DecodeError
	if errors.As(err, &de) && m.Append == nil {
		return translated{}, err
	}
	dst := pmetric.NewMetricSlice()
	if m.Append != nil {
		m.Append(dst)
	}
	return translated{dst, m.Resource}, nil
}

// pointOf is point i of the metric of key, printed: its attributes, and
// its exemplars' filtered attributes (printed, as NaN is not equal to
// itself).
func pointOf(metrics pmetric.MetricSlice, key seriesKey, i int) (string, bool) {
	for _, m := range metrics.All() {
		if (seriesKey{m.Name(), m.Type(), m.Unit()}) != key {
			continue
		}
		var attrs pcommon.Map
		var exemplars pmetric.ExemplarSlice
		switch m.Type() {
		case pmetric.MetricTypeSum:
			if i >= m.Sum().DataPoints().Len() {
				return "", false
			}
			dp := m.Sum().DataPoints().At(i)
			attrs, exemplars = dp.Attributes(), dp.Exemplars()
		case pmetric.MetricTypeGauge:
			if i >= m.Gauge().DataPoints().Len() {
				return "", false
			}
			dp := m.Gauge().DataPoints().At(i)
			attrs, exemplars = dp.Attributes(), dp.Exemplars()
		default:
			if i >= m.ExponentialHistogram().DataPoints().Len() {
				return "", false
			}
			dp := m.ExponentialHistogram().DataPoints().At(i)
			attrs, exemplars = dp.Attributes(), dp.Exemplars()
		}
		var filtered []map[string]any
		for _, ex := range exemplars.All() {
			filtered = append(filtered, ex.FilteredAttributes().AsRaw())
		}
		return fmt.Sprint(attrs.AsRaw(), filtered), true
	}
	return "", false
}
