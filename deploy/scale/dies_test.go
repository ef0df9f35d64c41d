package scale

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReplicaDies measures what a replica's crash loses: two collectors
// behind HAProxy hashing on the affinity header, with health checks and
// redispatch as a production balancer has them; the SDK processes run
// while one replica is SIGKILLed once SDK traffic flows through it. It reports the chunks that replica held
// for their spans at that moment (lost: already answered 200), the
// requests the balancer answered with an error while it noticed (the SDK
// drops those), and how the rest linked.
func TestReplicaDies(t *testing.T) {
	e := scaleEnv(t)
	processes := envInt(t, "SCALE_PROCESSES", 8)
	collectors := []collectorAddrs{startCollector(t, e.collector), startCollector(t, e.collector)}
	entry, stats := startHAProxy(t, e.haproxy,
		"balance hdr(X-Collector-Affinity)\n  hash-type consistent\n  option redispatch\n  retries 2",
		" check inter 500ms fall 2 rise 2", collectors)

	killed := make(chan counters, 1)
	go func() { killed <- killWhenBusy(t, collectors[1]) }()
	runClients(t, e, entry, "stream", processes, "SCALE_JOBS=10")
	before := <-killed

	survivor := settle(t, collectors[:1], processes)
	responses, err := frontendResponses(stats)
	require.NoError(t, err)
	lostChunks := before.held - before.unheld
	rows := fmt.Sprintf(`| | killed replica (up to the kill) | surviving replica (whole run) |
|---|---|---|
| samples linked / translated | %d / %d | %d / %d |
| envelope POSTs answered | %d | %d |
| chunks held when killed (lost) | %d | — |

HAProxy's answers to the SDKs: 2xx %d, 5xx %d (an SDK drops an envelope answered 5xx).
`, before.linked, before.linked+before.unlinked, survivor.linked, survivor.samples,
		before.posts, survivor.requests[0], lostChunks, responses["2xx"], responses["5xx"])
	fmt.Print("\n" + rows)
	if out := os.Getenv("SCALE_DIES_TABLE"); out != "" {
		require.NoError(t, os.WriteFile(out, []byte(rows), 0o644))
	}
	require.Positive(t, survivor.samples, "the surviving replica took the SDKs' traffic")
	require.Positive(t, before.posts, "the killed replica had traffic before it died")
}

// killWhenBusy SIGKILLs a collector once it has answered a few envelopes
// (SDK traffic is flowing through it), and returns its counters from just
// before the kill.
func killWhenBusy(t *testing.T, c collectorAddrs) counters {
	var before counters
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		var err error
		before, err = scrape(c.metrics)
		if err != nil {
			t.Errorf("scraping the replica before the kill: %v", err)
			break
		}
		if before.posts >= 6 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := c.process.Kill(); err != nil {
		t.Errorf("killing the replica: %v", err)
	}
	return before
}
