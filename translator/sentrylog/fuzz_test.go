package sentrylog

import (
	"errors"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// FuzzAppendLogs: any input appends at most its entries, and reports every
// entry it did not append; nothing panics.
func FuzzAppendLogs(f *testing.F) {
	f.Add(signaltest.ReadTestdata(f, "node11_logs.json"))
	f.Add(signaltest.ReadTestdata(f, "python268_logs.json"))
	f.Add([]byte(`{"items":[{"timestamp":"1","body":{"a":[[[[[[[[[1]]]]]]]]]},"severity_number":99,"x":null}]}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		dst := plog.NewLogRecordSlice()
		n, err := AppendLogs(payload, sentrysignal.Options{MaxDepth: 3, MaxItems: 50}, dst)
		if n != dst.Len() {
			t.Fatalf("returned %d, appended %d", n, dst.Len())
		}
		var pe *sentrysignal.PartialError
		var de *sentrysignal.DecodeError
		if err != nil && !errors.As(err, &pe) && !errors.As(err, &de) {
			t.Fatalf("untyped error %v", err)
		}
	})
}

// FuzzAppendOTelLog: one record or a *DecodeError and none.
func FuzzAppendOTelLog(f *testing.F) {
	f.Add([]byte(`{"severity_text":"info","severity_number":9,"body":{"string_value":"x"},"attributes":[{"key":"k","value":{"array_value":{"values":[{"kvlist_value":{"values":[]}}]}}}],"time_unix_nano":"1"}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		dst := plog.NewLogRecordSlice()
		n, err := AppendOTelLog(payload, sentrysignal.Options{MaxDepth: 3}, dst)
		var de *sentrysignal.DecodeError
		if (err != nil && (!errors.As(err, &de) || n != 0 || dst.Len() != 0)) || (err == nil && (n != 1 || dst.Len() != 1)) {
			t.Fatalf("n=%d records=%d err=%v", n, dst.Len(), err)
		}
	})
}
