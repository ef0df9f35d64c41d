package sentrysignal

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

func TestTimestamp(t *testing.T) {
	tests := []struct {
		raw  string
		want uint64
		ok   bool
	}{
		{`1764108001.234`, 1764108001234000000, true},
		{`1764108001.123456789`, 1764108001123456789, true},
		{`1764108001.1234567895`, 1764108001123456789, true}, // truncated to the ns, as everywhere (sentrytime)
		{`1764108001`, 1764108001000000000, true},
		{`1.5e9`, 1500000000000000000, true},
		{`"2026-11-25T22:00:04.123456Z"`, 1795644004123456000, true},
		{`"2026-11-25T23:00:04.5+01:00"`, 1795644004500000000, true},
		{`"1764108001.5"`, 1764108001500000000, true},
		{`null`, 0, false},
		{`-1`, 0, false},
		{`"1969-12-31T23:59:59Z"`, 0, false},
		{`1e300`, 0, false},
		{`10e9`, 0, false}, // year 2286: its nanoseconds overflow an int64
		{`"2300-01-01T00:00:00Z"`, 0, false},
		{`"soon"`, 0, false},
		{`true`, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := Timestamp(json.RawMessage(tt.raw))
			if (err == nil) != tt.ok || uint64(got) != tt.want {
				t.Fatalf("Timestamp(%s) = %d, %v; want %d ok=%v", tt.raw, got, err, tt.want, tt.ok)
			}
			if tt.ok {
				x, _ := DecodeAny([]byte(tt.raw))
				if again, err := TimestampOf(x); err != nil || again != got {
					t.Errorf("TimestampOf = %d, %v", again, err)
				}
			}
		})
	}
}

func TestIDs(t *testing.T) {
	if id, err := TraceID("2c9f4e8a-1b7d-4f60-a3e5-c7b9d1f20486"); err != nil || id.String() != "2c9f4e8a1b7d4f60a3e5c7b9d1f20486" {
		t.Errorf("dashed trace id: %s %v", id, err)
	}
	for _, bad := range []string{"", "2c9f", "zz9f4e8a1b7d4f60a3e5c7b9d1f20486"} {
		if _, err := TraceID(bad); err == nil {
			t.Errorf("TraceID(%q) accepted", bad)
		}
	}
	if _, err := SpanID("8a1b2c3d4e5f607"); err == nil {
		t.Error("15-digit span id accepted")
	}
	if id, ok := EventID("5B0C3F1A2E7D4C8F9A6B1D2E3F405162"); !ok || id != "5b0c3f1a2e7d4c8f9a6b1d2e3f405162" {
		t.Errorf("EventID = %q %v", id, ok)
	}
}

func TestSeverity(t *testing.T) {
	for level, want := range map[string]plog.SeverityNumber{
		"trace": 1, "debug": 5, "info": 9, "log": 9, "warning": 13, "warn": 13, "error": 17,
		"fatal": 21, "critical": 21, "ERROR": 17, "notice": 0,
	} {
		if got := Severity(level); got != want {
			t.Errorf("Severity(%q) = %v, want %v", level, got, want)
		}
	}
}

func TestContainer(t *testing.T) {
	var c collectedEntries
	err := ScanContainer("log", []byte(`{"items":[{"a":1},2]}`), Options{}, &c)
	if err != nil || len(c.items) != 2 {
		t.Fatalf("ScanContainer = %d, %v", len(c.items), err)
	}
	tests := []struct {
		payload string
		opts    Options
		reason  string
	}{
		{`[1]`, Options{}, "not an items container"},
		{`{"items":[1,2,3]}`, Options{MaxItems: 2}, "exceed the limit"},
		{`{"items":[]}`, Options{MaxPayloadBytes: 5}, "exceeds the limit"},
	}
	for _, tt := range tests {
		err := ScanContainer("log", []byte(tt.payload), tt.opts, &collectedEntries{})
		var de *DecodeError
		if !errors.As(err, &de) || !strings.Contains(de.Error(), tt.reason) || de.Item != "log" {
			t.Errorf("ScanContainer(%s) error = %v, want %q", tt.payload, err, tt.reason)
		}
	}
}

func TestPartialError(t *testing.T) {
	var pe PartialError
	pe.Item = "log"
	if pe.Err() != nil {
		t.Fatal("no dropped entry, but an error")
	}
	for i := range 20 {
		pe.Add(EntryError("log", i, "timestamp", "missing", ErrMissing))
	}
	err := pe.Err()
	var de *DecodeError
	if pe.Dropped != 20 || len(pe.Errors) != maxKeptEntryErrors || !errors.As(err, &de) || de.Index != 0 {
		t.Errorf("dropped %d kept %d first %v", pe.Dropped, len(pe.Errors), de)
	}
	if !errors.Is(err, ErrMissing) {
		t.Error("the cause is not reachable")
	}
	if !strings.Contains(err.Error(), `log entry 0 field "timestamp": missing`) {
		t.Errorf("message %q", err)
	}
}

func TestBucketIndex(t *testing.T) {
	for _, v := range []float64{1, 2, 1024, 0.5, 3, 187.5, 1e-300, 1e300, math.SmallestNonzeroFloat64, math.MaxFloat64} {
		i := BucketIndex(v)
		lo := math.Exp2(math.Ldexp(float64(i), -HistogramScale))
		hi := math.Exp2(math.Ldexp(float64(i+1), -HistogramScale))
		if !(lo <= v*(1+1e-12) && v <= hi*(1+1e-12)) {
			t.Errorf("BucketIndex(%g) = %d: (%g, %g]", v, i, lo, hi)
		}
	}
	if BucketIndex(2) != 1<<HistogramScale-1 || BucketIndex(1) != -1 {
		t.Errorf("powers of two: %d %d", BucketIndex(2), BucketIndex(1))
	}
}

