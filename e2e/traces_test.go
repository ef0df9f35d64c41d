package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// sentSpan is one span an SDK sent, read from its envelope with
// encoding/json by rules written from the issue, not from the translator.
type sentSpan struct {
	TraceID, SpanID, ParentSpanID string
	Name                          string
	Status                        string  // Sentry's status, "" when absent
	Start, End                    float64 // Unix seconds
}

// outSpan is one span of the file exporter's traces output.
type outSpan struct {
	TraceID, SpanID, ParentSpanID string
	Name                          string
	Code                          ptrace.StatusCode
	Message                       string
	Start, End                    uint64 // Unix nanoseconds
}

// sentTime reads a Sentry timestamp: a number of seconds, or an RFC 3339
// string (sentry-go writes those).
func sentTime(raw json.RawMessage) (float64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, errors.New("no timestamp")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0, err
		}
		return float64(t.UnixNano()) / 1e9, nil
	}
	return strconv.ParseFloat(string(raw), 64)
}

// readSentSpans lists the spans of the envelope's transaction items (the
// segment in contexts.trace, its children in spans[]) and span v2 items.
func readSentSpans(body []byte) ([]sentSpan, error) {
	items, err := parseEnvelope(body)
	if err != nil {
		return nil, err
	}
	type v1Span struct {
		TraceID      string          `json:"trace_id"`
		SpanID       string          `json:"span_id"`
		ParentSpanID string          `json:"parent_span_id"`
		Description  string          `json:"description"`
		Op           string          `json:"op"`
		Status       string          `json:"status"`
		Start        json.RawMessage `json:"start_timestamp"`
		End          json.RawMessage `json:"timestamp"`
	}
	var out []sentSpan
	add := func(s sentSpan, start, end json.RawMessage) error {
		var err error
		if s.Start, err = sentTime(start); err != nil {
			return fmt.Errorf("span %s start: %w", s.SpanID, err)
		}
		if s.End, err = sentTime(end); err != nil {
			return fmt.Errorf("span %s end: %w", s.SpanID, err)
		}
		out = append(out, s)
		return nil
	}
	for i, it := range items {
		switch it.Type {
		case "transaction":
			var tx struct {
				Transaction string          `json:"transaction"`
				Start       json.RawMessage `json:"start_timestamp"`
				End         json.RawMessage `json:"timestamp"`
				Contexts    struct {
					Trace v1Span `json:"trace"`
				} `json:"contexts"`
				Spans []v1Span `json:"spans"`
			}
			if err := json.Unmarshal(it.Payload, &tx); err != nil {
				return nil, fmt.Errorf("item %d: transaction: %w", i, err)
			}
			seg := tx.Contexts.Trace
			if err := add(sentSpan{TraceID: seg.TraceID, SpanID: seg.SpanID, ParentSpanID: seg.ParentSpanID,
				Name: tx.Transaction, Status: seg.Status}, tx.Start, tx.End); err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			for _, s := range tx.Spans {
				name := s.Description
				if name == "" {
					name = s.Op
				}
				traceID := s.TraceID
				if traceID == "" {
					traceID = seg.TraceID
				}
				if err := add(sentSpan{TraceID: traceID, SpanID: s.SpanID, ParentSpanID: s.ParentSpanID,
					Name: name, Status: s.Status}, s.Start, s.End); err != nil {
					return nil, fmt.Errorf("item %d: %w", i, err)
				}
			}
		case "span":
			var container struct {
				Items []struct {
					TraceID      string          `json:"trace_id"`
					SpanID       string          `json:"span_id"`
					ParentSpanID string          `json:"parent_span_id"`
					Name         string          `json:"name"`
					Status       string          `json:"status"`
					Start        json.RawMessage `json:"start_timestamp"`
					End          json.RawMessage `json:"end_timestamp"`
					Attributes   map[string]struct {
						Value any `json:"value"`
					} `json:"attributes"`
				} `json:"items"`
			}
			if err := json.Unmarshal(it.Payload, &container); err != nil {
				return nil, fmt.Errorf("item %d: span container: %w", i, err)
			}
			for _, s := range container.Items {
				name := s.Name
				if op, ok := s.Attributes["sentry.op"].Value.(string); name == "" && ok {
					name = op
				}
				if err := add(sentSpan{TraceID: s.TraceID, SpanID: s.SpanID, ParentSpanID: s.ParentSpanID,
					Name: name, Status: s.Status}, s.Start, s.End); err != nil {
					return nil, fmt.Errorf("item %d: %w", i, err)
				}
			}
		}
	}
	return out, nil
}

