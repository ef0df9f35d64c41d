package sentryevent

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"
)

// Hostile events: a DSN key is public, so these come from anyone. Each
// case names what it cost before the limits (2 shared cores).

func manyKeys(n int) map[string]any {
	m := make(map[string]any, n)
	for i := 0; i < n; i++ {
		m[fmt.Sprintf("k%06d", i)] = i
	}
	return m
}

func appendDoc(t *testing.T, doc map[string]any, opts sentrysignal.Options) plog.LogRecord {
	t.Helper()
	payload, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return appendOne(t, payload, opts)
}

// TestHostileMessageFormatting: a template that repeats a large parameter
// formats into a bounded body marked truncated, with the template and the
// parameters kept as they came. Before: 4 000 × "{0}" and a 10 000-byte
// parameter made a 40 MB body (191 MB allocated); 40 000 × 100 000 (493
// bytes gzip'd) died with "fatal error: out of memory".
func TestHostileMessageFormatting(t *testing.T) {
	big := strings.Repeat("X", 10_000)
	tests := []struct {
		name     string
		logentry map[string]any
	}{
		{"braces", map[string]any{"message": strings.Repeat("{0}", 4000), "params": []any{big}}},
		{"printf names", map[string]any{"message": strings.Repeat("%(a)s", 3000), "params": map[string]any{"a": big}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, member := range []string{"logentry", "message"} {
				lr := appendDoc(t, map[string]any{member: tt.logentry}, sentrysignal.Options{})
				body := lr.Body().Str()
				if n := utf8.RuneCountInString(body); n != 8192 || !strings.HasPrefix(body, "XXXX") {
					t.Errorf("%s: body of %d characters (%.8q…), want 8192", member, n, body)
				}
				if v, ok := lr.Attributes().Get("sentry.message.truncated"); !ok || !v.Bool() {
					t.Errorf("%s: sentry.message.truncated absent or false, want true", member)
				}
				if v, _ := lr.Attributes().Get("sentry.message.template"); v.Str() != tt.logentry["message"] {
					t.Errorf("%s: template of %d bytes, want it whole", member, len(v.Str()))
				}
				params, _ := lr.Attributes().Get("sentry.message.parameters")
				if got := signaltest.ToAny(params); fmt.Sprint(got) != fmt.Sprint(tt.logentry["params"]) {
					t.Errorf("%s: parameters not kept as sent", member)
				}
			}
		})
	}
	// an SDK's own "formatted" text is its message: kept whole, not marked
	lr := appendDoc(t, map[string]any{"logentry": map[string]any{"formatted": big + big}}, sentrysignal.Options{})
	if _, marked := lr.Attributes().Get("sentry.message.truncated"); marked || len(lr.Body().Str()) != 20_000 {
		t.Errorf("SDK-formatted message: %d bytes, marked %v", len(lr.Body().Str()), marked)
	}
}

// TestHostileAttributeCounts: an event with 20 000 keys in one object
// keeps the first 1 000 (in key order) and counts the rest in the
// record's DroppedAttributesCount. Before: 9–34 s of CPU for extra or
// tags of 60 000 keys (0.9 MB; /store/ answered after 9.5 s), 90 s for
// 100 000; 20 000 keys ~3 s a case.
func TestHostileAttributeCounts(t *testing.T) {
	const n = 20_000
	pairs := make([]any, 0, n)
	headers := make([]any, 0, n)
	for i := 0; i < n; i++ {
		pairs = append(pairs, []any{fmt.Sprintf("t%06d", i), "v"})
		headers = append(headers, []any{fmt.Sprintf("H%06d", i), "v"})
	}
	tests := []struct {
		name        string
		doc         map[string]any
		opts        sentrysignal.Options
		inMap       string // the attribute holding the map, "" for the record's attributes
		wantKept    int
		wantDropped uint32
	}{
		{"extra", map[string]any{"extra": manyKeys(n)}, sentrysignal.Options{}, "sentry.extra", 1000, n - 1000},
		{"nested in contexts", map[string]any{"contexts": map[string]any{"custom": manyKeys(n)}}, sentrysignal.Options{}, "", 1, n - 1000},
		{"tags object", map[string]any{"tags": manyKeys(n)}, sentrysignal.Options{}, "", 1000, n - 1000},
		{"tags pairs", map[string]any{"tags": pairs}, sentrysignal.Options{}, "", 1000, n - 1000},
		{"request headers", map[string]any{"request": map[string]any{"headers": headers}}, sentrysignal.Options{IncludeUserData: true}, "", 1000, n - 1000},
		{"user data", map[string]any{"user": manyKeys(n)}, sentrysignal.Options{IncludeUserData: true}, "", 1000, n - 1000},
		{"frames", map[string]any{"exception": map[string]any{"values": []any{map[string]any{"type": "E",
			"stacktrace": map[string]any{"frames": []any{manyKeys(n)}}}}}}, sentrysignal.Options{}, "", 3, n - 1000},
		{"a lower limit", map[string]any{"extra": manyKeys(100)}, sentrysignal.Options{MaxMapEntries: 10}, "sentry.extra", 10, 90}, //new-api
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := appendDoc(t, tt.doc, tt.opts)
			m := lr.Attributes()
			if tt.inMap != "" {
				v, _ := m.Get(tt.inMap)
				m = v.Map()
			}
			if m.Len() != tt.wantKept || lr.DroppedAttributesCount() != tt.wantDropped {
				t.Errorf("%d kept, %d dropped; want %d, %d", m.Len(), lr.DroppedAttributesCount(), tt.wantKept, tt.wantDropped)
			}
		})
	}
}

// TestHostileKeptKeysAreTheFirst: the entries kept are the first in key
// order, so the same payload always keeps the same ones.
func TestHostileKeptKeysAreTheFirst(t *testing.T) {
	lr := appendDoc(t, map[string]any{"extra": manyKeys(1500)}, sentrysignal.Options{})
	v, _ := lr.Attributes().Get("sentry.extra")
	var last string
	v.Map().Range(func(k string, _ pcommon.Value) bool { last = k; return true })
	if _, ok := v.Map().Get("k000000"); !ok || last != "k000999" {
		t.Errorf("kept keys end at %q, want k000000 … k000999", last)
	}
}

// TestHostileTruncationsCounted: what the limits cut reaches the caller's
// Options.Truncations, for the receiver to count.
func TestHostileTruncationsCounted(t *testing.T) {
	cut := &sentrysignal.Truncations{}
	doc := map[string]any{
		"logentry": map[string]any{"message": strings.Repeat("{0}", 4000), "params": []any{strings.Repeat("X", 10)}},
		"extra":    manyKeys(1200),
		"tags":     manyKeys(1100),
	}
	lr := appendDoc(t, doc, sentrysignal.Options{Truncations: cut})
	// the record's attributes: the message's three and 997 tags; 103 tags
	// and sentry.extra (one attribute, its map with it) find it full
	if cut.Messages != 1 || cut.Attributes != 103+1 || int(lr.DroppedAttributesCount()) != cut.Attributes {
		t.Errorf("truncations %+v, record dropped %d; want 1 message and 104 attributes", *cut, lr.DroppedAttributesCount())
	}
}