func TestPersonalAttributes(t *testing.T) {
	raw := json.RawMessage(`{"user.id":{"type":"string","value":"u-17"},"user.email":{"type":"string","value":"a@b"},
		"client.address":{"type":"string","value":"203.0.113.7"},"users.count":{"type":"integer","value":2}}`)
	without := pcommon.NewMap()
	if err := NewLimiter(Options{}).PutTypedAttributes(without, raw); err != nil {
		t.Fatal(err)
	}
	if got := without.AsRaw(); !reflect.DeepEqual(got, map[string]any{"users.count": int64(2)}) {
		t.Errorf("without personal data: %v", got)
	}
	with := pcommon.NewMap()
	if err := NewLimiter(Options{IncludeUserData: true}).PutTypedAttributes(with, raw); err != nil {
		t.Fatal(err)
	}
	if with.Len() != 4 {
		t.Errorf("with personal data: %v", with.AsRaw())
	}
}

func TestPutObservations(t *testing.T) {
	tests := []struct {
		values          []float64
		scale           int32
		pos, neg, zeros uint64
	}{
		// log2(187.5/12) ≈ 3.97: 3.97·2^5 ≈ 127 buckets fit, 2^6 would not
		{[]float64{187.5, 12}, 5, 2, 0, 0},
		// two values closer than a bucket: the finest scale, one bucket
		{[]float64{1, 1.0000001}, HistogramScale, 2, 0, 0},
		// log2(1e600) ≈ 1993: 1993·2^-4 ≈ 125 buckets
		{[]float64{1e-300, 1e300, -3, 0}, -4, 2, 1, 1},
	}
	for _, tt := range tests {
		dp := pmetric.NewExponentialHistogramDataPoint()
		PutObservations(dp, tt.values)
		if dp.Scale() != tt.scale || dp.Count() != uint64(len(tt.values)) || dp.ZeroCount() != tt.zeros {
			t.Errorf("%v: scale %d count %d zeros %d", tt.values, dp.Scale(), dp.Count(), dp.ZeroCount())
		}
		var pos, neg uint64
		for _, c := range dp.Positive().BucketCounts().AsRaw() {
			pos += c
		}
		for _, c := range dp.Negative().BucketCounts().AsRaw() {
			neg += c
		}
		if pos != tt.pos || neg != tt.neg || dp.Positive().BucketCounts().Len() > maxHistogramBuckets {
			t.Errorf("%v: %d positive, %d negative, %d buckets", tt.values, pos, neg, dp.Positive().BucketCounts().Len())
		}
		// every value lies in its bucket at the chosen scale
		base := math.Exp2(math.Exp2(-float64(dp.Scale())))
		for _, v := range tt.values {
			if v <= 0 {
				continue
			}
			i := BucketIndex(v) >> (HistogramScale - dp.Scale())
			lo, hi := math.Pow(base, float64(i)), math.Pow(base, float64(i+1))
			if !(lo <= v*(1+1e-9) && v <= hi*(1+1e-9)) {
				t.Errorf("%v not in (%v, %v]", v, lo, hi)
			}
			at := int(i - dp.Positive().Offset())
			if at < 0 || at >= dp.Positive().BucketCounts().Len() || dp.Positive().BucketCounts().At(at) == 0 {
				t.Errorf("%v: bucket %d empty", v, at)
			}
		}
	}
}

// TestIsIntegerText: true exactly for what strconv.ParseInt reads in base
// 10 (or refuses only for its range), so that asking first changes no
// value.
func TestIsIntegerText(t *testing.T) {
	for _, s := range []string{"0", "-0", "+5", "42", "-9223372036854775808", "9223372036854775808", "99999999999999999999",
		"", "-", "+", "1.5", "1e3", "-1E3", "0x10", "1_000", " 1", "1 ", "--1", "NaN", "١"} {
		_, err := strconv.ParseInt(s, 10, 64)
		parses := err == nil || errors.Is(err, strconv.ErrRange)
		if got := IsIntegerText(s); got != parses {
			t.Errorf("IsIntegerText(%q) = %v, ParseInt reads it: %v", s, got, parses)
		}
	}
}

// TestIDMemo: the memo gives what TraceID and SpanID give, for a text
// read before, a new one, a bad one after a good one, and none.
func TestIDMemo(t *testing.T) {
	var m IDMemo
	for _, s := range []string{"2c9f4e8a1b7d4f60a3e5c7b9d1f20486", "2c9f4e8a1b7d4f60a3e5c7b9d1f20486", "zz9f4e8a1b7d4f60a3e5c7b9d1f20486", "", "6e1f0a2b3c4d45e6a7b8c9d0e1f2a3b4", "2c9f4e8a-1b7d-4f60-a3e5-c7b9d1f20486"} {
		got, gerr := m.TraceID(s)
		want, werr := TraceID(s)
		if got != want || (gerr == nil) != (werr == nil) {
			t.Errorf("TraceID(%q) = %v, %v; want %v, %v", s, got, gerr, want, werr)
		}
	}
	for _, s := range []string{"8a1b2c3d4e5f6071", "8a1b2c3d4e5f6071", "8a1b2c3d4e5f607", "", "0123456789abcdef"} {
		got, gerr := m.SpanID(s)
		want, werr := SpanID(s)
		if got != want || (gerr == nil) != (werr == nil) {
			t.Errorf("SpanID(%q) = %v, %v; want %v, %v", s, got, gerr, want, werr)
		}
	}
}
