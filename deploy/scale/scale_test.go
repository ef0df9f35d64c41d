// Package scale measures what scaling out does to span links: real
// @sentry/node 11 processes send through HAProxy (Debian's, started here on
// loopback) to two built collectors, with each balancing policy, and the
// collectors' own counters say what share of the samples got their span
// link. `make scale` runs it (SCALE=1); it is not part of `make test`.
package scale

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// policy is one way of spreading requests over the replicas.
type policy struct {
	name    string
	balance string // HAProxy's `balance` line; "" sends to one collector directly
}

var policies = []policy{
	{"one replica, no balancer (reference)", ""},
	{"round robin", "balance roundrobin"},
	{"source address hash", "balance source\n  hash-type consistent"},
	{"X-Collector-Affinity header hash", "balance hdr(X-Collector-Affinity)\n  hash-type consistent"},
}

// TestScaleOut runs every policy with both trace lifecycles of the SDK
// and prints a table. Linking is what is measured, not judged: it asserts
// only that samples arrived and that every replica behind the balancer
// got requests under round robin.
func TestScaleOut(t *testing.T) {
	env := scaleEnv(t)
	processes := envInt(t, "SCALE_PROCESSES", 8)
	var rows []string
	for _, lifecycle := range []string{"static", "stream"} {
		for _, p := range policies {
			r := runPolicy(t, env, p, lifecycle, processes)
			require.Positive(t, r.samples, "%s, %s: samples arrived", p.name, lifecycle)
			if p.balance == "balance roundrobin" {
				for i, n := range r.requests {
					require.Positive(t, n, "round robin sent requests to replica %d", i)
				}
			}
			rows = append(rows, r.row(p.name, lifecycle))
			t.Logf("%s", rows[len(rows)-1])
		}
	}
	table := "| policy | SDK lifecycle | processes | samples | linked | requests per replica |\n|---|---|---|---|---|---|\n" +
		strings.Join(rows, "\n") + "\n"
	fmt.Print("\n" + table)
	if out := os.Getenv("SCALE_TABLE"); out != "" {
		require.NoError(t, os.WriteFile(out, []byte(table), 0o644))
	}
}

// scaleEnvironment is what a run needs from the machine.
type scaleEnvironment struct {
	collector, haproxy, node, nodePath, client string
}

func scaleEnv(t *testing.T) scaleEnvironment {
	t.Helper()
	if os.Getenv("SCALE") != "1" {
		t.Skip("SCALE=1 runs the scaling measurement (`make scale`)")
	}
	e := scaleEnvironment{collector: os.Getenv("OTELCOL_BIN")}
	require.NotEmpty(t, e.collector, "OTELCOL_BIN: the built collector")
	var err error
	e.haproxy, err = exec.LookPath("haproxy")
	require.NoError(t, err, "haproxy (Debian's package) is needed")
	e.node, err = exec.LookPath("node")
	require.NoError(t, err, "node is needed")
	e.nodePath, err = filepath.Abs("../../e2e/node/node_modules")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(e.nodePath, "@sentry", "node"))
	require.NoError(t, err, "e2e/node's packages: run `make e2e-deps`")
	e.client, err = filepath.Abs("client.js")
	require.NoError(t, err)
	return e
}

// result is what the two collectors counted in one run.
type result struct {
	processes       int
	linked, samples int
	requests        []int // envelope POSTs answered, per replica
}

func (r result) row(policy, lifecycle string) string {
	share := 0.0
	if r.samples > 0 {
		share = 100 * float64(r.linked) / float64(r.samples)
	}
	reqs := make([]string, len(r.requests))
	for i, n := range r.requests {
		reqs[i] = strconv.Itoa(n)
	}
	return fmt.Sprintf("| %s | %s | %d | %d | %d (%.1f%%) | %s |", policy, lifecycle, r.processes, r.samples, r.linked, share, strings.Join(reqs, " / "))
}

// runPolicy starts two collectors (one for the reference) and the
// balancer, runs the SDK processes, waits for the held chunks to be
// translated and reads the counters.
func runPolicy(t *testing.T, e scaleEnvironment, p policy, lifecycle string, processes int) result {
	t.Helper()
	replicas := 2
	if p.balance == "" {
		replicas = 1
	}
	var collectors []collectorAddrs
	for i := 0; i < replicas; i++ {
		collectors = append(collectors, startCollector(t, e.collector))
	}
	entry := collectors[0].receiver
	if p.balance != "" {
		entry, _ = startHAProxy(t, e.haproxy, p.balance, "", collectors)
	}
	runClients(t, e, entry, lifecycle, processes)
	return settle(t, collectors, processes)
}

// runClients runs the SDK processes, four at a time (2 cores), each with
// its own source address and affinity key.
func runClients(t *testing.T, e scaleEnvironment, entry, lifecycle string, processes int, env ...string) {
	t.Helper()
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	errs := make(chan error, processes)
	for i := 0; i < processes; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs <- runClient(e, entry, lifecycle, i, env)
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func runClient(e scaleEnvironment, entry, lifecycle string, i int, env []string) error {
	key := make([]byte, 8)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.node, e.client)
	cmd.Env = append(os.Environ(),
		"NODE_PATH="+e.nodePath,
		"SENTRY_DSN=http://scalekey@"+entry+"/1",
		"SCALE_LIFECYCLE="+lifecycle,
		fmt.Sprintf("SCALE_SOURCE_ADDRESS=127.0.0.%d", 10+i),
		"SCALE_AFFINITY="+hex.EncodeToString(key))
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("SDK process %d: %w\n%s", i, err, out)
	}
	return nil
}

// settle waits until every chunk held for its spans (links::wait) has
// been translated, then adds up the collectors' counters.
func settle(t *testing.T, collectors []collectorAddrs, processes int) result {
	t.Helper()
	var last result
	stable := 0
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(time.Second)
		r := result{processes: processes}
		for _, c := range collectors {
			m, err := scrape(c.metrics)
			require.NoError(t, err)
			r.linked += m.linked
			r.samples += m.linked + m.unlinked
			r.requests = append(r.requests, m.posts)
		}
		if r.samples == last.samples && r.samples > 0 {
			stable++
			if stable >= 6 { // longer than links::wait (5 s)
				return r
			}
		} else {
			stable = 0
		}
		last = r
	}
	t.Fatalf("the collectors' sample counts did not settle within 60 s: %+v", last)
	return result{}
}
