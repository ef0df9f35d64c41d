package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// TestCollectorRunsExamples runs each example configuration for real: the
// built collector between a fake Sentry and a fake OTLP profiles backend on
// loopback, fed from its configured input, and checks that every sample
// reaches every output the example promises, through the persistent queue
// where the example has one.
func TestCollectorRunsExamples(t *testing.T) {
	bin := requireBinary(t)
	chunk := generatedChunk{
		Function:    "exampleGeneratedLeaf",
		Release:     "examples@3.0.0",
		Environment: "examples",
		Threads:     map[string]string{"11": "MainThread", "12": "worker-2"},
		PerThread:   8,
	}
	sdkEnvelope, err := newChunkEnvelope(chunk)
	require.NoError(t, err)
	otlpRequest := otlpFromEnvelope(t, sdkEnvelope)

	tests := []struct {
		config     string
		fromOTLP   bool // the input is an OTLP/HTTP request, else a Sentry envelope
		wantSentry bool
		wantOTLP   bool
		forwards   bool // Sentry gets the envelope from the receiver's forward, not from the exporter
		wantSpans  bool // the envelope also carries a transaction, whose spans reach the OTLP backend
	}{
		{config: "sentry-to-otlp.yaml", wantOTLP: true},
		{config: "sentry-traces-and-profiles.yaml", wantOTLP: true, wantSpans: true},
		{config: "otlp-to-sentry.yaml", fromOTLP: true, wantSentry: true},
		// Sentry gets the SDK's own envelope, forwarded by the receiver.
		{config: "relay-through.yaml", wantSentry: true, forwards: true, wantOTLP: true},
	}
	for _, tt := range tests {
		t.Run(tt.config, func(t *testing.T) {
			sentryAPI := newFakeSentry(t)
			backend := newFakeOTLPBackend(t)
			sdkAddr, otlpHTTP, otlpGRPC, health := testnet.FreeLoopbackAddr(t), testnet.FreeLoopbackAddr(t), testnet.FreeLoopbackAddr(t), testnet.FreeLoopbackAddr(t)
			env := []string{
				"SENTRY_DSN=http://examplekey@" + sentryAPI.addr + "/7",
				"SENTRY_PUBLIC_KEY=smoke-key",
				"SENTRY_QUEUE_DIR=" + filepath.Join(t.TempDir(), "queue"),
				"PROFILES_OTLP_ENDPOINT=http://" + backend.addr,
				"OTLP_ENDPOINT=http://" + backend.addr,
				"SENTRY_UPSTREAM=http://" + sentryAPI.addr,
			}
			args := []string{
				"--config", filepath.Join(repoRoot(t), "examples", tt.config), profilesGate,
				"--set=service::telemetry::metrics::level=none",
				"--set=extensions::health_check::endpoint=" + health,
			}
			// Listeners move to free loopback ports, and the exporters'
			// batching, seconds long in the examples, is shortened.
			listen := sdkAddr
			if tt.fromOTLP {
				listen = otlpHTTP
				args = append(args,
					"--set=receivers::otlp::protocols::http::endpoint="+otlpHTTP,
					"--set=receivers::otlp::protocols::grpc::endpoint="+otlpGRPC)
			} else {
				args = append(args, "--set=receivers::sentryprofile::endpoint="+sdkAddr)
			}
			if tt.wantSentry && !tt.forwards {
				args = append(args, "--set=exporters::sentryprofile::sending_queue::batch::flush_timeout=100ms")
			}
			if tt.wantOTLP {
				args = append(args, "--set=exporters::otlp_http::sending_queue::batch::flush_timeout=100ms")
			}
			c := startCollector(t, bin, env, args...)
			c.waitListening(t, listen)

			if tt.fromOTLP {
				postOTLP(t, otlpHTTP, otlpRequest)
			} else {
				body := sdkEnvelope
				if tt.wantSpans {
					body = withTransaction(t, sdkEnvelope)
				}
				status, answer := postEnvelope(t, sdkAddr, "1", "smoke-key", body, nil)
				require.Equal(t, http.StatusOK, status, answer)
				if tt.wantSpans {
					sent, err := readSentSpans(body)
					require.NoError(t, err)
					require.NotEmpty(t, sent)
					var got []ptrace.Span
					require.Eventually(t, func() bool {
						got = backend.spans()
						return len(got) >= len(sent)
					}, 30*time.Second, 100*time.Millisecond, "the OTLP backend never got the %d spans", len(sent))
					ids := map[string]bool{}
					for _, s := range got {
						ids[s.SpanID().String()] = true
					}
					for _, s := range sent {
						assert.True(t, ids[s.SpanID], "span %s (%q) at the OTLP backend", s.SpanID, s.Name)
					}
					assert.Len(t, got, len(sent), "spans at the OTLP backend")
				}
			}

			if tt.wantOTLP {
				var got profilesSummary
				require.Eventually(t, func() bool {
					got = summarize(backend.received()...)
					return got.SampleEvents >= chunk.Samples()
				}, 30*time.Second, 100*time.Millisecond, "the OTLP backend never got %d samples", chunk.Samples())
				assert.Equal(t, chunk.Samples(), got.SampleEvents, "samples at the OTLP backend")
				assert.True(t, got.Functions[chunk.Function], "functions at the OTLP backend: %v", got.Functions)
			}
			if tt.wantSentry {
				var got sentSamples
				var functions map[string]bool
				require.Eventually(t, func() bool {
					got, functions = sentryAPI.received(t)
					return got.Samples >= chunk.Samples()
				}, 30*time.Second, 100*time.Millisecond, "Sentry never got %d samples", chunk.Samples())
				assert.Equal(t, chunk.Samples(), got.Samples, "samples at Sentry")
				assert.True(t, functions[chunk.Function], "functions at Sentry: %v", functions)
			}
		})
	}
}

