package prometheus

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fixturesGlob are the real SDK envelopes the live test replays: captured
// from sentry-python 2.68 (a V1 profile with its transaction, and V2
// chunks).
const fixturesGlob = "../../../shared/fixtures/sentry/*.envelope"

// envelope is one request body and the project it is sent to.
type envelope struct {
	name, project string
	body          []byte
}

// realEnvelopes reads the fixtures; without them the live test skips.
func realEnvelopes(t *testing.T) []envelope {
	t.Helper()
	paths, err := filepath.Glob(fixturesGlob)
	require.NoError(t, err)
	if len(paths) == 0 {
		missing(t, "no Sentry envelopes at "+fixturesGlob+" (the shared fixtures sit beside the repository)")
	}
	sort.Strings(paths)
	var out []envelope
	for _, p := range paths {
		body, err := os.ReadFile(p)
		require.NoError(t, err)
		out = append(out, envelope{name: filepath.Base(p), project: "1", body: body})
	}
	return out
}

// craftedEnvelopes make the receiver's drop and report counters move, the
// way broken or unlucky SDKs do: unreadable profile, event and
// transaction items; a client report of what an SDK discarded (a loss and
// a sampling decision); a readable event, which the memory_limiter of the
// logs pipeline refuses; a session update (the metrics pipeline); a
// profiled transaction with two child spans, more than the span index
// keeps per profiler in this set-up (evictions); and a real envelope for project 2, which the
// recovered upstream refuses for good.
func craftedEnvelopes(now time.Time, real []envelope) []envelope {
	ts := fmt.Sprintf("%.3f", float64(now.UnixMilli())/1000)
	out := []envelope{
		{name: "unreadable items", project: "1", body: []byte("{}\n" +
			`{"type":"profile_chunk","platform":"python"}` + "\n" + `{"version":"2","profiler_id":` + "\n" +
			`{"type":"event"}` + "\n" + `{"event_id":` + "\n" +
			`{"type":"transaction"}` + "\n" + `[1,2` + "\n")},
		{name: "client report", project: "1", body: []byte("{}\n" +
			`{"type":"client_report"}` + "\n" +
			`{"timestamp":` + ts + `,"discarded_events":[{"reason":"queue_overflow","category":"error","quantity":2},{"reason":"sample_rate","category":"transaction","quantity":5}]}` + "\n")},
		{name: "event", project: "1", body: []byte(`{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc"}` + "\n" +
			`{"type":"event"}` + "\n" +
			`{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","timestamp":` + ts + `,"platform":"python","level":"error","message":"alerts live test"}` + "\n")},
		{name: "session", project: "1", body: []byte("{}\n" +
			`{"type":"session"}` + "\n" +
			`{"sid":"7c7b6632c5ea4d5e8d3a3b2b0c1f6a10","init":true,"started":"` + now.UTC().Format(time.RFC3339) + `","status":"ok","errors":0,"attrs":{"release":"live@1.0.0","environment":"test"}}` + "\n")},
		{name: "transaction with spans", project: "1", body: []byte("{}\n" +
			`{"type":"transaction"}` + "\n" + transaction(now) + "\n")},
	}
	if len(real) > 0 {
		out = append(out, envelope{name: real[0].name + " (project 2)", project: "2", body: real[0].body})
	}
	return out
}

// transaction is a profiled transaction (contexts.profile.profiler_id)
// of one second ending now, with two child spans.
func transaction(now time.Time) string {
	start := float64(now.Add(-time.Second).UnixMilli()) / 1000
	end := float64(now.UnixMilli()) / 1000
	const trace, root = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	span := func(id, op string) string {
		return fmt.Sprintf(`{"span_id":%q,"parent_span_id":%q,"trace_id":%q,"op":%q,"start_timestamp":%.3f,"timestamp":%.3f}`,
			id, root, trace, op, start, end)
	}
	return fmt.Sprintf(`{"event_id":"6c3f2e2b1a0d4e8f9b7a6c5d4e3f2a1b","type":"transaction","transaction":"GET /live","platform":"python",`+
		`"start_timestamp":%.3f,"timestamp":%.3f,"contexts":{"trace":{"trace_id":%q,"span_id":%q,"op":"http.server"},`+
		`"profile":{"profiler_id":"0d6b3c1e9f8a4b7c8d2e1f0a9b8c7d6e"}},"spans":[%s,%s]}`,
		start, end, trace, root, span("1111111111111111", "db"), span("2222222222222222", "http.client"))
}

// replayer posts the envelopes in turn, one at a time, until stopped, and
// counts the answers by status.
type replayer struct {
	mu      sync.Mutex
	answers map[int]int
	sent    atomic.Int64
	stop    context.CancelFunc
	done    chan struct{}
}

func replay(receiver string, envelopes []envelope, pause time.Duration) *replayer {
	ctx, cancel := context.WithCancel(context.Background())
	r := &replayer{answers: map[int]int{}, stop: cancel, done: make(chan struct{})}
	client := &http.Client{Timeout: 10 * time.Second}
	go func() {
		defer close(r.done)
		for i := 0; ctx.Err() == nil; i++ {
			e := envelopes[i%len(envelopes)]
			url := fmt.Sprintf("http://%s/api/%s/envelope/?sentry_key=livekey&sentry_version=7", receiver, e.project)
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(e.body))
			if err != nil {
				return
			}
			req.Header.Set("Content-Type", "application/x-sentry-envelope")
			status := 0 // no answer
			if resp, err := client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				status = resp.StatusCode
			}
			r.sent.Add(1)
			r.mu.Lock()
			r.answers[status]++
			r.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(pause):
			}
		}
	}()
	return r
}

func (r *replayer) finish() map[int]int {
	r.stop()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.answers
}
