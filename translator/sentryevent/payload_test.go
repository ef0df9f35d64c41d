package sentryevent

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// byBothPaths translates payload by the router's path (Logs) and by the
// tree (Decode, PutLogRecord) and says how they differ; "" when they
// agree on the error, the facts and every byte of the record.
func byBothPaths(payload []byte, opts sentrysignal.Options) string {
	treeTrunc, payloadTrunc := &sentrysignal.Truncations{}, &sentrysignal.Truncations{}
	treeOpts, payloadOpts := opts, opts
	treeOpts.Truncations, payloadOpts.Truncations = treeTrunc, payloadTrunc

	ev, treeErr := Decode(payload, treeOpts)
	logs, payloadErr := Logs(payload, payloadOpts)
	if (treeErr == nil) != (payloadErr == nil) || (treeErr != nil && treeErr.Error() != payloadErr.Error()) {
		return fmt.Sprintf("errors differ: tree %v, payload %v", treeErr, payloadErr)
	}
	if treeErr != nil {
		return ""
	}
	if ev.Resource != logs.Resource || ev.EventID != logs.EventID {
		return fmt.Sprintf("facts differ: tree %+v %q, payload %+v %q", ev.Resource, ev.EventID, logs.Resource, logs.EventID)
	}
	tree, byPayload := plog.NewLogs(), plog.NewLogs()
	ev.PutLogRecord(recordsOf(tree).AppendEmpty(), treeOpts)
	if n := logs.Append(recordsOf(byPayload)); n != 1 {
		return fmt.Sprintf("payload path appended %d records", n)
	}
	want, got := marshalLogs(tree), marshalLogs(byPayload)
	if !bytes.Equal(want, got) {
		return fmt.Sprintf("records differ:\ntree:    %s\npayload: %s", want, got)
	}
	if *treeTrunc != *payloadTrunc {
		return fmt.Sprintf("truncations differ: tree %+v, payload %+v", *treeTrunc, *payloadTrunc)
	}
	return ""
}

func recordsOf(ld plog.Logs) plog.LogRecordSlice {
	return ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
}

func marshalLogs(ld plog.Logs) []byte {
	b, err := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	if err != nil {
		return []byte("marshal: " + err.Error())
	}
	return b
}

// pathOptions are the options the paths are compared under: the
// receiver's default, personal data, and limits small enough that the
// captured events reach them (values past the depth as JSON text, maps
// cut).
var pathOptions = []sentrysignal.Options{
	{},
	{IncludeUserData: true},
	{MaxDepth: 1},
	{MaxDepth: 2, IncludeUserData: true},
	{MaxDepth: 4, MaxMapEntries: 7},
	{MaxDepth: 3, MaxMapEntries: 3, IncludeUserData: true},
}

