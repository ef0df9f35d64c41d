package sentrygrouping

import "path/filepath"

// capturedEventsDir holds the events real SDKs sent to the receiver in its
// end-to-end runs, captured for translator/sentryevent's tests; grouping
// reads the same captures rather than copies of them.
const capturedEventsDir = "../sentryevent/testdata"

// capturedEvents are the captures that are whole error or message events.
var capturedEvents = []string{
	"browser11_captured_event_1.json",
	"browser11_error.json",
	"go050_captured_event_1.json",
	"node11_capture_message.json",
	"node11_captured_event_2.json",
	"node11_error_chained.json",
	"python1910_captured_store_1.json",
	"python268_captured_event_1.json",
	"python268_captured_event_2.json",
	"python268_logging_error.json",
}

// capturedEventPaths are capturedEvents' paths from this package.
func capturedEventPaths() []string {
	paths := make([]string, len(capturedEvents))
	for i, name := range capturedEvents {
		paths[i] = filepath.Join(capturedEventsDir, name)
	}
	return paths
}
