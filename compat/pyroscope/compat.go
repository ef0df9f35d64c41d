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
	want := map[string]bool{}
	var wall int64 // the wall time the samples carry: Sentry's durations
	linked := 0    // samples with a Link: Pyroscope labels them span_id
	dict := pd.Dictionary()
	for _, rp := range pd.ResourceProfiles().All() {
		if v, ok := rp.Resource().Attributes().Get("service.name"); ok {
			want[v.Str()] = true
		}
		for _, sp := range rp.ScopeProfiles().All() {
			for _, p := range sp.Profiles().All() {
				for _, smp := range p.Samples().All() {
					for _, v := range smp.Values().All() {
						wall += v
					}
					if smp.LinkIndex() > 0 && !dict.LinkTable().At(int(smp.LinkIndex())).SpanID().IsEmpty() {
						linked++
					}
				}
			}
		}
	}
	if len(series) == 0 {
		return fmt.Errorf("no series")
	}
	var total int64
	pprofSamples, spanLabels := 0, 0
	for _, s := range series {
		if !want[s.Service] {
			return fmt.Errorf("series of service %q; the profiles are of %v", s.Service, want)
		}
		if s.Name != "wall" || s.Unit != "nanoseconds" {
			return fmt.Errorf("series %s (%s), unit %s; want wall time in nanoseconds", s.Name, s.ProfileType, s.Unit)
		}
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
		if s.SampleLabels["thread.id"] != s.Samples {
			return fmt.Errorf("%d of %d samples have a thread.id label", s.SampleLabels["thread.id"], s.Samples)
		}
		total += s.Total
		pprofSamples += s.Samples
		spanLabels += s.SampleLabels["span_id"]
	}
	if spanLabels != linked {
		return fmt.Errorf("%d samples labelled span_id, %d samples linked to a span", spanLabels, linked)
	}
	if pprofSamples != samples {
		return fmt.Errorf("%d pprof samples, the SDK sent %d", pprofSamples, samples)
	}
	if len(series) == 1 && total != wall {
		return fmt.Errorf("total %d ns, want the samples' wall time, %d ns", total, wall)
	}
	return nil
}
