package reliability

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"
)

// testKey is the DSN public key the receivers under test accept, and
// testProject the one project they accept.
const (
	testKey     = "c0ffee00c0ffee00c0ffee00c0ffee00"
	testProject = "42"
)

// envelopeURL is the ingestion endpoint of project testProject with the key in
// the query string, as @sentry/node and the browser SDK send it.
func envelopeURL(base string) string {
	return base + "/api/" + testProject + "/envelope/?sentry_key=" + testKey + "&sentry_version=7"
}

// receiverUnderTest is a started sentryprofile receiver with everything a
// test reads back from it.
type receiverUnderTest struct {
	url       string // http://127.0.0.1:port
	telemetry *componenttest.Telemetry
	logs      *observer.ObservedLogs
}

// startReceiver starts the receiver built by the public factory on a free
// loopback port, with the test key and project configured and then mutate
// applied, and stops it when the test ends. Logs are observed at debug level.
func startReceiver(tb testing.TB, next xconsumer.Profiles, mutate func(*sentryprofilereceiver.Config)) *receiverUnderTest {
	tb.Helper()
	factory := sentryprofilereceiver.NewFactory()
	cfg := factory.CreateDefaultConfig().(*sentryprofilereceiver.Config)
	cfg.ServerConfig.NetAddr.Endpoint = testnet.FreeLoopbackAddr(tb)
	cfg.PublicKeys = append(cfg.PublicKeys, testKey)
	cfg.Projects = []string{testProject}
	// The tests read what the pipeline got as soon as the receiver
	// answered: chunks are not held for their spans.
	cfg.Links.Wait = 0
	if mutate != nil {
		mutate(cfg)
	}
	require.NoError(tb, cfg.Validate())

	tel := componenttest.NewTelemetry()
	tb.Cleanup(func() { require.NoError(tb, tel.Shutdown(context.Background())) })
	core, logs := observer.New(zapcore.DebugLevel)
	set := receivertest.NewNopSettings(factory.Type())
	set.ID = component.NewID(factory.Type())
	set.TelemetrySettings = tel.NewTelemetrySettings()
	set.Logger = zap.New(core)

	rcvr, err := factory.CreateProfiles(context.Background(), set, cfg, next)
	require.NoError(tb, err)
	require.NoError(tb, rcvr.Start(context.Background(), componenttest.NewNopHost()))
	tb.Cleanup(func() { require.NoError(tb, rcvr.Shutdown(context.Background())) })
	return &receiverUnderTest{url: "http://" + cfg.ServerConfig.NetAddr.Endpoint, telemetry: tel, logs: logs}
}

// counter returns the value of a receiver counter for one attribute value, 0
// when the metric or the data point does not exist.
func (r *receiverUnderTest) counter(tb testing.TB, metric, key, value string) int64 {
	tb.Helper()
	m, err := r.telemetry.GetMetric(metric)
	if err != nil {
		return 0
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.Truef(tb, ok, "%s is %T, want an int64 sum", metric, m.Data)
	var n int64
	for _, dp := range sum.DataPoints {
		if v, ok := dp.Attributes.Value(attribute.Key(key)); ok && v.AsString() == value {
			n += dp.Value
		}
	}
	return n
}

// counterTotal sums every data point of a receiver counter.
func (r *receiverUnderTest) counterTotal(tb testing.TB, metric string) int64 {
	tb.Helper()
	m, err := r.telemetry.GetMetric(metric)
	if err != nil {
		return 0
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.Truef(tb, ok, "%s is %T, want an int64 sum", metric, m.Data)
	var n int64
	for _, dp := range sum.DataPoints {
		n += dp.Value
	}
	return n
}

const (
	metricDiscarded = "otelcol_receiver_sentryprofile_discarded_items"
	metricIgnored   = "otelcol_receiver_sentryprofile_ignored_items"
	metricPlatform  = "otelcol_receiver_sentryprofile_platform_header_mismatches"
)

// recordingConsumer is the downstream of the receiver: it records every
// ConsumeProfiles call and keeps the data only when it answers without error,
// so a test sees both what was offered and what was delivered.
type recordingConsumer struct {
	// fail, when set, is returned by every call.
	fail error

	mu        sync.Mutex
	offered   []int // sample events per call
	delivered []pprofile.Profiles
}

var _ xconsumer.Profiles = (*recordingConsumer)(nil)

func (c *recordingConsumer) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

func (c *recordingConsumer) ConsumeProfiles(_ context.Context, pd pprofile.Profiles) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offered = append(c.offered, profilestest.SampleEvents(pd))
	if c.fail != nil {
		return c.fail
	}
	// A copy, so that nothing the receiver does after returning can change
	// what the test inspects.
	cp := pprofile.NewProfiles()
	pd.CopyTo(cp)
	c.delivered = append(c.delivered, cp)
	return nil
}

// deliveredSamples is the number of sample events delivered.
func (c *recordingConsumer) deliveredSamples() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, pd := range c.delivered {
		n += profilestest.SampleEvents(pd)
	}
	return n
}

func (c *recordingConsumer) calls() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.offered...)
}

func (c *recordingConsumer) all() []pprofile.Profiles {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]pprofile.Profiles(nil), c.delivered...)
}

// heapWatch samples the heap while a request is in flight and reports the
// peak growth over the level before it. The test client and the receiver
// share the process, so a client body is streamed from a generator rather
// than held in memory, or built before the watch starts.
type heapWatch struct {
	base uint64
	stop chan struct{}
	done chan uint64
}

func watchHeap() *heapWatch {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w := &heapWatch{base: ms.HeapInuse, stop: make(chan struct{}), done: make(chan uint64, 1)}
	go func() {
		peak := ms.HeapInuse
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			var cur runtime.MemStats
			runtime.ReadMemStats(&cur)
			peak = max(peak, cur.HeapInuse)
			select {
			case <-w.stop:
				w.done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// growth stops the watch and returns the peak heap-in-use above the start.
func (w *heapWatch) growth() uint64 {
	close(w.stop)
	peak := <-w.done
	if peak < w.base {
		return 0
	}
	return peak - w.base
}

// response is what a hostile request got back.
type response struct {
	status int
	header http.Header
	body   string
}

// send performs one request and reads the whole response. A transport error
// (the server hung up, a handler panicked) fails the test: every hostile
// input must get an HTTP answer.
func send(tb testing.TB, req *http.Request) response {
	tb.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(tb, err, "the receiver must answer every request")
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	require.NoError(tb, err)
	return response{status: resp.StatusCode, header: resp.Header, body: string(body)}
}

// repeatedByte is an endless stream of one byte: large bodies are generated
// as they are sent instead of being held by the test.
type repeatedByte byte

func (b repeatedByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// stalledReader sends nothing for delay, then ends: a client that stops
// sending in the middle of its body.
type stalledReader struct {
	delay time.Duration
	done  bool
}

func (r *stalledReader) Read([]byte) (int, error) {
	if !r.done {
		time.Sleep(r.delay)
		r.done = true
	}
	return 0, io.EOF
}
