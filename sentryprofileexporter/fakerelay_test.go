package sentryprofileexporter

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

const (
	testPublicKey = "0123456789abcdef0123456789abcdef"
	testSecretKey = "5ec2e75ec2e75ec2e75ec2e75ec2e7aa"
	testProjectID = "42"

	// maxChunkSpan is Relay's limit on the time a profile chunk covers.
	maxChunkSpan = 66 * time.Second
)

// reply is what the fake Relay answers to one request that passed its checks.
type reply struct {
	status int
	header http.Header
	body   string
}

// script picks the reply to the n-th request (1-based).
type script func(n int) reply

func alwaysOK(int) reply { return reply{status: http.StatusOK} }

// receivedEnvelope is one envelope the fake Relay accepted.
type receivedEnvelope struct {
	at     time.Time
	header envelope.Header
	chunks []*sentry.Profile
}

// fakeRelay is an in-process Sentry ingestion endpoint that checks what Relay
// checks before it accepts a profile chunk envelope. A request that fails a
// check is answered with 400 and fails the test.
type fakeRelay struct {
	t         testing.TB
	srv       *httptest.Server
	publicKey string
	projectID string
	script    script

	mu        sync.Mutex
	requests  []time.Time // every request, accepted or not
	accepted  []receivedEnvelope
	delivered chan struct{} // one value per accepted envelope
}

func newFakeRelay(t testing.TB, s script) *fakeRelay {
	t.Helper()
	r := newUnstartedFakeRelay(t, s)
	r.srv.Start()
	return r
}

