package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Signal is one real SDK signal item as @sentry/node 11 sends it, for
// comparing the receiver with the collector's otlp receiver.
type Signal struct {
	Name     string
	ItemType string // "event", "log" or "trace_metric"
	Envelope []byte // the envelope, not compressed
	// Gzip says the SDK compresses this body: @sentry/node does above
	// NodeGzipAbove bytes.
	Gzip bool
}

// NodeGzipAbove is @sentry/node's threshold for compressing a request.
const NodeGzipAbove = 32 << 10

// Signals returns the error event (chained, two stack traces) and a log
// and a trace_metric container of items entries (100 is the JavaScript
// SDKs' full batch), read from the translators' captured testdata under
// translatorDir (the repository's translator directory).
func Signals(translatorDir string, items int) ([]Signal, error) {
	event, err := os.ReadFile(filepath.Join(translatorDir, "sentryevent", "testdata", "node11_captured_event_2.json"))
	if err != nil {
		return nil, err
	}
	logs, err := containerOf(filepath.Join(translatorDir, "sentrylog", "testdata", "node11_captured_logs_1.json"), items)
	if err != nil {
		return nil, err
	}
	metrics, err := containerOf(filepath.Join(translatorDir, "sentrymetric", "testdata", "node11_captured_metrics_1.json"), items)
	if err != nil {
		return nil, err
	}
	out := []Signal{
		{Name: "ErrorEvent", ItemType: "event"},
		{Name: fmt.Sprintf("LogContainer%d", items), ItemType: "log"},
		{Name: fmt.Sprintf("TraceMetricContainer%d", items), ItemType: "trace_metric"},
	}
	for i, payload := range [][]byte{event, logs, metrics} {
		n := items
		if i == 0 {
			n = 0
		}
		if out[i].Envelope, err = nodeEnvelope(out[i].ItemType, payload, n); err != nil {
			return nil, err
		}
		out[i].Gzip = len(out[i].Envelope) > NodeGzipAbove
	}
	return out, nil
}

// containerOf repeats the items of a captured container to n items.
func containerOf(path string, n int) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(raw, &c); err != nil || len(c.Items) == 0 {
		return nil, fmt.Errorf("%s: not a container with items: %w", path, err)
	}
	items := make([]json.RawMessage, n)
	for i := range items {
		items[i] = c.Items[i%len(c.Items)]
	}
	return json.Marshal(map[string]any{"version": 2, "items": items})
}

// nodeEnvelope wraps one item as @sentry/node 11 sends it: compact JSON,
// no length header, a container's item_count and content_type.
func nodeEnvelope(itemType string, payload []byte, items int) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"event_id":"0f1e2d3c4b5a69788796a5b4c3d2e1f0","sent_at":"2026-11-25T22:00:05.000Z","sdk":{"name":"sentry.javascript.node","version":"11.1.0"}}` + "\n")
	header := map[string]any{"type": itemType}
	if items > 0 {
		header["item_count"] = items
		header["content_type"] = "application/vnd.sentry.items." + itemType + "+json"
	}
	h, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	b.Write(h)
	b.WriteByte('\n')
	if err := json.Compact(&b, payload); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}
