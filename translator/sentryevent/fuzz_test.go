package sentryevent

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// FuzzAppendLogs: any input either appends exactly one record or returns a
// *DecodeError and appends nothing; nothing panics.
func FuzzAppendLogs(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
	}
	f.Add([]byte(`{"exception":[{"stacktrace":{"frames":[{"vars":{"a":[[[[[[[[[[1]]]]]]]]]]}}]}}]}`), true)
	f.Add([]byte(`{"tags":[["a"],[1,2],"x"],"user":{"ip_address":"{{auto}}"},"request":{"headers":[["A","1"],["a","2"]]}}`), true)
	f.Fuzz(func(t *testing.T, payload []byte, userData bool) {
		dst := plog.NewLogRecordSlice()
		n, err := AppendLogs(payload, sentrysignal.Options{IncludeUserData: userData, MaxDepth: 4}, dst)
		var de *sentrysignal.DecodeError
		switch {
		case err != nil && (!errors.As(err, &de) || n != 0 || dst.Len() != 0):
			t.Fatalf("error %v with %d records appended (n=%d)", err, dst.Len(), n)
		case err == nil && (n != 1 || dst.Len() != 1):
			t.Fatalf("success with %d records appended (n=%d)", dst.Len(), n)
		}
	})
}
