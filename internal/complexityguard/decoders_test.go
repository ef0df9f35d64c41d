package complexityguard

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/spanindex"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/android"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/art"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/art/arttest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/perfetto"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/perfetto/perfettotest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/stacktrace"
)

// directRow measures a function of the input on the calling goroutine
// (ThreadClock): build makes the input of size n, decode runs on it and
// returns its output size and work count.
func directRow(build func(n int) []byte, decode func(tb testing.TB, in []byte) (output, work int64)) func(testing.TB, int) sized {
	return func(tb testing.TB, n int) sized {
		in := build(n)
		var out, work int64
		return sized{
			run:     func() { out, work = decode(tb, in) },
			observe: func() outcome { return outcome{input: int64(len(in)), output: out, work: work} },
		}
	}
}

// artTrace is an ART method trace of n methods, each called once from a
// method that runs throughout, on one thread.
func artTrace(n int) []byte {
	methods := map[uint32]art.Method{4: {Class: "android.os.Looper", Name: "loop", Signature: "()V", Source: "Looper.java"}}
	events := []art.Event{{Thread: 1, Method: 4, Action: art.Enter, Wall: 1, CPU: 1}}
	for i := range n {
		id := uint32(8 + 4*i)
		methods[id] = art.Method{Class: "com.example.App", Name: "m" + strings.Repeat("x", i%7) + string(rune('a'+i%26)), Signature: "()V", Source: "App.java"}
		at := uint32(10 + 10*i)
		events = append(events, art.Event{Thread: 1, Method: id, Action: art.Enter, Wall: at, CPU: at},
			art.Event{Thread: 1, Method: id, Action: art.Exit, Wall: at + 5, CPU: at + 5})
	}
	end := uint32(20 + 10*n)
	events = append(events, art.Event{Thread: 1, Method: 4, Action: art.Exit, Wall: end, CPU: end})
	return arttest.Write(3, art.ClockDual, []art.Thread{{ID: 1, Name: "main"}}, methods, events, uint64(end))
}

// profileSize is the output of a decoded profile: its chunk JSON.
func profileSize(tb testing.TB, p *sentry.Profile, err error) (int64, int64) {
	if err != nil {
		tb.Errorf("decode: %v", err)
		return 0, 0
	}
	return int64(len(sentry.AppendChunkJSON(nil, p))), int64(len(p.Samples))
}

// javaTrace is a Java stack trace of n frames ending in a chain of causes,
// each "... N more" pointing back into the trace before it: the parser
// keeps a record per exception of the chain to fill them.
func javaTrace(n int) []byte {
	var b strings.Builder
	b.WriteString("java.lang.IllegalStateException: boom\n")
	for i := range n {
		fmt.Fprintf(&b, "\tat com.example.shop.Service%d.handle(Service%d.java:%d)\n", i%97, i%97, i+1)
		if i%50 == 49 {
			fmt.Fprintf(&b, "Caused by: java.io.IOException: cause %d\n\tat com.example.io.Reader.read(Reader.java:%d)\n\t... %d more\n", i, i, i/2)
		}
	}
	return []byte(b.String())
}

