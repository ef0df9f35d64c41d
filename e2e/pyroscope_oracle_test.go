package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pprofile"
)

// sentryServiceTime is the wall time Sentry shows for the profile items of
// some envelopes, per service, in nanoseconds: Sentry's rule (vroom's call
// trees and flame graphs), read from the items' JSON, not from the
// collector. On each thread a sample lasts until the next sample of that
// thread; the last sample of a thread has no next one in its item and is
// worth the period the collector measured for that item (period, keyed by
// the item's event_id or chunk_id), what the next item's first sample
// follows it by. The service is the package of the item's release, as the
// receiver names it.
func sentryServiceTime(bodies [][]byte, period map[string]int64) (map[string]float64, error) {
	out := map[string]float64{}
	for i, body := range bodies {
		items, err := parseEnvelope(body)
		if err != nil {
			return nil, fmt.Errorf("envelope %d: %w", i, err)
		}
		for _, it := range items {
			if it.Type != "profile" && it.Type != "profile_chunk" {
				continue
			}
			service, wall, err := itemWallTime(it.Payload, period)
			if err != nil {
				return nil, fmt.Errorf("envelope %d, %s item: %w", i, it.Type, err)
			}
			out[service] += wall
		}
	}
	return out, nil
}

// oracleItem is what the oracle reads of a sample-format profile item.
type oracleItem struct {
	Version string `json:"version"`
	Release string `json:"release"`
	EventID string `json:"event_id"`
	ChunkID string `json:"chunk_id"`
	Profile struct {
		Samples []struct {
			ThreadID  json.RawMessage `json:"thread_id"`
			Elapsed   json.RawMessage `json:"elapsed_since_start_ns"`
			Timestamp json.Number     `json:"timestamp"`
		} `json:"samples"`
	} `json:"profile"`
}

func itemWallTime(payload []byte, period map[string]int64) (string, float64, error) {
	var p oracleItem
	if err := json.Unmarshal(payload, &p); err != nil {
		return "", 0, err
	}
	id := cmp.Or(p.ChunkID, p.EventID)
	last, ok := period[id]
	if !ok {
		return "", 0, fmt.Errorf("item %s has no profile in the collector's output", id)
	}
	threads := map[string][]float64{}
	for _, s := range p.Profile.Samples {
		var at float64
		if p.Version == "2" {
			sec, err := s.Timestamp.Float64()
			if err != nil {
				return "", 0, fmt.Errorf("sample timestamp %q: %w", s.Timestamp, err)
			}
			at = sec * 1e9
		} else {
			ns, err := strconv.ParseUint(strings.Trim(string(s.Elapsed), `"`), 10, 64)
			if err != nil {
				return "", 0, fmt.Errorf("elapsed_since_start_ns %s: %w", s.Elapsed, err)
			}
			at = float64(ns)
		}
		tid := strings.Trim(string(s.ThreadID), `"`)
		threads[tid] = append(threads[tid], at)
	}
	var wall float64
	for _, ts := range threads {
		slices.Sort(ts)
		for i := range ts {
			if i+1 < len(ts) {
				wall += ts[i+1] - ts[i]
			} else {
				wall += float64(last)
			}
		}
	}
	service, _, _ := strings.Cut(p.Release, "@")
	return service, wall, nil
}

// outputPeriods maps each output profile's sentry.event_id or
// sentry.chunk_id to its period, and returns the profiles' start times.
func outputPeriods(pds []pprofile.Profiles) (map[string]int64, []time.Time) {
	out := map[string]int64{}
	var starts []time.Time
	for _, pd := range pds {
		dict := pd.Dictionary()
		for _, rp := range pd.ResourceProfiles().All() {
			for _, sp := range rp.ScopeProfiles().All() {
				for _, p := range sp.Profiles().All() {
					starts = append(starts, p.Time().AsTime())
					for _, ai := range p.AttributeIndices().All() {
						a := dict.AttributeTable().At(int(ai))
						switch dict.StringTable().At(int(a.KeyStrindex())) {
						case "sentry.chunk_id", "sentry.event_id":
							if v := a.Value().Str(); v != "" {
								out[v] = p.Period()
							}
						}
					}
				}
			}
		}
	}
	return out, starts
}
