package sentryclientreport

import (
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name, payload string
		ts            uint64
		want          []Discard
	}{
		{"node 11", `{"timestamp":1795644010.5,"discarded_events":[{"reason":"sample_rate","category":"transaction","quantity":3},{"reason":"before_send","category":"error","quantity":1}]}`,
			1795644010500000000, []Discard{{OutcomeDiscarded, "sample_rate", "transaction", 3}, {OutcomeDiscarded, "before_send", "error", 1}}},
		{"python, RFC 3339 time", `{"timestamp":"2026-11-25T22:00:10.000000Z","discarded_events":[{"reason":"queue_overflow","category":"error","quantity":23}]}`,
			1795644010000000000, []Discard{{OutcomeDiscarded, "queue_overflow", "error", 23}}},
		{"relay lists", `{"rate_limited_events":[{"reason":"ratelimit","category":"log_item","quantity":7}],"filtered_events":[{"reason":"browser-extensions","category":"error","quantity":2}],"filtered_sampling_events":[{"reason":"Sampled:0","category":"transaction","quantity":5}]}`,
			0, []Discard{{OutcomeRateLimited, "ratelimit", "log_item", 7}, {OutcomeFiltered, "browser-extensions", "error", 2}, {OutcomeFilteredSampling, "Sampled:0", "transaction", 5}}},
		{"empty", `{"timestamp":1795644010,"discarded_events":[]}`, 1795644010000000000, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Decode([]byte(tt.payload), sentrysignal.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if uint64(r.Timestamp) != tt.ts || !reflect.DeepEqual(r.Discards, tt.want) {
				t.Errorf("report %d %+v\nwant %d %+v", r.Timestamp, r.Discards, tt.ts, tt.want)
			}
			var dst []Discard
			if n, err := AppendDiscards([]byte(tt.payload), sentrysignal.Options{}, &dst); n != len(tt.want) || err != nil || !reflect.DeepEqual(dst, tt.want) {
				t.Errorf("AppendDiscards = %d, %v, %+v", n, err, dst)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		payload, field string
		opts           sentrysignal.Options
	}{
		{`[]`, "", sentrysignal.Options{}},
		{`{"timestamp":"x"}`, "timestamp", sentrysignal.Options{}},
		{`{"discarded_events":{}}`, "discarded_events", sentrysignal.Options{}},
		{`{"discarded_events":[1]}`, "discarded_events", sentrysignal.Options{}},
		{`{"discarded_events":[{"category":"error","quantity":1}]}`, "discarded_events.reason", sentrysignal.Options{}},
		{`{"discarded_events":[{"reason":"r","quantity":1}]}`, "discarded_events.category", sentrysignal.Options{}},
		{`{"discarded_events":[{"reason":"r","category":"c","quantity":-1}]}`, "discarded_events.quantity", sentrysignal.Options{}},
		{`{"discarded_events":[{"reason":"r","category":"c","quantity":"1"}]}`, "discarded_events.quantity", sentrysignal.Options{}},
		{`{"discarded_events":[{"reason":"r","category":"c","quantity":1},{"reason":"r","category":"c","quantity":1}]}`, "discarded_events", sentrysignal.Options{MaxItems: 1}},
	}
	for _, tt := range tests {
		dst := []Discard{{Reason: "kept"}}
		n, err := AppendDiscards([]byte(tt.payload), tt.opts, &dst)
		var de *sentrysignal.DecodeError
		if n != 0 || len(dst) != 1 || !errors.As(err, &de) || de.Field != tt.field || de.Item != ItemType {
			t.Errorf("%s: %d, %v", tt.payload, n, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"timestamp":1795644010.5,"discarded_events":[{"reason":"sample_rate","category":"transaction","quantity":3}]}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		r, err := Decode(payload, sentrysignal.Options{MaxItems: 10})
		var de *sentrysignal.DecodeError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("untyped error %v", err)
		}
		if err == nil {
			for _, d := range r.Discards {
				if d.Quantity < 0 || d.Reason == "" || d.Category == "" || d.Outcome == "" {
					t.Fatalf("invalid count %+v", d)
				}
			}
		}
	})
}

// The report sentry-python 2.68.0 sent after dropping a transaction by
// its sample rate (captured).
func TestCapturedPython268(t *testing.T) {
	payload, err := os.ReadFile("testdata/python268_captured_client_report_1.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Decode(payload, sentrysignal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Discard{{OutcomeDiscarded, "sample_rate", "transaction", 1}, {OutcomeDiscarded, "sample_rate", "span", 1}}
	if !reflect.DeepEqual(r.Discards, want) || r.Timestamp == 0 {
		t.Errorf("report %d %+v", r.Timestamp, r.Discards)
	}
}
