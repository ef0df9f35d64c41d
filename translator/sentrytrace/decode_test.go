package sentrytrace

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/sentrytime"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// TestTransactionTimestamps: a transaction's start_timestamp is read by
// the one Sentry time (translator/internal/sentrytime), and a value past
// int64 nanoseconds refuses the transaction instead of wrapping around.
func TestTransactionTimestamps(t *testing.T) {
	tests := []struct {
		text    string
		want    int64
		wantErr error
	}{
		{text: `1795000000`, want: 1795000000_000000000},
		{text: `1795000000.000001`, want: 1795000000_000001000},
		// float64 would give ...123456716; the decimal text is exact.
		{text: `1795000000.123456789`, want: 1795000000_123456789},
		{text: `1795000000.1234567895`, want: 1795000000_123456789}, // truncated, as profiles are
		{text: `1.7950000001e9`, want: 1795000000_100000000},
		{text: `"2026-11-24T12:00:00.123456Z"`, want: time.Date(2026, 11, 24, 12, 0, 0, 123456000, time.UTC).UnixNano()},
		{text: `"2026-11-24T13:00:00+01:00"`, want: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC).UnixNano()},
		{text: `null`, wantErr: sentrytime.ErrMissing},
		{text: `"yesterday"`, wantErr: sentrytime.ErrSyntax},
		{text: `true`, wantErr: sentrytime.ErrSyntax},
		// Year 2286: main read it as -8446744073209551616.
		{text: `10000000000.5`, wantErr: sentrytime.ErrOutOfRange},
		{text: `1e999999999`, wantErr: sentrytime.ErrOutOfRange},
		{text: `99999999999999`, wantErr: sentrytime.ErrOutOfRange},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			seg, err := DecodeTransaction([]byte(`{"contexts":{"trace":{"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"a1b2c3d4e5f60718"}},` +
				`"start_timestamp":` + tt.text + `,"timestamp":1795000001}`))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.ErrorContains(t, err, "contexts.trace.start_timestamp")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, seg.Spans[0].Start)
		})
	}
}

func TestDecodeTransactionShapes(t *testing.T) {
	const trace = `"contexts":{"trace":{"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"a1b2c3d4e5f60718"}},"start_timestamp":1,"timestamp":2`
	tests := []struct {
		name    string
		json    string
		wantErr string
		check   func(t *testing.T, s *Segment)
	}{
		{name: "minimal", json: `{` + trace + `}`, check: func(t *testing.T, s *Segment) {
			require.Len(t, s.Spans, 1)
			assert.True(t, s.Spans[0].IsSegment)
			assert.Equal(t, int64(1e9), s.Spans[0].Start)
		}},
		{name: "tags as pairs", json: `{` + trace + `,"tags":[["a","b"],["n",1]]}`, check: func(t *testing.T, s *Segment) {
			assert.Equal(t, []Attribute{{"a", "b"}, {"n", "1"}}, s.Spans[0].Attributes)
		}},
		{name: "data wins over tags", json: `{` + trace[:len(`"contexts":{"trace":{`)] + `"data":{"k":1},` + trace[len(`"contexts":{"trace":{`):] + `,"tags":{"k":"tag","z":"z"}}`, check: func(t *testing.T, s *Segment) {
			assert.Equal(t, []Attribute{{"k", int64(1)}, {"z", "z"}}, s.Spans[0].Attributes)
		}},
		{name: "big integer becomes a double", json: `{` + trace[:len(`"contexts":{"trace":{`)] + `"data":{"n":18446744073709551616},` + trace[len(`"contexts":{"trace":{`):] + `}`, check: func(t *testing.T, s *Segment) {
			assert.Equal(t, []Attribute{{"n", 18446744073709551616.0}}, s.Spans[0].Attributes)
		}},
		{name: "span inherits trace_id and profiler_id", json: `{` + trace + `,"contexts":{"trace":{"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"a1b2c3d4e5f60718"},"profile":{"profiler_id":"p"}},` +
			`"spans":[{"span_id":"b1b2c3d4e5f60718","op":"db","start_timestamp":1,"timestamp":2}]}`, check: func(t *testing.T, s *Segment) {
			require.Len(t, s.Spans, 2)
			assert.Equal(t, "0af7651916cd43dd8448eb211c80319c", s.Spans[1].TraceID)
			assert.Equal(t, "p", s.Spans[1].ProfilerID)
			assert.Equal(t, "db", s.Spans[1].Name)
		}},
		{name: "no trace context", json: `{"start_timestamp":1,"timestamp":2}`, wantErr: "contexts.trace needs trace_id and span_id"},
		{name: "span without span_id", json: `{` + trace + `,"spans":[{"start_timestamp":1,"timestamp":2}]}`, wantErr: "spans[0]: trace_id and span_id are required"},
		{name: "span without end", json: `{` + trace + `,"spans":[{"span_id":"b","start_timestamp":1}]}`, wantErr: "spans[0].timestamp: missing"},
		{name: "not JSON", json: `{"contexts":`, wantErr: "transaction:"},
		{name: "trailing data", json: `{` + trace + `} {}`, wantErr: "trailing data"},
		{name: "wrong type", json: `{` + trace + `,"release":5}`, wantErr: "release"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := DecodeTransaction([]byte(tt.json))
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, s)
		})
	}
}

