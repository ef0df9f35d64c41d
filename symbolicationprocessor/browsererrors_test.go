package symbolicationprocessor

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
)

// TestRealBrowserErrors: @sentry/browser 11 in headless Chromium throws
// the same errors from the page's minified bundle; its DSN is the page's
// own origin, which passes /api/ on to the sentryprofile receiver, whose
// logs go through this processor. Every in-app frame gets what
// source-map and acorn give in node.
func TestRealBrowserErrors(t *testing.T) {
	node := testenv.LookPath(t, "node", "nodejs")
	npm := testenv.LookPath(t, "npm", "npm")
	chromium := os.Getenv("CHROMIUM_BIN")
	if chromium == "" {
		chromium = testenv.LookPath(t, "chromium", "chromium")
	}
	installNodeModules(t, npm)
	out := t.TempDir()
	runNode(t, node, nil, "build.mjs", out)
	sink := new(consumertest.LogsSink)
	dsn, err := url.Parse(startReceiverWithProcessor(t, out, sink))
	require.NoError(t, err)

	events := filepath.Join(out, "events.jsonl")
	p := newErrorPage(t, filepath.Join(out, "browser", "app.js"), events, dsn.Host)
	pageDSN := "http://" + dsn.User.Username() + "@" + strings.TrimPrefix(p.server.URL, "http://") + "/1"
	p.open(t, chromium, pageDSN, filepath.Join(out, "profile"))

	records := waitForRecords(t, sink, 5)
	require.Eventually(t, func() bool { return p.eventCount() >= 5 }, 10*time.Second, 50*time.Millisecond, "the page's beforeSend reports")
	var expected map[string][][]*expectedFrame
	require.NoError(t, json.Unmarshal(runNode(t, node, nil, "expect.mjs", events, out, p.server.URL+"/static/", filepath.Join(out, "browser")), &expected))
	checked := 0
	for _, lr := range records {
		id, _ := lr.Attributes().Get("log.record.uid")
		want, ok := expected[strings.ReplaceAll(id.Str(), "-", "")]
		require.True(t, ok, "event %s was sent", id.Str())
		checked += checkNodeFrames(t, lr, want)
	}
	t.Logf("%d in-app frames checked in %d events", checked, len(records))
	assert.GreaterOrEqual(t, checked, 12, "in-app frames checked")
}

// errorPage serves the page, its bundle, the SDK's requests (passed on to
// the receiver) and the page's reports.
type errorPage struct {
	server *httptest.Server
	done   chan string
	mu     sync.Mutex
	events int
}

func newErrorPage(t *testing.T, bundle, events, receiver string) *errorPage {
	t.Helper()
	p := &errorPage{done: make(chan string, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		dsn, _ := json.Marshal(r.URL.Query().Get("dsn"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><html><head><title>errors</title></head><body>`+
			`<script>window.PAGE = {dsn: `+string(dsn)+`};</script><script src="/static/app.js"></script></body></html>`)
	})
	mux.HandleFunc("GET /static/app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		http.ServeFile(w, r, bundle)
	})
	mux.Handle("/api/", httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: receiver}))
	mux.HandleFunc("POST /event", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		if err == nil {
			p.mu.Lock()
			defer p.mu.Unlock()
			f, ferr := os.OpenFile(events, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if ferr == nil {
				_, _ = f.Write(append(b, '\n'))
				_ = f.Close()
				p.events++
			}
		}
	})
	mux.HandleFunc("POST /done", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 64))
		select {
		case p.done <- string(b):
		default:
		}
	})
	p.server = httptest.NewServer(mux)
	t.Cleanup(p.server.Close)
	return p
}

func (p *errorPage) eventCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.events
}

// open runs headless Chromium on the page until it reports that its SDK
// flushed.
func (p *errorPage) open(t *testing.T, chromium, dsn, profileDir string) {
	t.Helper()
	// Off the network, out of any earlier profile.
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-breakpad", "--disable-dev-shm-usage",
		"--user-data-dir="+profileDir, p.server.URL+"/?dsn="+url.QueryEscape(dsn))
	// Its own process group: its renderer and utility processes stop with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logs strings.Builder
	var logsMu sync.Mutex
	cmd.Stdout = writerFunc(func(b []byte) (int, error) { logsMu.Lock(); defer logsMu.Unlock(); return logs.Write(b) })
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		// Killed, Chromium exits with an error; it only says how it ended.
		t.Logf("chromium exited: %v", <-exited)
	}()
	select {
	case flushed := <-p.done:
		require.Equal(t, "true", flushed, "the page's Sentry.flush")
	case err := <-exited:
		exited <- err
		logsMu.Lock()
		defer logsMu.Unlock()
		t.Fatalf("chromium exited before the page finished: %v\n%s", err, logs.String())
	case <-time.After(2 * time.Minute):
		t.Fatal("the page did not finish within 2 minutes")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