// otlpFromEnvelope converts the envelope's profile chunks with the
// translator, as an OTLP profiler upstream would have sent them.
func otlpFromEnvelope(t *testing.T, body []byte) []byte {
	t.Helper()
	_, items, err := envelope.Parse(body, envelope.Limits{})
	require.NoError(t, err)
	b := profilesin.NewProfilesBuilder(profilesin.ReceiveOptions{ServiceName: "example-service"})
	for _, it := range items {
		p, err := sentry.DecodeProfile(it.Payload)
		require.NoError(t, err)
		sentry.Normalize(p)
		require.NoError(t, sentry.Validate(p, sentry.DefaultLimits()))
		b.Add(profilesin.DecodedProfile{Profile: p})
	}
	req, err := pprofileotlp.NewExportRequestFromProfiles(b.Profiles()).MarshalProto()
	require.NoError(t, err)
	return req
}

func postOTLP(t *testing.T, addr string, body []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v1development/profiles", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "OTLP receiver: %s", answer)
}

// fakeSentry is a stand-in Sentry: it keeps every request it gets (path,
// query, headers, body decompressed) and answers as Sentry does.
type fakeSentry struct {
	addr     string
	mu       sync.Mutex
	requests []recordedRequest
	errs     []error
}

func newFakeSentry(t *testing.T) *fakeSentry {
	t.Helper()
	f := &fakeSentry{}
	f.addr = serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err == nil {
			raw, err = decompress(r.Header.Get("Content-Encoding"), raw)
		}
		f.mu.Lock()
		if err != nil {
			f.errs = append(f.errs, err)
		} else {
			f.requests = append(f.requests, recordedRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: raw})
		}
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	return f
}

// got returns the requests so far, and the errors reading them.
func (f *fakeSentry) got() ([]recordedRequest, []error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recordedRequest(nil), f.requests...), append([]error(nil), f.errs...)
}

// received counts the samples of every chunk received so far and collects
// the function names of their frames.
func (f *fakeSentry) received(t *testing.T) (sentSamples, map[string]bool) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Empty(t, f.errs, "fake Sentry could not read a request")
	var total sentSamples
	functions := map[string]bool{}
	for _, req := range f.requests {
		body := req.Body
		n, err := countChunkSamples(body)
		require.NoError(t, err)
		total.Chunks += n.Chunks
		total.Samples += n.Samples
		items, err := parseEnvelope(body)
		require.NoError(t, err)
		for _, it := range items {
			var chunk struct {
				Profile struct {
					Frames []struct {
						Function string `json:"function"`
					} `json:"frames"`
				} `json:"profile"`
			}
			if it.Type != "profile_chunk" || json.Unmarshal(it.Payload, &chunk) != nil {
				continue
			}
			for _, fr := range chunk.Profile.Frames {
				functions[fr.Function] = true
			}
		}
	}
	return total, functions
}

// fakeOTLPBackend is an OTLP/HTTP endpoint of profiles, such as
// Pyroscope's, and of traces.
type fakeOTLPBackend struct {
	addr     string
	mu       sync.Mutex
	profiles []pprofile.Profiles
	traces   []ptrace.Traces
}

func newFakeOTLPBackend(t *testing.T) *fakeOTLPBackend {
	t.Helper()
	f := &fakeOTLPBackend{}
	f.addr = serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err == nil {
			raw, err = decompress(r.Header.Get("Content-Encoding"), raw)
		}
		if r.URL.Path == "/v1/traces" {
			req := ptraceotlp.NewExportRequest()
			if err == nil {
				err = req.UnmarshalProto(raw)
			}
			if err != nil {
				http.Error(w, "bad OTLP traces request", http.StatusBadRequest)
				return
			}
			f.mu.Lock()
			f.traces = append(f.traces, req.Traces())
			f.mu.Unlock()
			resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(resp)
			return
		}
		req := pprofileotlp.NewExportRequest()
		if err == nil {
			err = req.UnmarshalProto(raw)
		}
		if err != nil || r.URL.Path != "/v1development/profiles" {
			http.Error(w, "bad OTLP profiles request", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.profiles = append(f.profiles, req.Profiles())
		f.mu.Unlock()
		resp, _ := pprofileotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(resp)
	}))
	return f
}

func (f *fakeOTLPBackend) received() []pprofile.Profiles {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]pprofile.Profiles(nil), f.profiles...)
}

// spans lists every span the backend received.
func (f *fakeOTLPBackend) spans() []ptrace.Span {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ptrace.Span
	for _, td := range f.traces {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// withTransaction appends the transaction of the translator's testdata to
// an envelope, as an SDK sends a transaction beside its profile chunk.
func withTransaction(t *testing.T, body []byte) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "translator", "testdata", "traces", "transaction_static.json"))
	require.NoError(t, err)
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, raw))
	out := append(bytes.TrimRight(append([]byte(nil), body...), "\n"), []byte("\n{\"type\":\"transaction\"}\n")...)
	return append(append(out, compact.Bytes()...), '\n')
}

// serveLoopback serves h on a free loopback port until the test ends.
func serveLoopback(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}
