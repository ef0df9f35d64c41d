package reliability

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// The attacks of `make hostile` against the built collector: the shapes of
// the defects found in review (logentry templates that format to
// gigabytes, inserts that search every key, slots held by a wrong key,
// path components, frames per map, invented build ids, FIFOs among the
// symbols, an exporter's strings and aggregated values, redirects and
// rate limits of the Sentry it sends to), each while correct requests
// keep arriving. The collector must stay up, stay under hostileRSSBound,
// answer every correct request within canaryDeadline, and write every
// record it answered 200 for.

// envHostile switches the attacks on; `make hostile` sets it.
const envHostile = "HOSTILE"

const (
	// hostileRSSBound bounds the collector's peak resident set (VmHWM)
	// over a whole attack run. Idle, the collector holds about 100 MiB;
	// each attack is scaled so that the defect it reproduces, unfixed,
	// costs more than the bound (the 4 GB of the original logentry bomb
	// is cut to 200 MB so that an unfixed collector does not take the
	// memory of the machine it shares).
	hostileRSSBound = 512 << 20
	// canaryDeadline is how long a correct request sent alongside an
	// attack may take to be answered: ten times what an idle collector
	// needs on these shared machines.
	canaryDeadline = 5 * time.Second
	// canaryInterval is the time between two correct requests.
	canaryInterval = 250 * time.Millisecond
	// attackDeadline bounds the answer to an attack itself: it may be
	// refused, but every attack is at most a few megabytes, which linear
	// code answers in well under a second (the defects took 2–28 s).
	attackDeadline = 3 * time.Second
	// attackTimeout is how long the test waits for that answer, to report
	// how late it came.
	attackTimeout = 2 * time.Minute
)

// requireHostile skips unless HOSTILE=1 and returns the built collector.
func requireHostile(t *testing.T) string {
	t.Helper()
	if os.Getenv(envHostile) != "1" {
		t.Skipf("attack run against the built collector: set %s=1 (make hostile); it takes about two minutes", envHostile)
	}
	return builtCollector(t)
}

// canary sends correct requests at canaryInterval until stopped, and
// records each answer: every one must come within canaryDeadline, and each
// one answered 200 is remembered by its marker for the check that nothing
// answered 200 was lost.
type canary struct {
	name string
	send func(client *http.Client, i int) (status int, marker string, err error)

	mu       sync.Mutex
	accepted []string // markers answered 200
	failures []string // late, refused or failed
	sent     int
	slowest  time.Duration
	stop     chan struct{}
	done     chan struct{}
}

