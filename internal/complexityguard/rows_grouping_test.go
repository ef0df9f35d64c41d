package complexityguard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrygrouping"
)

// The grouping key: an error event's frames, exceptions and message text
// are the client's to choose.

// groupingFrames is a JavaScript error of n frames: in-app and library
// frames, recursion, context lines and calls through reportError (whose
// rule covers every frame it called).
func groupingFrames(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"platform":"javascript","exception":{"values":[{"type":"TypeError","value":"x is undefined","stacktrace":{"frames":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, `{"abs_path":"https://cdn.example/static/js/main.%08x.js","function":"f%d","lineno":%d,"colno":9,"in_app":true,"context_line":"  step(%d);"}`, i, i%97, i, i%13)
		case 1:
			b.WriteString(`{"abs_path":"webpack://shop/./node_modules/lib/index.js","filename":"./node_modules/lib/index.js","function":"reportError","lineno":1,"colno":1}`)
		default:
			b.WriteString(`{"abs_path":"app:///dist/app.js","function":"walk","lineno":7,"colno":3,"in_app":true}`)
		}
	}
	b.WriteString(`]}}]}}`)
	return []byte(b.String())
}

// groupingExceptions is an exception group of n distinct leaf exceptions,
// which Sentry sorts by type.
func groupingExceptions(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"platform":"python","exception":{"values":[`)
	for i := range n {
		fmt.Fprintf(&b, `{"type":"E%d","value":"v","mechanism":{"exception_id":%d,"parent_id":0},"stacktrace":{"frames":[{"module":"m","function":"f%d","in_app":true}]}},`, (i*7919)%n, i+1, i)
	}
	b.WriteString(`{"type":"ExceptionGroup","mechanism":{"exception_id":0,"is_exception_group":true}}]}}`)
	return []byte(b.String())
}

// groupingMessage is a message of n parameters of every kind.
func groupingMessage(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "order %d of ada%d@example.com at 2026-11-28T07:%02d:00Z from 10.0.%d.1 took %dms id=%q ok=true 0x%x ", i, i, i%60, i%256, i, "x", i)
	}
	return fmt.Appendf(nil, `{"logentry":{"formatted":%q}}`, b.String())
}

func groupingRows() []row {
	group := func(tb testing.TB, in []byte) (int64, int64) {
		ev, err := sentrygrouping.FromEventJSON(in)
		if err != nil {
			tb.Errorf("grouping: %v", err)
			return 0, 0
		}
		r := sentrygrouping.Group(ev)
		return int64(len(strings.Join(r.Components, ""))), int64(len(r.Components))
	}
	fuzz := []string{"translator/sentrygrouping.FuzzGroup"}
	return []row{
		{name: "grouping_frames", dimension: "frames of an error's stack trace", n: 2000, clock: ThreadClock, fuzz: fuzz, build: directRow(groupingFrames, group)},
		{name: "grouping_exceptions", dimension: "leaf exceptions of an exception group", n: 500, clock: ThreadClock, fuzz: fuzz, build: directRow(groupingExceptions, group)},
		{name: "grouping_message", dimension: "parameters in a message", n: 200, clock: ThreadClock, fuzz: fuzz, build: directRow(groupingMessage, group)},
	}
}
