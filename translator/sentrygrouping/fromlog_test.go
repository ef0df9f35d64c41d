package sentrygrouping

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryevent"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// The log record the receiver writes for an event, and the receiver's
// decoding of it, group as the event itself: FromLogRecord and
// FromEventDoc read every member grouping uses.
func TestFromLogRecordGroupsAsTheEvent(t *testing.T) {
	files := capturedEventPaths()
	var err error
	docs := map[string][]byte{}
	for _, f := range files {
		docs[filepath.Base(f)], err = os.ReadFile(f)
		require.NoError(t, err)
	}
	docs["browser build"] = []byte(browserError("3f2a1b7c", "Qi", "e", 41, 7))
	docs["node with fingerprint variables"] = []byte(replaceOnce(nodeError("main.js", 812, "loadOrder"),
		`{"platform":"node",`, `{"platform":"node","transaction":"GET /orders","tags":{"region":"eu-1"},"fingerprint":["{{ transaction }}","{{ tags.region }}","{{ function }}"],`))
	docs["message template"] = []byte(`{"platform":"python","logentry":{"message":"loading order %s failed","params":["4711"]}}`)
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			want, err := FromEventJSON(doc)
			require.NoError(t, err)
			ev, err := sentryevent.Decode(doc, sentrysignal.Options{})
			require.NoError(t, err)
			lr := plog.NewLogRecord()
			ev.PutLogRecord(lr, sentrysignal.Options{})
			got := Group(FromLogRecord(lr, want.Platform))
			assert.Equal(t, Group(want), got)
			assert.Equal(t, Group(want), Group(FromEventDoc(ev.Doc)), "from the receiver's decoding")
			if name == "node with fingerprint variables" {
				assert.Equal(t, []string{"fingerprint=GET /orders", "fingerprint=eu-1", "fingerprint=loadOrder"}, got.Components)
			}
		})
	}
}
