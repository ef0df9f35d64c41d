package sentrylog

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"
)

// TestLogsFacts: the resource a log item's decoder reports is the one its
// records' attributes name, read back record by record as a receiver
// once did, and for the captured SDK items the program they were sent by.
func TestLogsFacts(t *testing.T) {
	node := sentryresource.Resource{Release: "shop@1.4.2", Environment: "production", ServerName: "vm",
		SDK: sentry.ClientSDK{Name: "sentry.javascript.node", Version: "11.1.0"}}
	tests := []struct {
		name    string
		decode  sentrysignal.LogsDecoder
		payload []byte
		opts    sentrysignal.Options
		want    *sentryresource.Resource // nil: only as read back
	}{
		{"node capture", Logs, signaltest.ReadTestdata(t, "node11_captured_logs_1.json"), sentrysignal.Options{}, &node},
		{"python capture", Logs, signaltest.ReadTestdata(t, "python268_captured_log_1.json"), sentrysignal.Options{}, nil},
		{"go capture", Logs, signaltest.ReadTestdata(t, "go050_captured_log_1.json"), sentrysignal.Options{}, nil},
		{"python logs", Logs, signaltest.ReadTestdata(t, "python268_logs.json"), sentrysignal.Options{}, nil},
		{"second log fills what the first lacks", Logs, []byte(`{"items":[
			{"timestamp":1,"body":"a","attributes":{"sentry.release":{"type":"string","value":"a@1"}}},
			{"timestamp":2,"body":"b","attributes":{"sentry.release":{"type":"string","value":"b@2"},"sentry.environment":{"type":"string","value":"prod"}}}]}`),
			sentrysignal.Options{}, &sentryresource.Resource{Release: "a@1", Environment: "prod"}},
		{"an integer release is not a string", Logs, []byte(`{"items":[
			{"timestamp":1,"body":"a","attributes":{"sentry.release":{"type":"integer","value":7}}}]}`),
			sentrysignal.Options{}, &sentryresource.Resource{}},
		{"an unknown type's string is", Logs, []byte(`{"items":[
			{"timestamp":1,"body":"a","attributes":{"sentry.release":{"type":"version","value":"x@1"}}}]}`),
			sentrysignal.Options{}, &sentryresource.Resource{Release: "x@1"}},
		{"legacy string_value", Logs, []byte(`{"items":[
			{"timestamp":1,"body":"a","attributes":{"sentry.environment":{"string_value":"dev"}}}]}`),
			sentrysignal.Options{}, &sentryresource.Resource{Environment: "dev"}},
		{"a dropped log names nothing", Logs, []byte(`{"items":[
			{"timestamp":"never","attributes":{"sentry.release":{"type":"string","value":"bad@1"}}},
			{"timestamp":1,"attributes":{"sentry.environment":{"type":"string","value":"ok"}}}]}`),
			sentrysignal.Options{}, &sentryresource.Resource{Environment: "ok"}},
		{"an attribute cut at the map limit names nothing", Logs, []byte(`{"items":[
			{"timestamp":1,"attributes":{"a":{"type":"string","value":"1"},"b":{"type":"string","value":"2"},"sentry.release":{"type":"string","value":"cut@1"}}}]}`),
			sentrysignal.Options{MaxMapEntries: 2}, &sentryresource.Resource{}},
		{"otel_log attributes", OTelLogs, []byte(`{"time_unix_nano":"1","attributes":[
			{"key":"sentry.release","value":{"stringValue":"o@1"}},{"key":"server.address","value":{"intValue":"3"}},
			{"key":"sentry.sdk.name","value":{"stringValue":"first"}},{"key":"sentry.sdk.name","value":{"stringValue":"last"}}]}`),
			sentrysignal.Options{}, &sentryresource.Resource{Release: "o@1", SDK: sentry.ClientSDK{Name: "last"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs, _ := tt.decode(tt.payload, tt.opts)
			if logs.Append == nil {
				t.Fatal("nothing to append")
			}
			dst := plog.NewLogRecordSlice()
			logs.Append(dst)
			if got, back := logs.Resource, signaltest.ResourceOfRecords(dst); got != back {
				t.Errorf("facts %+v\nread back %+v", got, back)
			}
			if tt.want != nil && logs.Resource != *tt.want {
				t.Errorf("facts %+v\nwant %+v", logs.Resource, *tt.want)
			}
		})
	}
}