// pathCases are payloads written for what the captured events do not
// send: repeated keys, nulls, escapes, characters encoding/json escapes,
// numbers of every form, bare lists, wide objects, deep frames' vars.
var pathCases = map[string]string{
	"repeated keys, last wins":     `{"extra":{"a":1,"b":2,"a":null,"b":3},"extra":{"z":[1,{"k":1,"k":2}]},"level":"info","level":5}`,
	"nulls":                        `{"event_id":null,"timestamp":null,"extra":{"a":null,"b":[null,{"c":null}]},"contexts":null,"tags":null}`,
	"escapes and html":             `{"extra":{"d":{"e":{"f":{"g":{"h":{"i":{"j":"<a href=\"x\">&amp;\u2028\u2029\t\n\r\b\f\u0001\ud800 é \u00e9 \\/"}}}}}}},"message":"x\u0000y"}`,
	"invalid utf-8":                "{\"extra\":{\"a\":\"\xff\xfe\",\"b\":{\"c\":{\"d\":{\"e\":{\"f\":{\"g\":{\"h\":\"\xc3\x28\"}}}}}}}}",
	"numbers":                      `{"extra":{"i":-0,"j":12345678901234567890,"k":1.5e3,"l":-1E-2,"m":1e400,"n":9223372036854775807,"o":-9223372036854775808,"p":123456789012345678,"q":[1.0,2e0,{"r":{"s":{"t":{"u":{"v":{"w":[1e400,-0.0]}}}}}}]}}`,
	"bare lists":                   `{"exception":[{"type":"E","value":"v","stacktrace":{"frames":[{"function":"f","lineno":1.0,"colno":2,"vars":{"a":1}}]}}],"threads":[{"id":1,"stacktrace":{"frames":[{"vars":{"b":[[[[[[[[[[1]]]]]]]]]]}}]}}],"breadcrumbs":[{"message":"m"}]}`,
	"values forms":                 `{"exception":{"values":[{"type":"A","mechanism":{"synthetic":true}},{"value":7}]},"breadcrumbs":{"values":[]},"threads":{"values":"x"}}`,
	"captured message":             `{"message":"hello","exception":{"values":[{"value":"hello","mechanism":{"synthetic":true},"stacktrace":{"frames":[{"filename":"a.js","lineno":3}]}}]}}`,
	"logentry":                     `{"logentry":{"message":"%s and %(x)s","params":["a",{"x":1}]},"message":"other","tags":[["a","b"],["c",1],"bad"]}`,
	"user and request":             `{"user":{"id":1,"ip_address":"{{auto}}","geo":{"a":{"b":{"c":{"d":{"e":{"f":{"g":1}}}}}}}},"request":{"url":"u","headers":[["A","1"],["a","2"]],"cookies":"c"}}`,
	"odd types":                    `{"tags":"x","level":["warning"],"exception":5,"contexts":{"trace":{"trace_id":"0123456789abcdef0123456789abcdef","span_id":"0123456789abcdef"}},"sdk":{"name":"s","integrations":[]}}`,
	"frame vars below the depth":   `{"exception":{"values":[{"stacktrace":{"frames":[{"vars":{"x":1},"frames":[{"vars":2}],"data":{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"frames":[{"vars":1,"v":{"vars":2}}]}}}}}}}}}}}]}}]}}`,
	"empty containers":             `{"extra":{},"modules":[],"fingerprint":[[]],"contexts":{"a":{}}}`,
	"not json":                     `{"a":}`,
	"not an object":                `[1]`,
	"trailing data":                `{} {}`,
	"bad event id":                 `{"event_id":"xyz"}`,
	"bad timestamp":                `{"timestamp":true}`,
	"bad trace id":                 `{"contexts":{"trace":{"trace_id":"nope"}}}`,
	"event id of another type":     `{"event_id":5}`,
	"string timestamp and release": `{"timestamp":"2024-01-02T03:04:05.123456Z","release":1.5,"dist":true,"environment":3}`,
}

// wideObject is an event whose extra has n members, in reverse order.
func wideObject(n int) string {
	var b strings.Builder
	b.WriteString(`{"extra":{`)
	for i := n; i > 0; i-- {
		if i < n {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%04d":{"v":%d,"w":null}`, i, i)
	}
	b.WriteString(`},"contexts":{"c":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, n-i, i)
	}
	b.WriteString("}}}")
	return b.String()
}

// TestPayloadMatchesTree: the router's path writes, for every captured
// event and every case above under every option set, the record the
// map[string]any tree writes, and fails the same payloads the same way.
func TestPayloadMatchesTree(t *testing.T) {
	payloads := map[string][]byte{}
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		payloads[filepath.Base(file)] = b
	}
	for name, payload := range pathCases {
		payloads[name] = []byte(payload)
	}
	for _, n := range []int{15, 17, 130} {
		payloads[fmt.Sprintf("%d wide objects", n)] = []byte(wideObject(n))
	}
	for name, payload := range payloads {
		for _, opts := range pathOptions {
			t.Run(fmt.Sprintf("%s/%+v", name, opts), func(t *testing.T) {
				if diff := byBothPaths(payload, opts); diff != "" {
					t.Error(diff)
				}
			})
		}
	}
}

// FuzzPayloadMatchesTree: for any input and limits the two paths agree
// (see byBothPaths).
func FuzzPayloadMatchesTree(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false, uint8(0), uint8(0))
	}
	for _, payload := range pathCases {
		f.Add([]byte(payload), true, uint8(2), uint8(3))
	}
	f.Fuzz(func(t *testing.T, payload []byte, userData bool, depth, entries uint8) {
		opts := sentrysignal.Options{IncludeUserData: userData, MaxDepth: int(depth % 16), MaxMapEntries: int(entries)}
		if diff := byBothPaths(payload, opts); diff != "" {
			t.Error(diff)
		}
	})
}