func decoderRows() []row {
	end := time.Unix(1_795_000_000, 0)
	return []row{
		{
			// The exporter parses the exception.stacktrace text of any OTLP
			// log record or span event it is sent.
			name: "stacktrace_text_frames", dimension: "frame lines and causes of a stack-trace text", n: 2000, clock: ThreadClock,
			fuzz: []string{"translator/stacktrace.FuzzParse"},
			build: directRow(javaTrace, func(_ testing.TB, in []byte) (int64, int64) {
				chain, _, _ := stacktrace.Parse(string(in))
				var frames int64
				for _, e := range chain {
					frames += int64(len(e.Frames))
				}
				return frames * 64, int64(len(chain))
			}),
		},
		{
			name: "art_trace_methods", itemType: "profile", dimension: "methods and calls of an Android method trace", n: 2000, clock: ThreadClock,
			fuzz: []string{"translator/android.FuzzDecodeARTTrace", "translator/art.FuzzDecode"},
			build: directRow(artTrace, func(tb testing.TB, in []byte) (int64, int64) {
				p, _, err := android.DecodeARTTrace(in, end, art.DefaultLimits())
				return profileSize(tb, p, err)
			}),
		},
		{
			name: "perfetto_packets", itemType: "profile_chunk", dimension: "packet sequences of a Perfetto trace", n: 200, clock: ThreadClock,
			fuzz: []string{"translator/perfetto.FuzzDecode"},
			build: directRow(func(n int) []byte { return bytes.Repeat(perfettotest.Trace(), n) }, func(tb testing.TB, in []byte) (int64, int64) {
				tr, err := perfetto.Decode(in, perfetto.DefaultLimits())
				if err != nil {
					tb.Errorf("perfetto: %v", err)
					return 0, 0
				}
				var frames int64
				for _, s := range tr.Samples {
					frames += int64(len(s.Frames))
				}
				return frames * 16, int64(len(tr.Samples))
			}),
		},
		{
			// The exporter reads X-Sentry-Rate-Limits from every answer
			// of the Sentry it sends to; a hostile or broken upstream
			// chooses its length (up to net/http's 1 MiB of headers).
			name: "rate_limit_header_entries", dimension: "entries of X-Sentry-Rate-Limits", n: 500, maxN: 16_000, clock: ThreadClock,
			fuzz: []string{"internal/sentryhttp.FuzzRateLimits", "internal/sentryhttp.FuzzParseRateLimits"},
			build: directRow(func(n int) []byte {
				return []byte(repeat(n, ", ", "60:category_%d;other_%d:organization:quota_exceeded"))
			}, func(_ testing.TB, in []byte) (int64, int64) {
				header := http.Header{}
				header.Set("X-Sentry-Rate-Limits", string(in))
				var limits sentryhttp.RateLimits
				limits.Update(http.StatusTooManyRequests, header, end)
				return int64(limits.RetryAfter("category_1", end) / time.Second), 0
			}),
		},
		{
			// Every X-Sentry-Rate-Limits line is read (the exporter's
			// limits, the spool's wait): an upstream chooses how many.
			name: "rate_limit_header_lines", dimension: "X-Sentry-Rate-Limits lines", n: 500, maxN: 16_000, clock: ThreadClock,
			build: directRow(func(n int) []byte {
				return []byte(repeat(n, "\n", "60:category_%d;other_%d:organization:quota_exceeded"))
			}, func(_ testing.TB, in []byte) (int64, int64) {
				header := http.Header{sentryhttp.HeaderRateLimits: strings.Split(string(in), "\n")}
				var limits sentryhttp.RateLimits
				limits.Update(http.StatusTooManyRequests, header, end)
				wait, _ := sentryhttp.LongestWait(header, end)
				return int64(wait / time.Second), 0
			}),
		},
		{
			// A chunk's samples are searched in the spans of its profiler
			// for the span each ran under: n nested spans and n samples.
			name: "span_index_timeline", dimension: "spans of one profiler and samples looked up", n: 4000, maxN: 32_000, clock: ThreadClock,
			fuzz: []string{"internal/spanindex.FuzzTimeline"},
			build: func(tb testing.TB, n int) sized {
				spans := make([]spanindex.Span, n)
				for i := range spans {
					spans[i] = spanindex.Span{
						TraceID: pcommon.TraceID{1}, SpanID: pcommon.SpanID{byte(i), byte(i >> 8), byte(i >> 16), 1},
						SegmentID: pcommon.SpanID{9}, ProfilerID: "p", ThreadID: "1",
						Start: uint64(i) * 1000, End: uint64(i)*1000 + 999,
					}
				}
				var found int64
				return sized{
					run: func() {
						x := spanindex.New(spanindex.Limits{})
						x.Add(end, spans)
						tl := x.Timeline(end, "p", 0, ^uint64(0))
						found = 0
						for i := range n {
							if _, _, ok := tl.SpanAt("1", uint64(i)*1000+500); ok {
								found++
							}
						}
					},
					observe: func() outcome {
						if found == 0 {
							tb.Errorf("no sample found its span, so the row measured no lookup")
						}
						return outcome{input: int64(n) * 64, output: found * 24, work: found}
					},
				}
			},
		},
	}
}
