package traceitems

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

// fixtureSpan is a span of a real SDK's transaction, read with encoding/json
// alone: the oracle the translation is compared with.
type fixtureSpan struct {
	SpanID       string          `json:"span_id"`
	ParentSpanID string          `json:"parent_span_id"`
	TraceID      string          `json:"trace_id"`
	Description  string          `json:"description"`
	Op           string          `json:"op"`
	Status       string          `json:"status"`
	Start        json.RawMessage `json:"start_timestamp"`
	End          json.RawMessage `json:"timestamp"`
}

// fixtureSeconds reads a timestamp as float seconds or an RFC 3339 string.
func fixtureSeconds(t *testing.T, raw json.RawMessage) int64 {
	t.Helper()
	var s string
	if json.Unmarshal(raw, &s) == nil {
		ts, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return ts.UnixNano()
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	require.NoError(t, err)
	return int64(f * 1e9)
}

// TestAppendTracesSharedFixtures translates the transactions of real SDK
// envelopes (sentry-java's test envelope, a sentry-python capture) and
// checks every span against the payload: ids, parent, name, times, status.
func TestAppendTracesSharedFixtures(t *testing.T) {
	paths := fixtures.Files(t, "envelope-transaction.txt", "_with_transaction_1.envelope")
	require.NotEmpty(t, paths, "the shared fixtures hold transaction envelopes")
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			r := envelope.NewReader(bytes.NewReader(raw), envelope.Limits{})
			_, err = r.Header()
			require.NoError(t, err)
			transactions := 0
			for {
				item, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				if item.Header.Type != "transaction" {
					continue
				}
				transactions++
				var tx struct {
					Transaction string          `json:"transaction"`
					Start       json.RawMessage `json:"start_timestamp"`
					End         json.RawMessage `json:"timestamp"`
					Contexts    struct {
						Trace fixtureSpan `json:"trace"`
					} `json:"contexts"`
					Spans []fixtureSpan `json:"spans"`
				}
				require.NoError(t, json.Unmarshal(item.Payload, &tx))
				seg, err := sentrytrace.DecodeTransaction(item.Payload)
				require.NoError(t, err)
				td := ptrace.NewTraces()
				require.Equal(t, 1+len(tx.Spans), AppendTraces(td, seg, TraceOptions{ProjectID: "1"}))

				got := map[string]ptrace.Span{}
				spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
				for _, s := range spans.All() {
					got[s.SpanID().String()] = s
				}
				root := tx.Contexts.Trace
				root.Description, root.Start, root.End = tx.Transaction, tx.Start, tx.End
				for i, want := range append([]fixtureSpan{root}, tx.Spans...) {
					s, ok := got[want.SpanID]
					if !assert.True(t, ok, "span %s", want.SpanID) {
						continue
					}
					name := want.Description
					if name == "" {
						name = want.Op
					}
					assert.Equal(t, name, s.Name(), "span %d name", i)
					traceID := want.TraceID
					if traceID == "" {
						traceID = root.TraceID
					}
					assert.Equal(t, traceID, s.TraceID().String(), "span %d trace", i)
					if want.ParentSpanID == "" {
						assert.True(t, s.ParentSpanID().IsEmpty(), "span %d is a root", i)
					} else {
						assert.Equal(t, want.ParentSpanID, s.ParentSpanID().String(), "span %d parent", i)
					}
					assert.InDelta(t, fixtureSeconds(t, want.Start), int64(s.StartTimestamp()), 1000, "span %d start", i)
					assert.InDelta(t, fixtureSeconds(t, want.End), int64(s.EndTimestamp()), 1000, "span %d end", i)
					switch want.Status {
					case "":
						assert.Equal(t, ptrace.StatusCodeUnset, s.Status().Code(), "span %d status", i)
					case "ok":
						assert.Equal(t, ptrace.StatusCodeOk, s.Status().Code(), "span %d status", i)
					default:
						assert.Equal(t, ptrace.StatusCodeError, s.Status().Code(), "span %d status", i)
					}
				}
			}
			assert.Positive(t, transactions, "the envelope holds a transaction")
		})
	}
}