// readTraceLines reads the file exporter's OTLP JSON traces, one request a
// line; a last line still being written is left for the next read.
func readTraceLines(path string) ([]outSpan, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(data, '\n')
	if i < 0 {
		return nil, nil
	}
	var out []outSpan
	sc := bufio.NewScanner(bytes.NewReader(data[:i+1]))
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	var um ptrace.JSONUnmarshaler
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		td, err := um.UnmarshalTraces(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					o := outSpan{
						TraceID: s.TraceID().String(), SpanID: s.SpanID().String(), Name: s.Name(),
						Code: s.Status().Code(), Message: s.Status().Message(),
						Start: uint64(s.StartTimestamp()), End: uint64(s.EndTimestamp()),
					}
					if !s.ParentSpanID().IsEmpty() {
						o.ParentSpanID = s.ParentSpanID().String()
					}
					out = append(out, o)
				}
			}
		}
	}
	return out, nil
}

// checkSDKTraces checks the traces side of one client's run: every span the
// SDK sent came out of the traces pipeline once, in the same tree, with its
// name, times and status.
func checkSDKTraces(t *testing.T, run *sdkRun) {
	t.Helper()
	if !assert.NotEmpty(t, run.SentSpans, "the SDK sent no span") {
		return
	}
	out := map[string][]outSpan{}
	for _, s := range run.OutSpans {
		out[s.SpanID] = append(out[s.SpanID], s)
	}
	assert.Len(t, run.OutSpans, len(run.SentSpans), "spans out of the traces pipeline vs spans the SDK sent")
	for _, sent := range run.SentSpans {
		got := out[sent.SpanID]
		if !assert.Len(t, got, 1, "span %s (%q) should come out exactly once", sent.SpanID, sent.Name) {
			continue
		}
		g := got[0]
		assert.Equal(t, sent.TraceID, g.TraceID, "trace id of span %s", sent.SpanID)
		assert.Equal(t, sent.ParentSpanID, g.ParentSpanID, "parent of span %s", sent.SpanID)
		assert.Equal(t, sent.Name, g.Name, "name of span %s", sent.SpanID)
		// A float64 of Unix seconds holds about 0.2 µs: 1 µs is "the same time".
		assert.InDelta(t, sent.Start*1e9, float64(g.Start), 1000, "start of span %s (%q)", sent.SpanID, sent.Name)
		assert.InDelta(t, sent.End*1e9, float64(g.End), 1000, "end of span %s (%q)", sent.SpanID, sent.Name)
		switch sent.Status {
		case "":
			assert.Equal(t, ptrace.StatusCodeUnset, g.Code, "status of span %s", sent.SpanID)
		case "ok":
			assert.Equal(t, ptrace.StatusCodeOk, g.Code, "status of span %s", sent.SpanID)
		default:
			assert.Equal(t, ptrace.StatusCodeError, g.Code, "status of span %s", sent.SpanID)
			assert.Equal(t, sent.Status, g.Message, "status message of span %s", sent.SpanID)
		}
	}
	// The tree: each parent the output names is a span of the output, or the
	// SDK named it too (a parent from an incoming trace header).
	sentParents := map[string]bool{}
	for _, s := range run.SentSpans {
		sentParents[s.ParentSpanID] = true
	}
	for _, g := range run.OutSpans {
		if g.ParentSpanID != "" && len(out[g.ParentSpanID]) == 0 {
			assert.True(t, sentParents[g.ParentSpanID], "span %s names parent %s, which nobody sent", g.SpanID, g.ParentSpanID)
		}
	}
	sentTree, outTree := map[string]string{}, map[string]string{}
	for _, s := range run.SentSpans {
		sentTree[s.SpanID] = s.ParentSpanID
	}
	for _, s := range run.OutSpans {
		outTree[s.SpanID] = s.ParentSpanID
	}
	assert.Equal(t, treeDepth(sentTree), treeDepth(outTree), "nesting depth of the span tree")
	assert.Zero(t, run.Metrics.DiscardedTraceItems, "trace items the collector could not read")
	assert.Zero(t, run.Metrics.RefusedSpans, "spans the traces pipeline refused or failed")
}

// treeDepth is the longest chain of spans nested in one another, from
// each span's parent id: the e2e programs open e2e-job → e2e-step →
// e2e-compute, so a client that sends its tree has a depth of 3 or more.
func treeDepth(parentOf map[string]string) int {
	depth := 0
	for id := range parentOf {
		d := 0
		for ; id != "" && d <= len(parentOf); id = parentOf[id] {
			if _, ok := parentOf[id]; !ok {
				break
			}
			d++
		}
		depth = max(depth, d)
	}
	return depth
}
