package sentryprofilereceiver

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

func TestDropLogRateLimit(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	l := newDropLog(zap.New(core))
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }
	drop := func(reason sentry.Reason) {
		l.dropped(droppedItem{itemType: "profile", reason: reason, projectID: "42", sdk: "sentry.go", item: 1})
	}
	type step struct {
		advance    time.Duration
		reason     sentry.Reason
		wantLines  int   // lines written so far
		suppressed int64 // suppressed_since_last of the last line, when one was written by this step
	}
	steps := []step{
		{0, sentry.ReasonInvalidJSON, 1, 0},                 // t=0: first of its reason: logged
		{time.Second, sentry.ReasonInvalidJSON, 1, -1},      // t=1: within the interval: counted
		{time.Second, sentry.ReasonInvalidJSON, 1, -1},      // t=2: again
		{0, sentry.ReasonMalformedStacks, 2, 0},             // t=2: another reason has its own budget
		{time.Second, sentry.ReasonMalformedStacks, 2, -1},  // t=3: counted
		{7 * time.Second, sentry.ReasonInvalidJSON, 3, 2},   // t=10: interval over: logged, with the two left out
		{time.Second, sentry.ReasonMalformedStacks, 3, -1},  // t=11: stacks' interval is not over
		{time.Second, sentry.ReasonMalformedStacks, 4, 2},   // t=12: now it is
		{100 * time.Second, sentry.ReasonInvalidJSON, 5, 0}, // nothing suppressed since
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		drop(s.reason)
		require.Equal(t, s.wantLines, logs.Len(), "step %d", i)
		if s.suppressed < 0 {
			continue
		}
		last := logs.All()[logs.Len()-1]
		fields := last.ContextMap()
		assert.Equal(t, "Item dropped", last.Message)
		assert.Equal(t, zapcore.WarnLevel, last.Level)
		assert.Equal(t, string(s.reason), fields["reason"], "step %d", i)
		assert.Equal(t, s.suppressed, fields["suppressed_since_last"], "step %d", i)
		assert.Equal(t, "profile", fields["item_type"])
		assert.Equal(t, "42", fields["project_id"])
		assert.Equal(t, "sentry.go", fields["sdk"])
	}
}

func TestDropLogBoundsSDKName(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	l := newDropLog(zap.New(core))
	l.dropped(droppedItem{reason: sentry.ReasonInvalidJSON, sdk: strings.Repeat("x", 10_000)})
	l.dropped(droppedItem{reason: sentry.ReasonMalformedStacks})
	require.Equal(t, 2, logs.Len())
	assert.Len(t, logs.All()[0].ContextMap()["sdk"], maxLoggedSDKName)
	assert.Equal(t, "unknown", logs.All()[1].ContextMap()["sdk"])
}

// TestDroppedItemIsLogged posts an unreadable profile through the receiver
// and finds one warn line naming the SDK of the envelope header, and no
// payload content or key in it.
func TestDroppedItemIsLogged(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	sink := new(consumertest.ProfilesSink)
	tr := startReceiverLogged(t, sink, nil, zap.New(core))

	const secret = "payload-secret-do-not-log"
	body := envelopeOf(`{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","sdk":{"name":"sentry.javascript.browser","version":"10.0.0"}}`,
		item{header: `{"type":"profile"}`, payload: `{"version":"1","platform":"` + secret + `","profile":{"samples":[`})
	for range 3 {
		resp := post(t, tr, body, nil)
		require.Equal(t, http.StatusOK, resp.status, "body: %s", resp.body)
	}
	require.Equal(t, 1, logs.Len(), "three drops of one reason within the interval log once")
	entry := logs.All()[0]
	fields := entry.ContextMap()
	assert.Equal(t, string(sentry.ReasonInvalidJSON), fields["reason"])
	assert.Equal(t, "sentry.javascript.browser", fields["sdk"])
	assert.Equal(t, "42", fields["project_id"])
	for k, v := range fields {
		assert.NotContains(t, toString(v), secret, "field %s", k)
		assert.NotContains(t, toString(v), testKey, "field %s", k)
	}
	assert.Zero(t, sink.ProfileCount())
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}