func TestDecodeSpansShapes(t *testing.T) {
	span := func(extra string) string {
		return `{"trace_id":"1af7651916cd43dd8448eb211c80319c","span_id":"e1b2c3d4e5f60718","start_timestamp":1,"end_timestamp":2` + extra + `}`
	}
	tests := []struct {
		name    string
		json    string
		wantErr string
		check   func(t *testing.T, s *Segment)
	}{
		{name: "empty container", json: `{"version":2,"items":[]}`, check: func(t *testing.T, s *Segment) { assert.Empty(t, s.Spans) }},
		{name: "metadata from the first span that has it", json: `{"items":[` + span(`,"attributes":{"sentry.op":{"type":"string","value":"db"}}`) + `,` +
			span(`,"attributes":{"sentry.release":{"type":"string","value":"r@1"}}`) + `,` + span(`,"attributes":{"sentry.release":{"type":"string","value":"r@2"}}`) + `]}`,
			check: func(t *testing.T, s *Segment) {
				assert.Equal(t, "r@1", s.Release)
				assert.Equal(t, "db", s.Spans[0].Name, "no name: the op")
			}},
		{name: "array attribute", json: `{"items":[` + span(`,"attributes":{"a":{"type":"array","value":[1,2.5,"x",[3]]}}`) + `]}`, check: func(t *testing.T, s *Segment) {
			assert.Equal(t, []Attribute{{"a", []any{int64(1), 2.5, "x", "[3]"}}}, s.Spans[0].Attributes)
		}},
		{name: "attribute not typed", json: `{"items":[` + span(`,"attributes":{"a":5}`) + `]}`, wantErr: "items[0].attributes: a"},
		{name: "no span_id", json: `{"items":[{"trace_id":"x","start_timestamp":1,"end_timestamp":2}]}`, wantErr: "items[0]: trace_id and span_id are required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := DecodeSpans([]byte(tt.json))
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, s)
		})
	}
}

// FuzzDecode feeds any bytes to both decoders: an error or a segment whose
// spans all have ids, never a panic.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"contexts":{"trace":{"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"a1b2c3d4e5f60718"}},"start_timestamp":1,"timestamp":2,"spans":[{"span_id":"b","start_timestamp":1.5,"timestamp":"2026-11-24T12:00:00Z","data":{"a":[1,{"b":2}]}}]}`,
		`{"version":2,"items":[{"trace_id":"t","span_id":"s","start_timestamp":1,"end_timestamp":2,"attributes":{"k":{"type":"integer","value":9007199254740993}}}]}`,
		`{"tags":[["a",1]],"user":{"id":1},"request":{"headers":[["Cookie","x"]]}}`,
		strings.Repeat(`[`, 100),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, decode := range []func([]byte) (*Segment, error){DecodeTransaction, DecodeSpans} {
			s, err := decode(data)
			if err != nil {
				continue
			}
			for _, sp := range s.Spans {
				if sp.TraceID == "" || sp.SpanID == "" {
					t.Fatalf("span without ids decoded from %q", data)
				}
			}
		}
	})
}