func newUnstartedFakeRelay(t testing.TB, s script) *fakeRelay {
	t.Helper()
	if s == nil {
		s = alwaysOK
	}
	r := &fakeRelay{
		t:         t,
		publicKey: testPublicKey,
		projectID: testProjectID,
		script:    s,
		delivered: make(chan struct{}, 1024),
	}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// listenOn makes the unstarted relay serve on addr (a port a previous
// listener used) and starts it.
func (r *fakeRelay) listenOn(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	_ = r.srv.Listener.Close()
	r.srv.Listener = l
	r.srv.Start()
	return nil
}

// dsn is a DSN of this relay with a secret key, as users still paste them.
func (r *fakeRelay) dsn() string {
	host := strings.TrimPrefix(r.srv.URL, "http://")
	if host == "" {
		host = r.srv.Listener.Addr().String()
	}
	return fmt.Sprintf("http://%s:%s@%s/%s", r.publicKey, testSecretKey, host, r.projectID)
}

func (r *fakeRelay) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests = append(r.requests, time.Now())
	n := len(r.requests)
	r.mu.Unlock()

	env, err := r.check(req)
	if err != nil {
		r.t.Errorf("fake relay: request %d rejected: %v", n, err)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"detail":%q}`, err.Error())
		return
	}
	rep := r.script(n)
	for k, vs := range rep.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(rep.status)
	if rep.body != "" {
		_, _ = io.WriteString(w, rep.body)
	} else if rep.status == http.StatusOK {
		_, _ = fmt.Fprintf(w, `{"id":%q}`, env.header.EventID)
	}
	if rep.status/100 == 2 {
		r.mu.Lock()
		r.accepted = append(r.accepted, env)
		r.mu.Unlock()
		r.delivered <- struct{}{}
	}
}

// check applies Relay's checks to one request and decodes its envelope.
func (r *fakeRelay) check(req *http.Request) (receivedEnvelope, error) {
	env := receivedEnvelope{at: time.Now()}
	if req.Method != http.MethodPost {
		return env, fmt.Errorf("method %s", req.Method)
	}
	if want := "/api/" + r.projectID + "/envelope/"; strings.TrimSuffix(req.URL.Path, "/")+"/" != want {
		return env, fmt.Errorf("path %q, want %q", req.URL.Path, want)
	}
	creds, err := sentryhttp.CredentialsFromRequest(req)
	if err != nil {
		return env, fmt.Errorf("auth: %w", err)
	}
	if len(creds) != 1 {
		return env, fmt.Errorf("auth: %d forms of credentials, Relay wants exactly one", len(creds))
	}
	if req.Header.Get("X-Sentry-Auth") == "" {
		return env, fmt.Errorf("auth: no X-Sentry-Auth header")
	}
	if creds[0].PublicKey != r.publicKey {
		return env, fmt.Errorf("auth: sentry_key %q", creds[0].PublicKey)
	}
	if creds[0].SecretKey != "" {
		return env, fmt.Errorf("auth: the secret key was sent")
	}
	if !strings.HasPrefix(creds[0].Client, sdkName+"/") {
		return env, fmt.Errorf("auth: sentry_client %q does not name the exporter", creds[0].Client)
	}
	if ua := req.Header.Get("User-Agent"); !strings.HasPrefix(ua, sdkName+"/") {
		return env, fmt.Errorf("User-Agent %q does not name the exporter", ua)
	}
	if ct := req.Header.Get("Content-Type"); ct != contentTypeEnvelope {
		return env, fmt.Errorf("Content-Type %q", ct)
	}

	body, err := readBody(req)
	if err != nil {
		return env, err
	}
	header, items, err := envelope.Parse(body, envelope.Limits{})
	if err != nil {
		return env, fmt.Errorf("envelope: %w", err)
	}
	env.header = header
	if !isHex32(header.EventID) {
		return env, fmt.Errorf("envelope event_id %q is not 32 hex digits", header.EventID)
	}
	if _, err := time.Parse(time.RFC3339, header.SentAt); err != nil {
		return env, fmt.Errorf("envelope sent_at: %w", err)
	}
	if header.SDK == nil || header.SDK.Name == "" || header.SDK.Version == "" {
		return env, fmt.Errorf("envelope sdk missing or incomplete: %+v", header.SDK)
	}
	if header.DSN != "" {
		if strings.Contains(header.DSN, testSecretKey) {
			return env, fmt.Errorf("envelope dsn carries the secret key")
		}
		d, err := sentryhttp.ParseDSN(header.DSN)
		if err != nil {
			return env, fmt.Errorf("envelope dsn: %w", err)
		}
		if d.PublicKey != r.publicKey || d.ProjectID != r.projectID {
			return env, fmt.Errorf("envelope dsn names key %q project %q", d.PublicKey, d.ProjectID)
		}
	}
	if len(items) == 0 {
		return env, fmt.Errorf("envelope has no items")
	}
	for i, it := range items {
		p, err := checkChunkItem(it)
		if err != nil {
			return env, fmt.Errorf("item %d: %w", i, err)
		}
		env.chunks = append(env.chunks, p)
	}
	return env, nil
}

func readBody(req *http.Request) ([]byte, error) {
	var body io.Reader = req.Body
	switch enc := req.Header.Get("Content-Encoding"); enc {
	case "":
	case "gzip":
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		defer zr.Close()
		body = zr
	default:
		return nil, fmt.Errorf("Content-Encoding %q", enc)
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	return data, nil
}

// checkChunkItem applies Relay's profile_chunk rules to one item.
func checkChunkItem(it envelope.Item) (*sentry.Profile, error) {
	if it.Header.Type != itemTypeProfileChunk {
		return nil, fmt.Errorf("type %q", it.Header.Type)
	}
	if it.Header.Platform == "" {
		return nil, fmt.Errorf("no platform item header")
	}
	p, err := sentry.DecodeProfile(it.Payload)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if p.Version != sentry.VersionV2 {
		return nil, fmt.Errorf("version %q", p.Version)
	}
	if p.Platform != it.Header.Platform {
		return nil, fmt.Errorf("platform %q in the payload, %q in the item header", p.Platform, it.Header.Platform)
	}
	if err := sentry.Validate(p, sentry.DefaultLimits()); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	if !isHex32(p.ChunkID) || !isHex32(p.ProfilerID) {
		return nil, fmt.Errorf("chunk_id %q / profiler_id %q are not 32 hex digits", p.ChunkID, p.ProfilerID)
	}
	if p.ClientSDK.Name == "" || p.ClientSDK.Version == "" {
		return nil, fmt.Errorf("client_sdk incomplete: %+v", p.ClientSDK)
	}
	if len(p.Samples) == 0 {
		return nil, fmt.Errorf("no samples")
	}
	first, last := p.Samples[0].Timestamp, p.Samples[0].Timestamp
	for _, s := range p.Samples {
		first, last = min(first, s.Timestamp), max(last, s.Timestamp)
	}
	if span := time.Duration(last - first); span > maxChunkSpan {
		return nil, fmt.Errorf("chunk spans %s, Relay allows %s", span, maxChunkSpan)
	}
	if err := checkStringThreadIDs(it.Payload); err != nil {
		return nil, err
	}
	return p, nil
}

// checkStringThreadIDs looks at the wire form: the decoder accepts numeric
// thread ids, V2 requires strings.
func checkStringThreadIDs(payload []byte) error {
	var wire struct {
		Profile struct {
			Samples []struct {
				ThreadID json.RawMessage `json:"thread_id"`
			} `json:"samples"`
		} `json:"profile"`
	}
	if err := json.Unmarshal(payload, &wire); err != nil {
		return fmt.Errorf("payload JSON: %w", err)
	}
	for i, s := range wire.Profile.Samples {
		if !bytes.HasPrefix(s.ThreadID, []byte(`"`)) {
			return fmt.Errorf("sample %d: thread_id %s is not a string", i, s.ThreadID)
		}
	}
	return nil
}

// waitDelivered waits up to testTimeout for n accepted envelopes.
func (r *fakeRelay) waitDelivered(t testing.TB, n int) {
	t.Helper()
	deadline := time.After(testTimeout)
	for i := 0; i < n; i++ {
		select {
		case <-r.delivered:
		case <-deadline:
			t.Fatalf("fake relay: %d of %d envelopes delivered after %s", i, n, testTimeout)
		}
	}
}

func (r *fakeRelay) requestTimes() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.requests...)
}

func (r *fakeRelay) envelopes() []receivedEnvelope {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receivedEnvelope(nil), r.accepted...)
}

// chunks returns every accepted chunk.
func (r *fakeRelay) chunks() []*sentry.Profile {
	var out []*sentry.Profile
	for _, e := range r.envelopes() {
		out = append(out, e.chunks...)
	}
	return out
}
