package spanindex

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// FuzzTimeline feeds spans read from the input (ids, threads, profilers and
// time ranges of any value, in any order) and checks every lookup against a
// brute-force search for the innermost span: the same span, or none when
// none covers the time.
func FuzzTimeline(f *testing.F) {
	f.Add([]byte{1, 1, 0, 0, 10, 100, 2, 1, 0, 0, 20, 30, 3, 1, 1, 1, 0, 255})
	f.Add([]byte{5, 5, 2, 0, 0, 0, 6, 5, 0, 1, 200, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		const rec = 6
		var spans []Span
		for i := 0; i+rec <= len(data) && len(spans) < 200; i += rec {
			r := data[i : i+rec]
			s := Span{
				TraceID:  pcommon.TraceID{1},
				SpanID:   pcommon.SpanID{r[0], byte(i >> 8), byte(i)},
				ThreadID: []string{"", "0", "1"}[int(r[2])%3],
				Start:    uint64(r[4]),
				End:      uint64(r[5]),
			}
			if r[1] != 0 {
				s.SegmentID = pcommon.SpanID{r[1]}
			}
			if r[3]%2 == 0 {
				s.ProfilerID = "p"
			}
			if r[3] == 255 {
				s.Start, s.End = 0, ^uint64(0)
			}
			spans = append(spans, s)
		}
		x := New(Limits{})
		x.Add(t0, spans)
		kept := keptSpans(x, "p")
		tl := x.Timeline(t0, "p", 0, ^uint64(0))
		for _, thread := range []string{"0", "1", "2"} {
			for ts := uint64(0); ts < 260; ts++ {
				want, ok := innermost(kept, thread, ts)
				_, got, found := tl.SpanAt(thread, ts)
				if found != ok || (ok && got != want) {
					t.Fatalf("thread %s at %d: got %v (%t), want %v (%t)", thread, ts, got, found, want, ok)
				}
			}
		}
	})
}

// keptSpans are the spans the index holds for a profiler, read directly.
func keptSpans(x *Index, profiler string) []Span {
	x.mu.Lock()
	defer x.mu.Unlock()
	p := x.profilers[profiler]
	if p == nil {
		return nil
	}
	out := make([]Span, len(p.entries))
	for i, e := range p.entries {
		out[i] = e.Span
	}
	return out
}

// innermost is the brute-force rule: of the spans on the thread (or on no
// thread) covering ts, the latest start, then the earliest end, then the
// one kept last.
func innermost(spans []Span, thread string, ts uint64) (pcommon.SpanID, bool) {
	best := -1
	for i, s := range spans {
		if (s.ThreadID != thread && s.ThreadID != "") || ts < s.Start || ts >= s.End {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := spans[best]
		if s.Start > b.Start || (s.Start == b.Start && s.End < b.End) || (s.Start == b.Start && s.End == b.End) {
			best = i
		}
	}
	if best < 0 {
		return pcommon.SpanID{}, false
	}
	return spans[best].SpanID, true
}
