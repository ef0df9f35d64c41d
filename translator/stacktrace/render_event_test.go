package stacktrace_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryevent"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/stacktrace"
)

// TestRenderMatchesSentryEvent renders the exception chain of every event
// of translator/sentryevent's testdata, read here from the JSON, and
// compares it with the exception.stacktrace that sentryevent writes for the
// same event: sentryevent renders with Render, so this holds sentryevent's
// reading of the frames to the JSON.
func TestRenderMatchesSentryEvent(t *testing.T) {
	files, err := filepath.Glob("../sentryevent/testdata/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	rendered := 0
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			payload, err := os.ReadFile(file)
			require.NoError(t, err)
			ev, err := sentryevent.Decode(payload, sentrysignal.Options{})
			require.NoError(t, err)
			lr := plog.NewLogRecord()
			ev.PutLogRecord(lr, sentrysignal.Options{})
			want, ok := lr.Attributes().Get("exception.stacktrace")
			if !ok {
				t.Skip("sentryevent writes no exception.stacktrace for this event")
			}
			rendered++
			assert.Equal(t, want.Str(), stacktrace.Render(chainOfEvent(t, payload)))
		})
	}
	require.Positive(t, rendered, "some event has a stack trace")
}

// chainOfEvent reads exception.values out of an event's JSON, with Sentry's
// field names, independently of sentryevent.
func chainOfEvent(t *testing.T, payload []byte) []stacktrace.Exception {
	var ev struct {
		Exception json.RawMessage `json:"exception"`
	}
	require.NoError(t, json.Unmarshal(payload, &ev))
	var values []eventException
	var wrapped struct {
		Values []eventException `json:"values"`
	}
	// sentry-go sends a bare list; the others {"values": list}
	if json.Unmarshal(ev.Exception, &values) != nil {
		require.NoError(t, json.Unmarshal(ev.Exception, &wrapped))
		values = wrapped.Values
	}
	var chain []stacktrace.Exception
	for _, v := range values {
		e := stacktrace.Exception{Type: v.Type, Value: v.Value}
		for _, f := range v.Stacktrace.Frames {
			e.Frames = append(e.Frames, stacktrace.Frame{Function: f.Function, AbsPath: f.AbsPath, Filename: f.Filename, Module: f.Module, Lineno: f.Lineno, Colno: f.Colno})
		}
		chain = append(chain, e)
	}
	return chain
}

// eventException is one entry of exception.values, as far as the text
// shows it.
type eventException struct {
	Type       string `json:"type"`
	Value      string `json:"value"`
	Stacktrace struct {
		Frames []struct {
			Function string `json:"function"`
			AbsPath  string `json:"abs_path"`
			Filename string `json:"filename"`
			Module   string `json:"module"`
			Lineno   int    `json:"lineno"`
			Colno    int    `json:"colno"`
		} `json:"frames"`
	} `json:"stacktrace"`
}
