package sentrygrouping

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// FuzzGroup: any event JSON groups without panicking, and the key is the
// MD5 of the values it reports.
func FuzzGroup(f *testing.F) {
	files := capturedEventPaths()
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(browserError("3f2a1b7c", "Qi", "e", 41, 7)))
	f.Add([]byte(`{"fingerprint":["{{ default }}","{{ tags.x }}"],"message":"a 1","exception":[{"mechanism":{"exception_id":0,"is_exception_group":true}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if ev, err := FromEventJSON(data); err == nil {
			checkResult(t, Group(ev))
		}
		// as the receiver decodes it
		var doc map[string]any
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		if d.Decode(&doc) == nil {
			checkResult(t, Group(FromEventDoc(doc)))
		}
	})
}

func checkResult(t *testing.T, r Result) {
	t.Helper()
	if len(r.Hash) != 32 {
		t.Fatalf("hash %q", r.Hash)
	}
	if got := hashValues(unlabel(r.Components)); got != r.Hash {
		t.Fatalf("hash %s is not the MD5 of its components %q (%s)", r.Hash, r.Components, got)
	}
}
