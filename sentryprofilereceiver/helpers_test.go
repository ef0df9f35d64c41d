package sentryprofilereceiver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadatatest"
)

// testKey is the public key of every test DSN.
const testKey = "0123456789abcdef0123456789abcdef"

// Payloads written by hand, so the expectations do not come from the code
// under test. Each has three samples on one thread, none idle, so Relay's
// normalization keeps them all.
const (
	chunkPayload = `{"version":"2","chunk_id":"0432a0a4c25f4697bf9f0a2fcbe6a814",` +
		`"profiler_id":"071bfc9a1f8e4cb4a0a2e0bd1c5bde55",` +
		`"client_sdk":{"name":"sentry.python","version":"2.68.0"},"platform":"python",` +
		`"release":"shop@1.2.3","environment":"test",` +
		`"profile":{"samples":[` +
		`{"timestamp":1795000000.000,"stack_id":0,"thread_id":"1"},` +
		`{"timestamp":1795000000.010,"stack_id":1,"thread_id":"1"},` +
		`{"timestamp":1795000000.020,"stack_id":0,"thread_id":"1"}],` +
		`"stacks":[[0,1],[2,1]],` +
		`"frames":[{"function":"work","filename":"app.py","lineno":3},` +
		`{"function":"main","filename":"app.py","lineno":10},` +
		`{"function":"helper","filename":"app.py","lineno":7}],` +
		`"thread_metadata":{"1":{"name":"MainThread"}}}}`

	v1Payload = `{"version":"1","event_id":"6f6a0f0b1c1d4e5f8a9b0c1d2e3f4a5b","platform":"python",` +
		`"release":"shop@1.2.3","environment":"test","timestamp":"2026-11-20T10:00:00Z",` +
		`"device":{"architecture":"x86_64"},"os":{"name":"Linux","version":"6.1"},` +
		`"runtime":{"name":"CPython","version":"3.11.4"},` +
		`"transaction":{"id":"a2c6f3cc518c44719ee95a36f07cda36","name":"checkout",` +
		`"trace_id":"dd2619a66dba46f7939c718fdab394b6","active_thread_id":"1"},` +
		`"profile":{"samples":[` +
		`{"elapsed_since_start_ns":"0","stack_id":0,"thread_id":"1"},` +
		`{"elapsed_since_start_ns":"10000000","stack_id":1,"thread_id":"1"},` +
		`{"elapsed_since_start_ns":"20000000","stack_id":0,"thread_id":"1"}],` +
		`"stacks":[[0,1],[2,1]],` +
		`"frames":[{"function":"work","filename":"app.py","lineno":3},` +
		`{"function":"main","filename":"app.py","lineno":10},` +
		`{"function":"helper","filename":"app.py","lineno":7}],` +
		`"thread_metadata":{"1":{"name":"MainThread"}}}}`

	// chunkSamples and v1Samples are the samples in the payloads above.
	chunkSamples = 3
	v1Samples    = 3
)

// item is one envelope item for envelopeOf: its header line and payload.
type item struct {
	header  string
	payload string
}

func chunkItem(payload string) item {
	return item{header: `{"type":"profile_chunk","platform":"python"}`, payload: payload}
}

// envelopeOf writes an envelope by hand (not with the envelope package, so a
// bug there cannot hide in both the input and the expectation). Payloads go
// without `length`, as @sentry/node sends them.
func envelopeOf(header string, items ...item) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	for _, it := range items {
		b.WriteByte('\n')
		b.WriteString(it.header)
		b.WriteByte('\n')
		b.WriteString(it.payload)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// testReceiver is a started receiver and its telemetry.
type testReceiver struct {
	url       string // http://host:port
	telemetry *componenttest.Telemetry
	rcvr      *sentryReceiver
}

// startReceiver starts a receiver on a free port with the default config
// changed by mutate, and shuts it down when the test ends.
func startReceiver(t *testing.T, next xconsumer.Profiles, mutate func(*Config)) *testReceiver {
	t.Helper()
	return startReceiverLogged(t, next, mutate, nil)
}

// startReceiverLogged is startReceiver with the receiver's logger; nil logs
// to the test at debug level.
func startReceiverLogged(t *testing.T, next xconsumer.Profiles, mutate func(*Config), logger *zap.Logger) *testReceiver {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
	// The tests read what the pipeline got once the receiver answered;
	// links_test.go tests holding chunks for their spans.
	cfg.Links.Wait = 0
	if mutate != nil {
		mutate(cfg)
	}
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := metadatatest.NewSettings(tel)
	// Debug level: the item drops the receiver logs appear with a failure.
	set.Logger = zaptest.NewLogger(t, zaptest.Level(zap.DebugLevel))
	if logger != nil {
		set.Logger = logger
	}
	r, err := NewFactory().CreateProfiles(context.Background(), set, cfg, next)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	rcvr := r.(*handle).shared.inner
	return &testReceiver{url: "http://" + rcvr.listener.Addr().String(), telemetry: tel, rcvr: rcvr}
}

// response is what a test reads back: status, headers and body.
type response struct {
	status int
	header http.Header
	body   string
}

// detail returns the "detail" of a Relay-shaped error body.
func (r response) detail(t *testing.T) string {
	t.Helper()
	var body struct {
		Detail string `json:"detail"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.body), &body), "body %q", r.body)
	return body.Detail
}

// do sends one request and reads the whole response.
func do(t *testing.T, req *http.Request) response {
	t.Helper()
	resp, err := roundTrip(req)
	require.NoError(t, err)
	return resp
}

// roundTrip sends req and reads the whole answer. Unlike do it takes no
// *testing.T: a goroutine other than the test's calls it and hands the
// error back to the test's goroutine, where FailNow is allowed.
func roundTrip(req *http.Request) (response, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, fmt.Errorf("reading the answer to %s %s: %w", req.Method, req.URL.Path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(body)}, nil
}

// post sends an envelope to project 42 authenticated with testKey in the
// query, as @sentry/node and the browser SDK do.
func post(t *testing.T, tr *testReceiver, body []byte, headers map[string]string) response {
	t.Helper()
	return do(t, envelopeRequest(t, tr, body, headers))
}

// envelopeRequest is the request post sends.
func envelopeRequest(t *testing.T, tr *testReceiver, body []byte, headers map[string]string) *http.Request {
	t.Helper()
	return newRequest(t, http.MethodPost, tr.url+"/api/42/envelope/?sentry_key="+testKey+"&sentry_version=7", body, headers)
}

// answer is what roundTrip returned, sent from the goroutine that called it.
type answer struct {
	resp response
	err  error
}

// postInBackground sends req from a new goroutine and delivers its answer
// on the channel returned.
func postInBackground(req *http.Request) <-chan answer {
	out := make(chan answer, 1)
	go func() {
		resp, err := roundTrip(req)
		out <- answer{resp, err}
	}()
	return out
}

// okAnswer waits for an answer and requires it to be 200.
func okAnswer(t *testing.T, answered <-chan answer) {
	t.Helper()
	a := <-answered
	require.NoError(t, a.err)
	assert.Equal(t, http.StatusOK, a.resp.status, a.resp.body)
}

func newRequest(t *testing.T, method, url string, body []byte, headers map[string]string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, r)
	require.NoError(t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req
}

// sampleEvents counts the Sentry samples that reached the sink: the
// translator groups samples with the same stack and thread into one pprofile
// Sample with one timestamp per Sentry sample.
func sampleEvents(sink *consumertest.ProfilesSink) int {
	n := 0
	for _, pd := range sink.AllProfiles() {
		n += profilestest.SampleEvents(pd)
	}
	return n
}
