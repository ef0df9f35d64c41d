package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// The link oracle: from an SDK's own requests, which span each V2 chunk
// sample ran under — the innermost span of the chunk's profiler active on
// the sample's thread at its time (a span without a thread id runs on its
// segment's thread; a segment without one on every thread) — computed by
// brute force, sharing nothing with the receiver's span index.

// linkSpan is one span as the oracle reads it.
type linkSpan struct {
	traceID, spanID string
	segmentID       string
	profilerID      string // of the segment, for streamed children
	thread          string // "" when the span does not say
	start, end      int64  // Unix nanoseconds
}

// linkSample is one chunk sample: its profiler, thread and time.
type linkSample struct {
	profilerID, thread string
	ts                 int64
}

// nanos reads a JSON number of seconds exactly (no float rounding): the
// digits after the point are nanoseconds.
func nanos(raw json.RawMessage) (int64, error) {
	text := strings.TrimSpace(string(raw))
	if strings.ContainsAny(text, "eE") {
		f, err := strconv.ParseFloat(text, 64)
		return int64(math.Round(f * 1e9)), err
	}
	whole, frac, _ := strings.Cut(text, ".")
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q: %w", text, err)
	}
	frac = (frac + "000000000")[:9]
	ns, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q: %w", text, err)
	}
	return sec*1e9 + ns, nil
}

// threadText renders a thread id that may be a JSON number or string.
func threadText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// readLinkInput reads the chunk samples and spans of an SDK's requests.
func readLinkInput(run *sdkRun) ([]linkSample, []linkSpan, error) {
	var samples []linkSample
	var spans []linkSpan
	type attr struct {
		Value json.RawMessage `json:"value"`
	}
	for i, req := range run.Posts() {
		items, err := parseEnvelope(req.Body)
		if err != nil {
			return nil, nil, fmt.Errorf("request %d: %w", i, err)
		}
		for _, it := range items {
			switch it.Type {
			case "profile_chunk":
				var c struct {
					ProfilerID string `json:"profiler_id"`
					Profile    struct {
						Samples []struct {
							ThreadID  json.RawMessage `json:"thread_id"`
							Timestamp json.RawMessage `json:"timestamp"`
						} `json:"samples"`
					} `json:"profile"`
				}
				if err := json.Unmarshal(it.Payload, &c); err != nil {
					return nil, nil, fmt.Errorf("request %d: chunk: %w", i, err)
				}
				for _, s := range c.Profile.Samples {
					ts, err := nanos(s.Timestamp)
					if err != nil {
						return nil, nil, err
					}
					samples = append(samples, linkSample{profilerID: c.ProfilerID, thread: threadText(s.ThreadID), ts: ts})
				}
			case "transaction":
				type span struct {
					TraceID string                     `json:"trace_id"`
					SpanID  string                     `json:"span_id"`
					Start   json.RawMessage            `json:"start_timestamp"`
					End     json.RawMessage            `json:"timestamp"`
					Data    map[string]json.RawMessage `json:"data"`
				}
				var tx struct {
					Start    json.RawMessage `json:"start_timestamp"`
					End      json.RawMessage `json:"timestamp"`
					Contexts struct {
						Trace   span `json:"trace"`
						Profile struct {
							ProfilerID string `json:"profiler_id"`
						} `json:"profile"`
					} `json:"contexts"`
					Spans []span `json:"spans"`
				}
				if err := json.Unmarshal(it.Payload, &tx); err != nil {
					return nil, nil, fmt.Errorf("request %d: transaction: %w", i, err)
				}
				root := tx.Contexts.Trace
				root.Start, root.End = tx.Start, tx.End
				for k, s := range append([]span{root}, tx.Spans...) {
					ls := linkSpan{traceID: root.TraceID, spanID: s.SpanID, segmentID: root.SpanID,
						profilerID: tx.Contexts.Profile.ProfilerID}
					if k > 0 && s.TraceID != "" {
						ls.traceID = s.TraceID
					}
					if raw, ok := s.Data["thread.id"]; ok {
						ls.thread = threadText(raw)
					}
					var err error
					if ls.start, err = nanos(s.Start); err != nil {
						continue // sentry-go writes RFC 3339 times; it sends no chunks
					}
					if ls.end, err = nanos(s.End); err != nil {
						continue
					}
					spans = append(spans, ls)
				}
			case "span":
				var c struct {
					Items []struct {
						TraceID    string          `json:"trace_id"`
						SpanID     string          `json:"span_id"`
						IsSegment  bool            `json:"is_segment"`
						Start      json.RawMessage `json:"start_timestamp"`
						End        json.RawMessage `json:"end_timestamp"`
						Attributes map[string]attr `json:"attributes"`
					} `json:"items"`
				}
				if err := json.Unmarshal(it.Payload, &c); err != nil {
					return nil, nil, fmt.Errorf("request %d: span container: %w", i, err)
				}
				for _, s := range c.Items {
					ls := linkSpan{traceID: s.TraceID, spanID: s.SpanID}
					if a, ok := s.Attributes["sentry.segment.id"]; ok {
						ls.segmentID = threadText(a.Value)
					}
					if s.IsSegment {
						ls.segmentID = s.SpanID
					}
					if a, ok := s.Attributes["sentry.profiler_id"]; ok {
						ls.profilerID = threadText(a.Value)
					}
					if a, ok := s.Attributes["thread.id"]; ok {
						ls.thread = threadText(a.Value)
					}
					var err error
					if ls.start, err = nanos(s.Start); err != nil {
						return nil, nil, err
					}
					if ls.end, err = nanos(s.End); err != nil {
						return nil, nil, err
					}
					spans = append(spans, ls)
				}
			}
		}
	}
	// Children take their segment's profiler and thread.
	segments := map[string]linkSpan{}
	for _, s := range spans {
		if s.spanID == s.segmentID {
			segments[s.spanID] = s
		}
	}
	for i := range spans {
		seg, ok := segments[spans[i].segmentID]
		if !ok {
			continue
		}
		if spans[i].profilerID == "" {
			spans[i].profilerID = seg.profilerID
		}
		if spans[i].thread == "" {
			spans[i].thread = seg.thread
		}
	}
	return samples, spans, nil
}