func startCanary(name string, send func(client *http.Client, i int) (int, string, error)) *canary {
	c := &canary{name: name, send: send, stop: make(chan struct{}), done: make(chan struct{})}
	client := &http.Client{Timeout: 3 * canaryDeadline}
	go func() {
		defer close(c.done)
		tick := time.NewTicker(canaryInterval)
		defer tick.Stop()
		for i := 0; ; i++ {
			start := time.Now()
			status, marker, err := c.send(client, i)
			took := time.Since(start)
			c.mu.Lock()
			c.sent++
			c.slowest = max(c.slowest, took)
			switch {
			case err != nil:
				c.failures = append(c.failures, fmt.Sprintf("request %d: %v after %v", i, err, took.Round(time.Millisecond)))
			case took > canaryDeadline:
				c.failures = append(c.failures, fmt.Sprintf("request %d: answered %d after %v", i, status, took.Round(time.Millisecond)))
			case status != http.StatusOK:
				c.failures = append(c.failures, fmt.Sprintf("request %d: answered %d", i, status))
			}
			if err == nil && status == http.StatusOK {
				c.accepted = append(c.accepted, marker)
			}
			c.mu.Unlock()
			select {
			case <-c.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return c
}

// check stops the canary and fails t with every request that was late or
// refused during what: the attack it ran alongside.
func (c *canary) check(t *testing.T, what string) []string {
	t.Helper()
	close(c.stop)
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	t.Logf("%s: %s canary: %d sent, %d answered 200, slowest %v", what, c.name, c.sent, len(c.accepted), c.slowest.Round(time.Millisecond))
	assert.Emptyf(t, c.failures, "%s: correct %s requests sent alongside must be answered 200 within %v", what, c.name, canaryDeadline)
	return append([]string(nil), c.accepted...)
}

// postRaw posts body to url with headers and reads the answer.
func postRaw(client *http.Client, url string, body []byte, headers map[string]string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(answer), err
}

// attack sends one hostile request: whatever its answer, it must come
// within attackDeadline, and the collector must still run afterwards.
func attack(t *testing.T, p *collectorProcess, name, url string, body []byte, headers map[string]string) int {
	t.Helper()
	client := &http.Client{Timeout: attackTimeout}
	start := time.Now()
	status, answer, err := postRaw(client, url, body, headers)
	took := time.Since(start)
	t.Logf("attack %s (%d bytes): %d %.200s in %v (err %v)", name, len(body), status, answer, took.Round(time.Millisecond), err)
	assert.NoErrorf(t, err, "attack %s: the collector must answer", name)
	assert.LessOrEqualf(t, took, attackDeadline, "attack %s: answered after %v", name, took.Round(time.Millisecond))
	require.Falsef(t, p.exited(), "attack %s: the collector exited: %v\n%s", name, p.err, p.outputTail(4000))
	return status
}

// requireRSSBound reads the collector's peak resident set.
func requireRSSBound(t *testing.T, p *collectorProcess, what string) {
	t.Helper()
	rss, peak, err := p.memory()
	require.NoError(t, err)
	t.Logf("%s: collector RSS %d MiB, peak (VmHWM) %d MiB, bound %d MiB", what, rss>>20, peak>>20, hostileRSSBound>>20)
	assert.LessOrEqualf(t, peak, uint64(hostileRSSBound), "%s: the collector's peak RSS %d MiB is over %d MiB", what, peak>>20, hostileRSSBound>>20)
}

// gzipped compresses body as an SDK does.
func gzipped(t *testing.T, body []byte) []byte { return compresstest.Bytes(t, "gzip", body) }

// hostileEvent is an error event whose members are members.
func hostileEvent(eventID, members string) string {
	return `{"event_id":"` + eventID + `","timestamp":1795644001.5,"level":"error","platform":"python",` +
		`"release":"shop@1.4.2","environment":"production"` + members + `}`
}

// eventID makes the 32-hex-digit id of the i-th request of a series.
func eventID(series byte, i int) string { return fmt.Sprintf("%02x%030x", series, i) }

// fourPipelineConfig is the README's configuration: one sentryprofile
// receiver in the profiles, traces, logs and metrics pipelines, each
// written by a file exporter so that the test counts what came through.
func fourPipelineConfig(addr, dir string) string {
	out := func(s string) string { return yamlQuote(filepath.Join(dir, s+".jsonl")) }
	return fmt.Sprintf(`receivers:
  sentryprofile:
    endpoint: %s
    public_keys: [%s]
exporters:
  file/profiles:
    path: %s
    format: json
    flush_interval: 100ms
  file/traces:
    path: %s
    format: json
    flush_interval: 100ms
  file/logs:
    path: %s
    format: json
    flush_interval: 100ms
  file/metrics:
    path: %s
    format: json
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles: { receivers: [sentryprofile], exporters: [file/profiles] }
    traces:   { receivers: [sentryprofile], exporters: [file/traces] }
    logs:     { receivers: [sentryprofile], exporters: [file/logs] }
    metrics:  { receivers: [sentryprofile], exporters: [file/metrics] }
`, yamlQuote(addr), yamlQuote(testKey), out("profiles"), out("traces"), out("logs"), out("metrics"))
}

// holdSlots opens n connections that send the headers of an envelope
// request with a wrong key and a body they never send, and keeps them
// open until the returned function is called.
func holdSlots(t *testing.T, addr string, n int) func() {
	t.Helper()
	var conns []net.Conn
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		require.NoError(t, err)
		_, err = fmt.Fprintf(c, "POST /api/%s/envelope/?sentry_key=%s&sentry_version=7 HTTP/1.1\r\nHost: %s\r\n"+
			"Content-Type: application/x-sentry-envelope\r\nContent-Length: 1048576\r\n\r\n", testProject, wrongKey, addr)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	return func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}
}

// TestHostileCollectorFourPipelines: the README's four pipelines under the
// receiver's attacks, an envelope and a /store/ canary alongside.
func TestHostileCollectorFourPipelines(t *testing.T) {
	bin := requireHostile(t)
	dir := t.TempDir()
	addr := testnet.FreeLoopbackAddr(t)
	p := startCollector(t, bin, dir, fourPipelineConfig(addr, dir))
	p.waitListening(t, addr)
	base := "http://" + addr
	envURL := envelopeURL(base)
	storeURL := base + "/api/" + testProject + "/store/?sentry_key=" + testKey + "&sentry_version=7"

	var accepted []string
	during := func(what string, run func()) {
		t.Helper()
		env := startCanary("envelope", func(client *http.Client, i int) (int, string, error) {
			marker := fmt.Sprintf("canary-envelope-%s-%d", what, i)
			body := envelopeOf(`{}`, sizedItem("event", hostileEvent(eventID(1, i), `,"message":"`+marker+`"`)))
			status, _, err := postRaw(client, envURL, body, nil)
			return status, marker, err
		})
		store := startCanary("store", func(client *http.Client, i int) (int, string, error) {
			marker := fmt.Sprintf("canary-store-%s-%d", what, i)
			status, _, err := postRaw(client, storeURL, []byte(hostileEvent(eventID(2, i), `,"message":"`+marker+`"`)), nil)
			return status, marker, err
		})
		time.Sleep(2 * canaryInterval)
		run()
		time.Sleep(2 * canaryInterval)
		accepted = append(accepted, env.check(t, what)...)
		accepted = append(accepted, store.check(t, what)...)
	}

	// #1: 200 MB of formatted message from a few hundred bytes gzip'd.
	const reps, paramLen = 40_000, 5_000
	braces := hostileEvent(eventID(3, 0), `,"logentry":{"message":"`+strings.Repeat("{0}", reps)+`","params":["`+strings.Repeat("X", paramLen)+`"]}`)
	named := hostileEvent(eventID(3, 1), `,"logentry":{"message":"`+strings.Repeat("%(a)s", reps)+`","params":{"a":"`+strings.Repeat("X", paramLen)+`"}}`)
	gz := map[string]string{"Content-Encoding": "gzip"}
	during("logentry_bomb", func() {
		attack(t, p, "logentry {0}×40000 with a 5 kB parameter", envURL, gzipped(t, envelopeOf(`{}`, sizedItem("event", braces))), gz)
		attack(t, p, "logentry %(a)s×40000 with a 5 kB map parameter", envURL, gzipped(t, envelopeOf(`{}`, sizedItem("event", named))), gz)
		attack(t, p, "logentry {0}×40000 through /store/", storeURL, gzipped(t, []byte(braces)), gz)
	})
	requireRSSBound(t, p, "after the logentry bombs")

	// #4: 60,000 extra keys, tags and log attributes.
	keys := func(format string) string {
		var b strings.Builder
		for i := range 60_000 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, format, i)
		}
		return b.String()
	}
	during("keys_60000", func() {
		attack(t, p, "60,000 extra keys", envURL, gzipped(t, envelopeOf(`{}`, sizedItem("event", hostileEvent(eventID(4, 0), `,"message":"m","extra":{`+keys(`"k%d":1`)+`}`)))), gz)
		attack(t, p, "60,000 tags", envURL, gzipped(t, envelopeOf(`{}`, sizedItem("event", hostileEvent(eventID(4, 1), `,"message":"m","tags":{`+keys(`"t%d":"v"`)+`}`)))), gz)
		logs := `{"items":[{"timestamp":1795644001.5,"level":"info","body":"b","attributes":{` + keys(`"a%d":{"value":"v","type":"string"}`) + `}}]}`
		attack(t, p, "60,000 log attributes", envURL, gzipped(t, envelopeOf(`{}`, sizedItem("log", logs))), gz)
	})

	// #2: every slot held by a wrong key's headers, without a body.
	during("wrong_key_slots", func() {
		release := holdSlots(t, addr, 16)
		time.Sleep(4 * canaryDeadline / 2)
		release()
	})

	// #7: a 5 MB event to /store/: refused, or written.
	const bigMarker = "hostile-big-store-event"
	big := hostileEvent(eventID(5, 0), `,"message":"`+bigMarker+`","extra":{"blob":"`+strings.Repeat("b", 5<<20)+`"}`)
	var bigStatus int
	during("store_5MB", func() {
		bigStatus = attack(t, p, "5 MB event to /store/", storeURL, []byte(big), nil)
	})
	requireRSSBound(t, p, "after every attack")

	// Nothing answered 200 is lost: every accepted canary, and the big
	// event if it was accepted, is in the logs file.
	logsFile := filepath.Join(dir, "logs.jsonl")
	var missing []string
	waitFor(15*time.Second, func() bool {
		data, err := os.ReadFile(logsFile)
		if err != nil {
			return false
		}
		missing = missing[:0]
		for _, m := range accepted {
			if !bytes.Contains(data, []byte(`"`+m+`"`)) {
				missing = append(missing, m)
			}
		}
		if bigStatus == http.StatusOK && !bytes.Contains(data, []byte(bigMarker)) {
			missing = append(missing, bigMarker)
		}
		return len(missing) == 0
	})
	assert.Emptyf(t, missing, "answered 200 but not in the logs file (of %d accepted)", len(accepted))
	if bigStatus == http.StatusOK {
		t.Logf("the 5 MB event was answered 200; it is %s the logs file", map[bool]string{true: "in", false: "NOT in"}[!contains(missing, bigMarker)])
	}
	assert.False(t, bigStatus == http.StatusOK && contains(missing, bigMarker),
		"#7: a 5 MB event to /store/ was answered 200 and then dropped")

	// SIGTERM ends it within the harness's 30 s.
	p.stop(t)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// freePort is the port of a free loopback address.
func freePort(t *testing.T) (addr string, port int) {
	addr = testnet.FreeLoopbackAddr(t)
	_, p, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	port, err = strconv.Atoi(p)
	require.NoError(t, err)
	return addr, port
}

// stopWithin sends SIGTERM and reports whether the collector exited within
// d (the FIFO defect blocks shutdown).
func (p *collectorProcess) stopWithin(d time.Duration) bool {
	if p.exited() {
		return true
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// readableFramesConfig is examples/readable-frames.yaml as shipped, with
// its addresses, directories and backend replaced by the test's, and its
// commented debuginfod lines switched on against a stand-in.
func readableFramesConfig(t *testing.T, receiver, otlpGRPC, otlpHTTP, symbols, debuginfod, cache, backend string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "examples", "readable-frames.yaml"))
	require.NoError(t, err)
	cfg := string(raw)
	for _, r := range []struct{ old, new string }{
		{"0.0.0.0:8000", receiver},
		{"0.0.0.0:4317", otlpGRPC},
		{"0.0.0.0:4318", otlpHTTP},
		{"/srv/symbols", symbols},
		{`["${env:SENTRY_PUBLIC_KEY}"]`, "[" + yamlQuote(testKey) + "]"},
		{"${env:PROFILES_OTLP_ENDPOINT}", backend},
		{"      # debuginfod_urls: [https://debuginfod.debian.net]", "      debuginfod_urls: [" + yamlQuote(debuginfod) + "]"},
		{"      # cache_directory: /var/cache/otelcol/debuginfod", "      cache_directory: " + yamlQuote(cache)},
		// The example's 5 s batching would only slow the count.
		{"flush_timeout: 5s", "flush_timeout: 200ms"},
	} {
		require.Containsf(t, cfg, r.old, "examples/readable-frames.yaml changed: %q is not in it", r.old)
		cfg = strings.ReplaceAll(cfg, r.old, r.new)
	}
	return cfg
}

// nodeFrameChunk is a V2 chunk of @sentry/profiling-node with one sample
// per frame, each under (root), with a chunk id of its own.
func nodeFrameChunk(chunkID string, frames []string) string {
	var samples, stacks []string
	for i := range frames {
		samples = append(samples, fmt.Sprintf(`{"stack_id":%d,"thread_id":"0","timestamp":%d.%03d}`, i, 1795000000+i/1000, i%1000))
		stacks = append(stacks, fmt.Sprintf(`[%d,0]`, i+1))
	}
	return fmt.Sprintf(`{"version":"2","chunk_id":%q,"profiler_id":"4d229f1d3807421ba62a5f8bc295d836",`+
		`"platform":"node","release":"app@1.0.0","client_sdk":{"name":"sentry.javascript.node","version":"11.1.0"},`+
		`"profile":{"samples":[%s],"stacks":[%s],"frames":[{"function":"(root)"},%s],"thread_metadata":{"0":{"name":"main"}}}}`,
		chunkID, strings.Join(samples, ","), strings.Join(stacks, ","), strings.Join(frames, ","))
}

func jsFrame(function, absPath string, line, col int) string {
	return fmt.Sprintf(`{"function":%q,"abs_path":%q,"lineno":%d,"colno":%d,"in_app":true}`, function, absPath, line, col)
}

// TestHostileCollectorReadableFrames: examples/readable-frames.yaml under
// the symbolication processor's attacks, through the Sentry receiver and
// the unauthenticated OTLP receiver, a chunk canary alongside.
func TestHostileCollectorReadableFrames(t *testing.T) {
	bin := requireHostile(t)
	dir := t.TempDir()
	symbols := filepath.Join(dir, "symbols")
	maps := filepath.Join(symbols, "sourcemaps")
	for _, d := range []string{maps, filepath.Join(symbols, "proguard"), filepath.Join(symbols, "debug")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	// #6: an unminified map of 300,000 lines.
	var m strings.Builder
	m.WriteString(`{"version":3,"sources":["src/big.js"],"names":[],"mappings":"AAAA`)
	for range 300_000 - 1 {
		m.WriteString(";AACA")
	}
	m.WriteString(`"}`)
	require.NoError(t, os.WriteFile(filepath.Join(maps, "big.js.map"), []byte(m.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(maps, "app.js.map"), []byte(`{"version":3,"sources":["src/app.js"],"names":[],"mappings":"AAAA"}`), 0o644))
	// #8: FIFOs where a map and a mapping are looked for.
	require.NoError(t, syscall.Mkfifo(filepath.Join(maps, "fifo.js.map"), 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(symbols, "proguard", "7d4bc6c9-5a6b-4b3a-9d1f-0a1b2c3d4e5f.txt"), 0o644))

	var debuginfodRequests atomic.Int64
	debuginfod := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		debuginfodRequests.Add(1)
		time.Sleep(100 * time.Millisecond) // a server far away
		http.NotFound(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	dl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = debuginfod.Serve(dl) }()
	t.Cleanup(func() { _ = debuginfod.Close() })

	sink := startOTLPSink(t, 0)
	addr, otlpHTTP := testnet.FreeLoopbackAddr(t), testnet.FreeLoopbackAddr(t)
	cfg := readableFramesConfig(t, addr, testnet.FreeLoopbackAddr(t), otlpHTTP, symbols, "http://"+dl.Addr().String(), filepath.Join(dir, "cache"), sink.url)
	p := startCollector(t, bin, dir, cfg)
	p.waitListening(t, addr)
	p.waitListening(t, otlpHTTP)
	envURL := envelopeURL("http://" + addr)
	otlpURL := "http://" + otlpHTTP + "/v1development/profiles"

	var acceptedSamples atomic.Int64
	send := func(name, platform, chunk string, samples int) {
		item := part{header: `{"type":"profile_chunk","platform":"` + platform + `"}`, payload: chunk}
		if attack(t, p, name, envURL, envelopeOf(`{}`, item), nil) == http.StatusOK {
			acceptedSamples.Add(int64(samples))
		}
	}
	sendOTLP := func(name string, chunk string, samples int) {
		pd := chunkProfiles(t, chunk)
		body, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalProto()
		require.NoError(t, err)
		if attack(t, p, name+" over OTLP", otlpURL, body, map[string]string{"Content-Type": "application/x-protobuf"}) == http.StatusOK {
			acceptedSamples.Add(int64(samples))
		}
	}
	during := func(what string, run func()) {
		t.Helper()
		c := startCanary("chunk", func(client *http.Client, i int) (int, string, error) {
			id := fmt.Sprintf("%032x", 0xc0de0000+i)
			chunk := nodeFrameChunk(id, []string{jsFrame("f", "/srv/app/app.js", 1, 1)})
			status, _, err := postRaw(client, envURL, envelopeOf(`{}`, part{header: `{"type":"profile_chunk","platform":"node"}`, payload: chunk}), nil)
			return status, id, err
		})
		// Through the OTLP receiver the pipeline runs before the answer:
		// a processor held by an attack shows here.
		o := startCanary("otlp", func(client *http.Client, i int) (int, string, error) {
			id := fmt.Sprintf("%032x", 0x0c0de0000+i)
			body, err := pprofileotlp.NewExportRequestFromProfiles(chunkProfiles(t, nodeFrameChunk(id, []string{jsFrame("f", "/srv/app/app.js", 1, 1)}))).MarshalProto()
			if err != nil {
				return 0, "", err
			}
			status, _, err := postRaw(client, otlpURL, body, map[string]string{"Content-Type": "application/x-protobuf"})
			return status, id, err
		})
		time.Sleep(2 * canaryInterval)
		run()
		time.Sleep(2 * canaryInterval)
		acceptedSamples.Add(int64(len(c.check(t, what))))
		acceptedSamples.Add(int64(len(o.check(t, what))))
	}

	// #3: one frame path of 64,000 components (128 KiB).
	deep := jsFrame("f", "/"+strings.Repeat("a/", 64_000)+"app.js", 1, 1)
	during("path_components", func() {
		send("a frame path of 64,000 components", "node", nodeFrameChunk(fmt.Sprintf("%032x", 0xa1), []string{deep}), 1)
		sendOTLP("a frame path of 64,000 components", nodeFrameChunk(fmt.Sprintf("%032x", 0xa2), []string{deep}), 1)
	})

	// #6: 4,000 distinct frames against the 300,000-line map.
	frames := make([]string, 4000)
	for i := range frames {
		frames[i] = jsFrame(fmt.Sprintf("f%d", i), "/srv/app/big.js", 299_000+i/4, 1+i%4)
	}
	during("frames_per_map", func() {
		send("4,000 frames against a 300,000-line map", "node", nodeFrameChunk(fmt.Sprintf("%032x", 0xb1), frames), len(frames))
	})

	// #5: 40 invented GNU build ids in one envelope.
	before := debuginfodRequests.Load()
	during("build_ids", func() {
		send("40 invented build ids", "native", nativeBuildIDChunk(40), 40)
	})
	// The chunk is held for its spans (links::wait, 5 s) before the
	// processor sees it; the requests are counted once no new one has
	// come for 5 s.
	last, lastChange := before, time.Now()
	waitFor(90*time.Second, func() bool {
		if n := debuginfodRequests.Load(); n != last {
			last, lastChange = n, time.Now()
		}
		return last > before && time.Since(lastChange) > 5*time.Second
	})
	made := debuginfodRequests.Load() - before
	t.Logf("40 invented build ids: %d debuginfod requests", made)
	assert.LessOrEqualf(t, made, int64(32), "#5: 40 invented build ids in one envelope made %d debuginfod requests", made)

	// #8: FIFOs named like a map and a mapping.
	during("fifo", func() {
		send("a frame whose map is a FIFO", "node", nodeFrameChunk(fmt.Sprintf("%032x", 0xd1), []string{jsFrame("f", "/srv/app/fifo.js", 1, 1)}), 1)
		// A debug id no map has: the directories are scanned for it,
		// FIFO included.
		scan := strings.Replace(nodeFrameChunk(fmt.Sprintf("%032x", 0xd2), []string{jsFrame("f", "/srv/app/unknown.js", 1, 1)}),
			`"profile":`, `"debug_meta":{"images":[{"type":"sourcemap","code_file":"/srv/app/unknown.js","debug_id":"0b3f2c1d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"}]},"profile":`, 1)
		send("a debug id that makes the processor scan a directory holding a FIFO", "node", scan, 1)
		// The ProGuard mapping named by the profile is a FIFO.
		android := `{"version":"2","chunk_id":"` + fmt.Sprintf("%032x", 0xd3) + `","profiler_id":"4d229f1d3807421ba62a5f8bc295d836",` +
			`"platform":"android","release":"shop@1.0.0","client_sdk":{"name":"sentry.java.android","version":"8.0.0"},` +
			`"profile":{"samples":[{"stack_id":0,"thread_id":"1","timestamp":1795000000.25}],"stacks":[[0]],"frames":[{"function":"a","module":"a.a","lineno":2,"in_app":true}],"thread_metadata":{"1":{"name":"main"}}},` +
			`"debug_meta":{"images":[{"type":"proguard","uuid":"7d4bc6c9-5a6b-4b3a-9d1f-0a1b2c3d4e5f"}]}}`
		send("a profile whose ProGuard mapping is a FIFO", "android", android, 1)
	})
	requireRSSBound(t, p, "readable frames, after every attack")

	// Nothing answered 200 is lost: every accepted sample reaches the
	// backend.
	want := acceptedSamples.Load()
	waitFor(60*time.Second, func() bool { return sink.samples.Load() >= want })
	assert.GreaterOrEqualf(t, sink.samples.Load(), want, "samples answered 200 but not delivered to the backend within 60 s")

	// #8: SIGTERM ends it even with a reader blocked on a FIFO.
	assert.True(t, p.stopWithin(30*time.Second), "#8: the collector did not stop within 30 s of SIGTERM (a FIFO among the symbols blocks it)")
}

// nativeBuildIDChunk is a chunk of sentry-native with one frame in each of
// n images, each naming a build id no file or server has.
func nativeBuildIDChunk(n int) string {
	var samples, stacks, frames, images []string
	for i := range n {
		base := uint64(0x5555_0000_0000) + uint64(i)<<24
		samples = append(samples, fmt.Sprintf(`{"stack_id":%d,"thread_id":"1","timestamp":1795000000.%03d}`, i, i))
		stacks = append(stacks, fmt.Sprintf(`[%d]`, i))
		frames = append(frames, fmt.Sprintf(`{"instruction_addr":"%#x"}`, base+0x1040))
		images = append(images, fmt.Sprintf(`{"type":"elf","code_file":"/usr/lib/lib%d.so","code_id":"%040x","image_addr":"%#x","image_size":1048576}`, i, i+1, base))
	}
	return fmt.Sprintf(`{"version":"2","chunk_id":"%032x","profiler_id":"4d229f1d3807421ba62a5f8bc295d836",`+
		`"platform":"native","release":"spin@1.0.0","client_sdk":{"name":"sentry.native","version":"0.7.0"},`+
		`"profile":{"samples":[%s],"stacks":[%s],"frames":[%s],"thread_metadata":{"1":{"name":"main"}}},"debug_meta":{"images":[%s]}}`,
		0xe1, strings.Join(samples, ","), strings.Join(stacks, ","), strings.Join(frames, ","), strings.Join(images, ","))
}

// chunkProfiles is the OTLP form of a chunk, as another collector or a
// converter would send it.
func chunkProfiles(t *testing.T, chunk string) pprofile.Profiles {
	t.Helper()
	prof, err := sentry.DecodeProfile([]byte(chunk))
	require.NoError(t, err)
	return profilestest.ToProfiles([]profilesin.DecodedProfile{{Profile: prof}}, profilesin.ReceiveOptions{})
}

// misbehavingSentry is the Sentry an exporter sends to, misbehaving as its
// mode says: slow, redirecting elsewhere, refusing as too large, resetting
// connections, rate limiting for longer than the retries allow. It records which canary
// functions reached it.
type misbehavingSentry struct {
	url   string
	other string // where it redirects to

	mu            sync.Mutex
	mode          string
	seen          map[string]bool
	leakedAuth    int // requests at the other host that carried the key
	otherRequests int
}

func startMisbehavingSentry(t *testing.T) *misbehavingSentry {
	t.Helper()
	s := &misbehavingSentry{seen: map[string]bool{}, mode: "accept"}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.otherRequests++
		if strings.Contains(r.Header.Get("X-Sentry-Auth"), exportKey) || strings.Contains(r.URL.RawQuery, exportKey) || r.Header.Get("Authorization") != "" {
			s.leakedAuth++
		}
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(other.Close)
	// Another host: the same loopback address under another name, so
	// that a client comparing host names sees a different one.
	s.other = strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *misbehavingSentry) setMode(m string) {
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
}

func (s *misbehavingSentry) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	mode := s.mode
	s.mu.Unlock()
	switch mode {
	case "slow":
		time.Sleep(3 * time.Second)
	case "redirect307", "redirect302":
		code := map[string]int{"redirect307": http.StatusTemporaryRedirect, "redirect302": http.StatusFound}[mode]
		http.Redirect(w, r, s.other+r.URL.RequestURI(), code)
		return
	case "413":
		http.Error(w, `{"detail":"envelope exceeds size limit"}`, http.StatusRequestEntityTooLarge)
		return
	case "reset":
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				if tc, ok := c.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
				_ = c.Close()
				return
			}
		}
	case "ratelimit":
		w.Header().Set("Retry-After", "8")
		w.Header().Set("X-Sentry-Rate-Limits", "8:profile_chunk;profile_chunk_ui:key:ratelimited")
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	body, err := testnet.RequestBody(r)
	if err == nil {
		s.mu.Lock()
		for _, m := range canaryFunction.FindAll(body, -1) {
			s.seen[string(m)] = true
		}
		s.mu.Unlock()
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(`{}`))
}

var canaryFunction = regexp.MustCompile(`canary_[0-9a-z_]+`)

// exporterConfig is examples/otlp-to-sentry.yaml's shape: the OTLP
// receiver, the sentryprofile exporter with its queue and retries (a 5 s
// max_elapsed_time, so that an 8 s rate limit outlasts it), and the
// collector's own metrics on a Prometheus endpoint.
func exporterConfig(otlpHTTP, dsn, metricsHost string, metricsPort int) string {
	return fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
processors:
  memory_limiter:
    check_interval: 1s
    limit_percentage: 80
    spike_limit_percentage: 20
exporters:
  sentryprofile:
    dsn: %s
    platform: native
    timeout: 5s
    sending_queue:
      enabled: true
      queue_size: 1000
      batch:
        enabled: false
    retry_on_failure:
      enabled: true
      initial_interval: 100ms
      max_interval: 1s
      max_elapsed_time: 5s
service:
  telemetry:
    metrics:
      level: detailed
      readers:
        - pull:
            exporter:
              prometheus:
                host: %s
                port: %d
  pipelines:
    profiles:
      receivers: [otlp]
      processors: [memory_limiter]
      exporters: [sentryprofile]
`, yamlQuote(otlpHTTP), yamlQuote(dsn), yamlQuote(metricsHost), metricsPort)
}

// droppedCount sums the exporter's own count of the chunks that will never
// reach Sentry (exporter_sentryprofile_chunks_dropped, every reason).
func droppedCount(t *testing.T, metricsURL string) float64 {
	t.Helper()
	resp, err := http.Get(metricsURL)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	var sum float64
	for _, line := range strings.Split(string(text), "\n") {
		if !strings.HasPrefix(line, "otelcol_exporter_sentryprofile_chunks_dropped") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				sum += v
			}
		}
	}
	return sum
}

// TestHostileCollectorExporter: examples/otlp-to-sentry.yaml's pipeline
// against a misbehaving Sentry, and the exporter's attacks, an OTLP canary
// alongside.
func TestHostileCollectorExporter(t *testing.T) {
	bin := requireHostile(t)
	dir := t.TempDir()
	sentryStandIn := startMisbehavingSentry(t)
	otlpHTTP := testnet.FreeLoopbackAddr(t)
	metricsAddr, metricsPort := freePort(t)
	metricsHost, _, _ := net.SplitHostPort(metricsAddr)
	dsn := "http://" + exportKey + "@" + strings.TrimPrefix(sentryStandIn.url, "http://") + "/7"
	p := startCollector(t, bin, dir, exporterConfig(otlpHTTP, dsn, metricsHost, metricsPort))
	p.waitListening(t, otlpHTTP)
	otlpURL := "http://" + otlpHTTP + "/v1development/profiles"
	protobuf := map[string]string{"Content-Type": "application/x-protobuf"}

	var accepted []string
	lastPhase := 0 // canaries accepted in the last phase
	during := func(what string, run func()) {
		t.Helper()
		c := startCanary("otlp", func(client *http.Client, i int) (int, string, error) {
			name := fmt.Sprintf("canary_%s_%d", what, i)
			// Two samples: Sentry refuses a chunk without a thread of two.
			frame := jsFrame(name, "/srv/app/app.js", 1, 1)
			body, err := pprofileotlp.NewExportRequestFromProfiles(chunkProfiles(t, nodeFrameChunk(fmt.Sprintf("%032x", 0x0ca0000+i), []string{frame, frame}))).MarshalProto()
			if err != nil {
				return 0, "", err
			}
			status, _, err := postRaw(client, otlpURL, body, protobuf)
			return status, name, err
		})
		time.Sleep(2 * canaryInterval)
		run()
		time.Sleep(2 * canaryInterval)
		got := c.check(t, what)
		lastPhase = len(got)
		if what == "bombs" || what == "ratelimit" {
			accepted = append(accepted, got...)
		}
	}

	// #9: a long string named by many functions, and aggregated values
	// of 2^62 in many resources.
	during("bombs", func() {
		name := strings.Repeat("n", 1<<20)
		frames := make([]string, 400)
		for i := range frames {
			frames[i] = jsFrame(name, fmt.Sprintf("/srv/app/f%d.js", i), 1, 1)
		}
		pd := chunkProfiles(t, nodeFrameChunk(fmt.Sprintf("%032x", 0xf1), frames))
		body, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalProto()
		require.NoError(t, err)
		attack(t, p, "a 1 MiB string named by 400 functions", otlpURL, body, protobuf)

		var decoded []profilesin.DecodedProfile
		for i := range 8 {
			prof, err := sentry.DecodeProfile([]byte(strings.Replace(nodeFrameChunk(fmt.Sprintf("%032x", 0xf2+i), []string{jsFrame("f", "/srv/app/app.js", 1, 1)}),
				`"release":"app@1.0.0"`, fmt.Sprintf(`"release":"app@%d"`, i), 1)))
			require.NoError(t, err)
			decoded = append(decoded, profilesin.DecodedProfile{Profile: prof})
		}
		agg := profilestest.ToProfiles(decoded, profilesin.ReceiveOptions{})
		for _, rp := range agg.ResourceProfiles().All() {
			for _, sp := range rp.ScopeProfiles().All() {
				for _, prof := range sp.Profiles().All() {
					for _, s := range prof.Samples().All() {
						s.TimestampsUnixNano().FromRaw(nil)
						s.Values().FromRaw([]int64{1 << 62})
					}
				}
			}
		}
		body, err = pprofileotlp.NewExportRequestFromProfiles(agg).MarshalProto()
		require.NoError(t, err)
		t.Logf("aggregated values: %d resources in %d bytes", agg.ResourceProfiles().Len(), len(body))
		attack(t, p, "8 resources with a sample value of 2^62", otlpURL, body, protobuf)
		time.Sleep(5 * time.Second) // the queue sends them
	})
	requireRSSBound(t, p, "exporter, after the bombs")

	// Nothing the collector answered 200 for while Sentry accepted is lost.
	var missing []string
	waitFor(30*time.Second, func() bool {
		sentryStandIn.mu.Lock()
		defer sentryStandIn.mu.Unlock()
		missing = missing[:0]
		for _, name := range accepted {
			if !sentryStandIn.seen[name] {
				missing = append(missing, name)
			}
		}
		return len(missing) == 0
	})
	assert.Emptyf(t, missing, "canaries answered 200 that never reached Sentry (of %d)", len(accepted))

	// Faults of the upstream: the collector stays up and keeps answering.
	for _, mode := range []string{"slow", "413", "reset"} {
		sentryStandIn.setMode(mode)
		during(mode, func() { time.Sleep(5 * time.Second) })
		require.Falsef(t, p.exited(), "the collector exited while Sentry answered %s", mode)
	}

	// #10: redirects to another host must not carry the key there.
	for _, mode := range []string{"redirect307", "redirect302"} {
		sentryStandIn.setMode(mode)
		during(mode, func() { time.Sleep(3 * time.Second) })
	}
	sentryStandIn.mu.Lock()
	leaked, otherRequests := sentryStandIn.leakedAuth, sentryStandIn.otherRequests
	sentryStandIn.mu.Unlock()
	t.Logf("redirects: %d requests reached the other host, %d with the DSN key", otherRequests, leaked)
	assert.Zerof(t, leaked, "#10: the exporter followed a redirect to another host with X-Sentry-Auth (%d requests)", leaked)

	// #11: a rate limit (8 s) longer than max_elapsed_time (5 s): what
	// was sent meanwhile is held and delivered when the limit ends, or
	// counted as dropped; never lost uncounted.
	metricsURL := "http://" + metricsAddr + "/metrics"
	// What earlier faults retry runs out first (max_elapsed_time 5 s).
	time.Sleep(6 * time.Second)
	sentryStandIn.setMode("ratelimit")
	before := droppedCount(t, metricsURL)
	var limited []string
	during("ratelimit", func() { time.Sleep(3 * time.Second) })
	limited = accepted[len(accepted)-lastPhase:]
	sentryStandIn.setMode("accept")
	var lost []string
	var dropped float64
	waitFor(40*time.Second, func() bool {
		sentryStandIn.mu.Lock()
		lost = lost[:0]
		for _, name := range limited {
			if !sentryStandIn.seen[name] {
				lost = append(lost, name)
			}
		}
		sentryStandIn.mu.Unlock()
		dropped = droppedCount(t, metricsURL) - before
		return float64(len(lost)) <= dropped
	})
	t.Logf("rate limited for 8 s: %d canaries sent, %d not delivered, dropped counter +%.0f", len(limited), len(lost), dropped)
	assert.LessOrEqualf(t, float64(len(lost)), dropped, "#11: chunks sent during a rate limit longer than max_elapsed_time were neither delivered nor counted as dropped: %v", lost)
	requireRSSBound(t, p, "exporter, after every attack")
	p.stop(t)
}
