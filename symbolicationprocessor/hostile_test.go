package symbolicationprocessor

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor/internal/metadatatest"
)

// spinBinary is a small C program compiled with a build id and DWARF.
type spinBinary struct {
	path    string
	buildID string
	fnAddr  uint64 // spin_work's file address
}

// compileSpin builds spinBinary in dir/debug; the test is skipped without
// gcc, nm or readelf.
func compileSpin(t *testing.T, dir string) spinBinary {
	t.Helper()
	for _, tool := range []string{"gcc", "nm", "readelf"} {
		testenv.LookPath(t, tool, "gcc, binutils")
	}
	src := filepath.Join(dir, "spin.c")
	require.NoError(t, os.WriteFile(src, []byte("int spin_work(int n) {\n  int s = 0;\n  for (int i = 0; i < n; i++) s += i * i;\n  return s;\n}\nint main(void) { return spin_work(3) == 5; }\n"), 0o644))
	bin := filepath.Join(dir, "debug", "spin")
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	out, err := exec.Command("gcc", "-g", "-O0", "-fPIE", "-pie", "-Wl,--build-id", "-o", bin, src).CombinedOutput()
	require.NoError(t, err, "%s", out)
	syms, err := exec.Command("nm", bin).Output()
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^([0-9a-f]+) T spin_work$`).FindSubmatch(syms)
	require.NotNil(t, m)
	fnAddr, err := strconv.ParseUint(string(m[1]), 16, 64)
	require.NoError(t, err)
	notes, err := exec.Command("readelf", "-n", bin).Output()
	require.NoError(t, err)
	id := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(notes)
	require.NotNil(t, id)
	return spinBinary{path: bin, buildID: string(id[1]), fnAddr: fnAddr}
}

// nativeImage is one binary of a native chunk and the frame in it.
type nativeImage struct {
	buildID   string
	imageAddr uint64
	addr      uint64
}

// nativeChunk is a V2 chunk of sentry-native with one frame per image.
func nativeChunk(images []nativeImage) []byte {
	var samples, stacks, frames, imgs []string
	for i, im := range images {
		samples = append(samples, fmt.Sprintf(`{"stack_id":%d,"thread_id":"1","timestamp":%d.5}`, i, 1764000000+i))
		stacks = append(stacks, fmt.Sprintf(`[%d]`, i))
		frames = append(frames, fmt.Sprintf(`{"instruction_addr":"%#x"}`, im.addr))
		imgs = append(imgs, fmt.Sprintf(`{"type":"elf","code_file":"/usr/lib/lib%d.so","code_id":%q,"image_addr":"%#x","image_size":1048576}`, i, im.buildID, im.imageAddr))
	}
	return fmt.Appendf(nil, `{"version":"2","chunk_id":"0432a0a4c25f4697bf9f0a2fcbe6a814","profiler_id":"4d229f1d3807421ba62a5f8bc295d836",
"platform":"native","release":"spin@1.0.0","client_sdk":{"name":"sentry.native","version":"0.7.0"},
"profile":{"samples":[%s],"stacks":[%s],"frames":[%s],"thread_metadata":{"1":{"name":"main"}}},
"debug_meta":{"images":[%s]}}`, strings.Join(samples, ","), strings.Join(stacks, ","), strings.Join(frames, ","), strings.Join(imgs, ","))
}

// slowDebuginfod is a debuginfod server that answers after a delay,
// serving the files it has and 404 for the rest, and counts the requests
// it answers at once.
type slowDebuginfod struct {
	delay time.Duration
	files map[string]string // build id → file

	mu                          sync.Mutex
	requests, inFlight, maxSeen int
}

func (s *slowDebuginfod) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	s.inFlight++
	s.maxSeen = max(s.maxSeen, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	select {
	case <-time.After(s.delay):
	case <-r.Context().Done():
		return
	}
	id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/buildid/"), "/debuginfo")
	if f, ok := s.files[id]; ok {
		http.ServeFile(w, r, f)
		return
	}
	http.NotFound(w, r)
}

func (s *slowDebuginfod) counts() (requests, maxInFlight int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.maxSeen
}

// TestInventedBuildIDsDoNotHoldThePipeline: a 4 KiB envelope naming 40
// made-up GNU build ids made 40 sequential debuginfod requests in the
// pipeline (8.1 s against a server answering in 0.2 s; each may take
// native::timeout, 2 minutes). Now a batch waits at most max_batch_wait,
// starts at most max_fetches_per_batch fetches, at most
// max_concurrent_fetches in flight, and a later batch resolves what the
// background fetched.
func TestInventedBuildIDsDoNotHoldThePipeline(t *testing.T) {
	spin := compileSpin(t, t.TempDir())
	server := &slowDebuginfod{delay: 200 * time.Millisecond, files: map[string]string{spin.buildID: spin.path}}
	srv := httptest.NewServer(server)
	defer srv.Close()

	const invented, perBatch, inFlight, wait = 40, 16, 4, 500 * time.Millisecond
	var images []nativeImage
	for i := range invented {
		base := uint64(0x7f00_0000_0000) + uint64(i)<<24
		images = append(images, nativeImage{buildID: fmt.Sprintf("%040x", 0xdead0000+i), imageAddr: base, addr: base + 0x1000})
	}
	// The real binary is among the first batch's fetches, which cannot
	// all end within its wait.
	const spinBase = 0x5555_0000_0000
	images[perBatch-1] = nativeImage{buildID: spin.buildID, imageAddr: spinBase, addr: spinBase + spin.fnAddr + 4}
	chunk := nativeChunk(images)
	t.Logf("envelope item of %d bytes naming %d build ids", len(chunk), len(images))

	cfg := createDefaultConfig().(*Config)
	cfg.Native.DebuginfodURLs, cfg.Native.CacheDirectory = []string{srv.URL}, t.TempDir()
	cfg.Native.MaxConcurrentFetches, cfg.Native.MaxFetchesPerBatch = inFlight, perBatch
	cfg.MaxBatchWait = wait
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	p, err := NewFactory().CreateProfiles(context.Background(), metadatatest.NewSettings(tel), cfg, new(consumertest.ProfilesSink))
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()

	batch := func() (resolved bool, elapsed time.Duration) {
		pd := toProfiles(t, chunk)
		start := time.Now()
		require.NoError(t, p.ConsumeProfiles(context.Background(), pd))
		elapsed = time.Since(start)
		for _, l := range locationLines(pd) {
			if strings.HasPrefix(l, "spin_work:") {
				resolved = true
			}
		}
		return resolved, elapsed
	}
	_, elapsed := batch()
	t.Logf("first batch: %v", elapsed)
	assert.Less(t, elapsed, wait+500*time.Millisecond, "the batch waits at most max_batch_wait")
	assert.GreaterOrEqual(t, unresolved(t, tel, "pending"), int64(invented-perBatch), "frames not ready are counted pending")
	time.Sleep(time.Second) // the first batch's fetches end: 16 at 4 at a time, 0.2 s each
	requests, most := server.counts()
	assert.Equal(t, perBatch, requests, "the first batch started max_fetches_per_batch fetches")
	assert.LessOrEqual(t, most, inFlight, "requests in flight")
	assert.Greater(t, most, 1, "fetches run concurrently")

	resolved, elapsed := batch()
	t.Logf("second batch: %v", elapsed)
	assert.True(t, resolved, "the binary fetched in the background resolves the next batch")
	assert.Less(t, elapsed, wait+500*time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if n, _ := server.counts(); n >= invented {
			break
		}
		batch()
	}
	requests, most = server.counts()
	assert.Equal(t, invented, requests, "later batches fetch the rest once each: a 404 is remembered")
	assert.LessOrEqual(t, most, inFlight)
}

// unresolved is the processor's count of unresolved native frames with
// reason.
func unresolved(t *testing.T, tel *componenttest.Telemetry, reason string) int64 {
	t.Helper()
	m, err := tel.GetMetric("otelcol_processor_symbolication_frames_unresolved")
	require.NoError(t, err)
	var n int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if r, _ := dp.Attributes.Value("reason"); r.AsString() == reason {
			n += dp.Value
		}
	}
	return n
}

// TestShutdownEndsAWaitingBatch: a batch waiting for a fetch from a
// server that does not answer ends with Shutdown, and so does the fetch.
func TestShutdownEndsAWaitingBatch(t *testing.T) {
	server := &slowDebuginfod{delay: time.Hour}
	srv := httptest.NewServer(server)
	defer srv.Close()
	cfg := createDefaultConfig().(*Config)
	cfg.Native.DebuginfodURLs, cfg.Native.CacheDirectory = []string{srv.URL}, t.TempDir()
	cfg.MaxBatchWait = time.Hour
	p, err := NewFactory().CreateProfiles(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, new(consumertest.ProfilesSink))
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	pd := toProfiles(t, nativeChunk([]nativeImage{{buildID: strings.Repeat("ab", 20), imageAddr: 0x1000_0000, addr: 0x1000_1000}}))
	done := make(chan error, 1)
	go func() {
		done <- p.ConsumeProfiles(context.Background(), pd)
	}()
	require.Eventually(t, func() bool { n, _ := server.counts(); return n == 1 }, 5*time.Second, 5*time.Millisecond, "the fetch started")
	start := time.Now()
	require.NoError(t, p.Shutdown(context.Background()))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the batch still waits after Shutdown")
	}
	assert.Less(t, time.Since(start), 5*time.Second)
	require.Eventually(t, func() bool {
		_, _ = server.counts()
		server.mu.Lock()
		defer server.mu.Unlock()
		return server.inFlight == 0
	}, 5*time.Second, 5*time.Millisecond, "Shutdown ended the fetch")
}

// TestFIFOInSymbolsDirectories: a FIFO named *.js.map or *.txt in a
// symbols directory blocked the debug-id or UUID scan in open(2) while it
// held the resolver's lock: ConsumeProfiles never returned (the
// sentryprofile receiver then never answers), and Shutdown did not end
// it. Start, ConsumeProfiles and Shutdown now all end in time.
func TestFIFOInSymbolsDirectories(t *testing.T) {
	build := readBuild(t)
	maps, mappings := t.TempDir(), t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(maps, "static"), 0o755))
	mapJSON, err := os.ReadFile(testBundle + ".map")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(maps, "static", "app.min.js.map"), mapJSON, 0o644))
	for _, p := range []string{filepath.Join(maps, "a.js.map"), filepath.Join(maps, "b.js"), filepath.Join(mappings, "c.txt"), filepath.Join(mappings, cartUUID+".txt")} {
		require.NoError(t, syscall.Mkfifo(p, 0o644))
	}
	cfg := createDefaultConfig().(*Config)
	cfg.SourceMaps.Directories, cfg.ProGuard.Directories = []string{maps}, []string{mappings}
	cfg.MaxBatchWait = time.Minute // the FIFO must not be what ends the wait
	p, err := NewFactory().CreateProfiles(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, new(consumertest.ProfilesSink))
	require.NoError(t, err)

	line, col, _ := build.v8(t, "(t){for(let e=2;e*e")
	batches := []pprofile.Profiles{
		toProfiles(t, nodeChunk([]string{frameJSON("f", "/static/app.min.js", line, col)},
			fmt.Sprintf(`{"type":"sourcemap","code_file":"app:///static/app.min.js","debug_id":%q}`, build.debugID))),
		toProfiles(t, androidChunk(cartUUID, `{"function":"a","module":"a.a","lineno":2}`)),
	}
	within(t, "Start", func() { require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost())) })
	for i, pd := range batches {
		within(t, fmt.Sprintf("ConsumeProfiles %d", i), func() { require.NoError(t, p.ConsumeProfiles(context.Background(), pd)) })
	}
	wantLine, _ := build.at(t, "function isPrime", "isPrime")
	assert.Contains(t, locationLines(batches[0]), "isPrime:"+strconv.Itoa(wantLine)+" (src/app.js)", "the map beside the FIFOs resolves")
	within(t, "Shutdown", func() { require.NoError(t, p.Shutdown(context.Background())) })
}

const cartUUID = "7d4bc6c9-5a6b-4b3a-9d1f-0a1b2c3d4e5f"

// within fails the test when fn takes more than 10 seconds.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return within 10 s", what)
	}
}

// TestProGuardLinksStayWithinTheDirectory: a mapping linked from outside
// the proguard directory was read (the scan followed any link); now only
// links whose real path stays within the directories are.
func TestProGuardLinksStayWithinTheDirectory(t *testing.T) {
	tests := []struct {
		name     string
		layout   func(t *testing.T, dir, outside string)
		resolved bool
	}{
		{name: "mapping linked from outside", layout: func(t *testing.T, dir, outside string) {
			require.NoError(t, os.WriteFile(filepath.Join(outside, "mapping.txt"), []byte(cartMapping), 0o644))
			require.NoError(t, os.Symlink(filepath.Join(outside, "mapping.txt"), filepath.Join(dir, cartUUID+".txt")))
		}},
		{name: "directory linked from outside", layout: func(t *testing.T, dir, outside string) {
			require.NoError(t, os.WriteFile(filepath.Join(outside, "mapping.txt"), []byte(cartMapping), 0o644))
			require.NoError(t, os.Symlink(outside, filepath.Join(dir, cartUUID)))
		}},
		{name: "mapping linked within", resolved: true, layout: func(t *testing.T, dir, _ string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "builds"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "builds", "1.0.txt"), []byte(cartMapping), 0o644))
			require.NoError(t, os.Symlink(filepath.Join("builds", "1.0.txt"), filepath.Join(dir, cartUUID+".txt")))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			tt.layout(t, dir, outside)
			cfg := createDefaultConfig().(*Config)
			cfg.ProGuard.Directories = []string{dir}
			s, err := newFrameProcessor(cfg, componenttest.NewNopTelemetrySettings())
			require.NoError(t, err)
			require.NoError(t, s.start(context.Background(), componenttest.NewNopHost()))
			defer func() { require.NoError(t, s.shutdown(context.Background())) }()
			out, err := s.processProfiles(context.Background(), toProfiles(t, androidChunk(cartUUID, `{"function":"a","module":"a.a","lineno":2}`)))
			require.NoError(t, err)
			want := "a:2 ()"
			if tt.resolved {
				want = "com.example.shop.Cart.total:11 (Cart.java)"
			}
			assert.Equal(t, []string{want}, locationLines(out))
		})
	}
}