// expectedLink is the innermost span of a sample, by brute force; edge
// reports a sample within a microsecond of a candidate span's start or
// end, where the SDK's decimal times and the receiver's parsing may round
// differently.
func expectedLink(s linkSample, spans []linkSpan) (best *linkSpan, edge bool) {
	for i := range spans {
		c := &spans[i]
		if c.profilerID != s.profilerID || (c.thread != "" && c.thread != s.thread) || c.end <= c.start {
			continue
		}
		if abs(s.ts-c.start) < 1000 || abs(s.ts-c.end) < 1000 {
			edge = true
		}
		if s.ts < c.start || s.ts >= c.end {
			continue
		}
		if best == nil || c.start > best.start || (c.start == best.start && c.end < best.end) {
			best = c
		}
	}
	return best, edge
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// outLinks maps (profiler, thread, time) of every output sample to the
// "trace/span" it links to ("" for none).
func outLinks(pds []pprofile.Profiles) map[linkSample]string {
	out := map[linkSample]string{}
	for _, pd := range pds {
		dict := pd.Dictionary()
		strs := dict.StringTable()
		attrs := dict.AttributeTable()
		for _, rp := range pd.ResourceProfiles().All() {
			profiler := ""
			if v, ok := rp.Resource().Attributes().Get("sentry.profiler_id"); ok {
				profiler = v.AsString()
			}
			for _, sp := range rp.ScopeProfiles().All() {
				for _, p := range sp.Profiles().All() {
					prof := profiler
					for _, ai := range p.AttributeIndices().All() {
						a := attrs.At(int(ai))
						if strs.At(int(a.KeyStrindex())) == "sentry.profiler_id" {
							prof = a.Value().AsString()
						}
					}
					for _, s := range p.Samples().All() {
						thread := ""
						for _, ai := range s.AttributeIndices().All() {
							a := attrs.At(int(ai))
							if strs.At(int(a.KeyStrindex())) == "thread.id" {
								thread = a.Value().AsString()
							}
						}
						link := ""
						if s.LinkIndex() > 0 {
							l := dict.LinkTable().At(int(s.LinkIndex()))
							link = l.TraceID().String() + "/" + l.SpanID().String()
						}
						for _, ts := range s.TimestampsUnixNano().All() {
							out[linkSample{profilerID: prof, thread: thread, ts: int64(ts)}] = link
						}
					}
				}
			}
		}
	}
	return out
}

// checkSDKLinks checks that every V2 sample that ran inside a span of its
// profiler on its thread carries that innermost span's link, and no other
// sample carries one. It records the share of linked samples for the
// table.
func checkSDKLinks(t *testing.T, run *sdkRun) {
	t.Helper()
	samples, spans, err := readLinkInput(run)
	if !assert.NoError(t, err, "%s: reading the SDK's requests", run.Client.Name) || len(samples) == 0 {
		return
	}
	out := outLinks(run.Output)
	var wrong []string
	for _, s := range samples {
		got, ok := out[s]
		if !ok {
			wrong = append(wrong, fmt.Sprintf("thread %s at %d: not in the output", s.thread, s.ts))
			continue
		}
		best, edge := expectedLink(s, spans)
		want := ""
		if best != nil {
			want = best.traceID + "/" + best.spanID
			run.LinkedSamples++
		}
		run.ChunkSamples++
		if got != want && !edge {
			wrong = append(wrong, fmt.Sprintf("thread %s at %d: link %q, want %q", s.thread, s.ts, got, want))
		}
	}
	t.Logf("%s: %d of %d chunk samples ran under a span (%d spans sent)", run.Client.Name, run.LinkedSamples, run.ChunkSamples, len(spans))
	// Every link resolves to a span of the traces pipeline's output.
	traced := map[string]bool{}
	for _, s := range run.OutSpans {
		traced[s.TraceID+"/"+s.SpanID] = true
	}
	for _, link := range out {
		if link != "" && !traced[link] {
			wrong = append(wrong, fmt.Sprintf("link %s: no such span in the traces output", link))
		}
	}
	if len(wrong) > 10 {
		wrong = append(wrong[:10], fmt.Sprintf("… and %d more", len(wrong)-10))
	}
	assert.Empty(t, wrong, "%s: sample links", run.Client.Name)
	if len(spans) > 0 {
		assert.Positive(t, run.LinkedSamples, "%s: the workload runs under spans; some samples must link", run.Client.Name)
	}
}