// TestDecodeTransactionProfilerID covers every place an SDK names the
// profiler of a transaction and of its spans.
func TestDecodeTransactionProfilerID(t *testing.T) {
	const head = `{"start_timestamp":1,"timestamp":2,"contexts":{"trace":{"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"a1b2c3d4e5f60718"`
	const child = `{"span_id":"b1b2c3d4e5f60718","op":"db","start_timestamp":1,"timestamp":2`
	tests := []struct {
		name                string
		json                string
		wantRoot, wantChild string
	}{
		{name: "contexts.profile.profiler_id (java, cocoa, node, python >= 2.7)",
			json:     head + `},"profile":{"profiler_id":"p"}},"spans":[` + child + `}]}`,
			wantRoot: "p", wantChild: "p"},
		{name: `contexts.profile."profiler.id" (python 2.6.0)`,
			json:     head + `},"profile":{"profiler.id":"p"}},"spans":[` + child + `}]}`,
			wantRoot: "p", wantChild: "p"},
		{name: "contexts.trace.data.profiler_id (python 3)",
			json:     head + `,"data":{"profiler_id":"p"}}},"spans":[` + child + `}]}`,
			wantRoot: "p", wantChild: "p"},
		{name: "span data.profiler_id under a root that names none (python 3, profiler started later)",
			json:     head + `}},"spans":[` + child + `,"data":{"profiler_id":"q"}}]}`,
			wantRoot: "", wantChild: "q"},
		{name: "span data names another profiler than the transaction",
			json:     head + `},"profile":{"profiler_id":"p"}},"spans":[` + child + `,"data":{"profiler_id":"q"}}]}`,
			wantRoot: "p", wantChild: "q"},
		{name: "span data.profiler.id",
			json:     head + `}},"spans":[` + child + `,"data":{"profiler.id":"q"}}]}`,
			wantRoot: "", wantChild: "q"},
		{name: "contexts.profile wins over contexts.trace.data",
			json:     head + `,"data":{"profiler_id":"t"}},"profile":{"profiler_id":"p"}},"spans":[` + child + `}]}`,
			wantRoot: "p", wantChild: "p"},
		{name: "a non-string data.profiler_id is not a profiler",
			json:     head + `}},"spans":[` + child + `,"data":{"profiler_id":7}}]}`,
			wantRoot: "", wantChild: ""},
		{name: "none", json: head + `}},"spans":[` + child + `}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seg, err := DecodeTransaction([]byte(tt.json))
			require.NoError(t, err)
			require.Len(t, seg.Spans, 2)
			assert.Equal(t, tt.wantRoot, seg.Spans[0].ProfilerID, "root")
			assert.Equal(t, tt.wantChild, seg.Spans[1].ProfilerID, "child")
		})
	}
}

// TestProfileAndTransactionTimedAlike: the same timestamp text gives a
// profile chunk's sample and a transaction the same instant, or refuses
// both, so links that compare them do not depend on which decoder read it.
func TestProfileAndTransactionTimedAlike(t *testing.T) {
	for _, text := range []string{`1795000000.123456`, `1795000000.1234567895`, `1.7950000001234567895e9`, `"1795000000.5"`, `10000000000.5`, `-1.5`} {
		t.Run(text, func(t *testing.T) {
			p, perr := sentry.DecodeProfile([]byte(`{"version":"2","profile":{"samples":[{"timestamp":` + text + `}]}}`))
			seg, terr := DecodeTransaction([]byte(`{"contexts":{"trace":{"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"a1b2c3d4e5f60718"}},` +
				`"start_timestamp":` + text + `,"timestamp":1795000001}`))
			require.Equal(t, perr == nil, terr == nil, "profile: %v; transaction: %v", perr, terr)
			if perr == nil {
				assert.Equal(t, p.Samples[0].Timestamp, seg.Spans[0].Start)
			}
		})
	}
}
