package otelevent

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryschema"
)

// sections cuts a program's output at its "=====name=====" lines, the
// layout of translator/stacktrace/testdata/<language>/output.txt.
var sections = regexp.MustCompile(`(?m)^=====[\w-]+=====\n`)

// TestRuntimeTracesBecomeValidEvents: the stack traces the runtimes printed
// on this machine (kept by translator/stacktrace in its testdata), recorded
// as exception.stacktrace, become events with frames that validate against
// Sentry's schema.
func TestRuntimeTracesBecomeValidEvents(t *testing.T) {
	files, _ := filepath.Glob("../stacktrace/testdata/*/output.txt")
	if len(files) == 0 {
		t.Skip("no runtime traces under translator/stacktrace/testdata (the stacktrace package's captures are not merged yet)")
	}
	schema := sentryschema.Event(t)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lang := filepath.Base(filepath.Dir(f))
		for i, text := range sections.Split(string(raw), -1) {
			if len(bytes.TrimSpace([]byte(text))) == 0 {
				continue
			}
			var events []Event
			FromLogs(logsWith(func(lr plog.LogRecord) {
				lr.Attributes().PutStr("exception.message", "recorded")
				lr.Attributes().PutStr("exception.stacktrace", text)
			}), EventOptions{}, func(ev Event) { events = append(events, ev) })
			if len(events) != 1 {
				t.Fatalf("%s #%d: %d events", lang, i, len(events))
			}
			d := decode(t, events[0])
			frames := 0
			for _, v := range d.Exception.Values {
				if v.Stacktrace != nil {
					frames += len(v.Stacktrace.Frames)
				}
			}
			if frames == 0 {
				t.Errorf("%s #%d: no frames parsed", lang, i)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(events[0].Payload))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(inst); err != nil {
				t.Errorf("%s #%d: %v", lang, i, err)
			}
			t.Logf("%s #%d: %d exceptions, %d frames, valid", lang, i, len(d.Exception.Values), frames)
		}
	}
}
