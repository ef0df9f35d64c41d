package pyroscope

import (
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
)

// PerProfileKeys are attributes that identify one profile or one process
// run: a label made of one would create a series per profile.
var PerProfileKeys = []string{
	sentryattr.ProfilerID, sentryattr.ChunkID, sentryattr.EventID,
	sentryattr.TransactionID, sentryattr.TransactionName, sentryattr.TransactionTraceID,
}

// Check is what the compatibility tests assert of Pyroscope's reading of one
// translated fixture, whatever proto version decoded it: every series named
// after the profile's service, wall time in nanoseconds summing to the
// samples' wall time (Sentry's durations), thread labels on every sample, a span_id label on every linked
// sample, no label from a per-profile id.
// pd is the receiver's output; samples the Sentry samples it holds.
func Check(series []Series, pd pprofile.Profiles, samples int) error {
	if len(series) == 0 {
		return fmt.Errorf("no series")
	}
	want := profilesFactsOf(pd)
	var got seriesFacts
	for _, s := range series {
		if err := checkSeries(s, want.services); err != nil {
			return err
		}
		got.add(s)
	}
	return got.matches(want, samples, len(series))
}

// profilesFacts is what the receiver's output says Pyroscope should show.
type profilesFacts struct {
	services map[string]bool // the resources' service.name
	wall     int64           // the wall time the samples carry: Sentry's durations
	linked   int             // samples with a Link: Pyroscope labels them span_id
}

func profilesFactsOf(pd pprofile.Profiles) profilesFacts {
	facts := profilesFacts{services: map[string]bool{}}
	for _, rp := range pd.ResourceProfiles().All() {
		if v, ok := rp.Resource().Attributes().Get("service.name"); ok {
			facts.services[v.Str()] = true
		}
		for _, sp := range rp.ScopeProfiles().All() {
			for _, p := range sp.Profiles().All() {
				facts.addSamples(p.Samples(), pd.Dictionary().LinkTable())
			}
		}
	}
	return facts
}

func (f *profilesFacts) addSamples(samples pprofile.SampleSlice, links pprofile.LinkSlice) {
	for _, smp := range samples.All() {
		for _, v := range smp.Values().All() {
			f.wall += v
		}
		if smp.LinkIndex() > 0 && !links.At(int(smp.LinkIndex())).SpanID().IsEmpty() {
			f.linked++
		}
	}
}

// checkSeries is what every series must be: of a known service, wall time
// in nanoseconds, no label from a per-profile id, a thread on every sample.
func checkSeries(s Series, services map[string]bool) error {
	if !services[s.Service] {
		return fmt.Errorf("series of service %q; the profiles are of %v", s.Service, services)
	}
	if s.Name != "wall" || s.Unit != "nanoseconds" {
		return fmt.Errorf("series %s (%s), unit %s; want wall time in nanoseconds", s.Name, s.ProfileType, s.Unit)
	}
	if err := checkNoPerProfileLabel(s); err != nil {
		return err
	}
	if s.SampleLabels["thread.id"] != s.Samples {
		return fmt.Errorf("%d of %d samples have a thread.id label", s.SampleLabels["thread.id"], s.Samples)
	}
	return nil
}

func checkNoPerProfileLabel(s Series) error {
	for k := range s.Labels {
		if slices.Contains(PerProfileKeys, k) {
			return fmt.Errorf("series label %s comes from a per-profile id", k)
		}
	}
	for _, k := range PerProfileKeys {
		if s.SampleLabels[k] > 0 {
			return fmt.Errorf("sample label %s comes from a per-profile id", k)
		}
	}
	return nil
}

// seriesFacts adds up what Pyroscope shows over every series.
type seriesFacts struct {
	total      int64
	samples    int
	spanLabels int
}

func (f *seriesFacts) add(s Series) {
	f.total += s.Total
	f.samples += s.Samples
	f.spanLabels += s.SampleLabels["span_id"]
}

// matches compares the series' sums with the profiles': every linked sample
// labelled, every sample there, and (for one series) the wall time.
func (f seriesFacts) matches(want profilesFacts, samples, series int) error {
	if f.spanLabels != want.linked {
		return fmt.Errorf("%d samples labelled span_id, %d samples linked to a span", f.spanLabels, want.linked)
	}
	if f.samples != samples {
		return fmt.Errorf("%d pprof samples, the SDK sent %d", f.samples, samples)
	}
	if series == 1 && f.total != want.wall {
		return fmt.Errorf("total %d ns, want the samples' wall time, %d ns", f.total, want.wall)
	}
	return nil
}
