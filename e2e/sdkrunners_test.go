package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// How the client programs are started. Each runner returns once the
// program has sent everything it will send.

// envChromium names the Chromium binary of the browser clients; unset, it
// is `chromium` on PATH (Debian's package).
const envChromium = "CHROMIUM_BIN"

// requireNodeModules fails unless dir's npm dependencies are installed, as
// `make e2e` does from the lockfile.
func requireNodeModules(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil {
		t.Fatalf("%s has no installed node_modules (run `make e2e`, which runs `npm ci` there): %v", dir, err)
	}
}

// legacyNodeApp is the program of every SDK release with transaction
// profiles (node10/, node9/, node8/): it loads the SDK from its working
// directory, so each of those directories runs it with its own SDK.
const legacyNodeApp = "../node10/app.js"

// nodeProgram runs `node script` in dir (a directory of this package, whose
// node_modules holds the SDK) with extra environment variables.
func nodeProgram(dir, script string, extra ...string) func(*testing.T, sdkEnv, *sdkRecorder) {
	return func(t *testing.T, env sdkEnv, _ *sdkRecorder) {
		t.Helper()
		requireNodeModules(t, dir)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "node", script)
		cmd.Dir = dir
		cmd.WaitDelay = 5 * time.Second
		cmd.Env = append(append(os.Environ(), extra...), env.vars()...)
		started := time.Now()
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "node %s in %s:\n%s", script, dir, out)
		t.Logf("node %s in %s (%s): %s", script, dir, time.Since(started).Round(time.Millisecond), out)
	}
}

// goProgram builds the Go program in dir, a module of its own with its
// go.sum (so the SDK comes from the Go module proxy, never into the
// project's go.mod), and runs it.
func goProgram(dir string) func(*testing.T, sdkEnv, *sdkRecorder) {
	return func(t *testing.T, env sdkEnv, _ *sdkRecorder) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		bin := filepath.Join(t.TempDir(), filepath.Base(dir))
		build := exec.CommandContext(ctx, "go", "build", "-mod=readonly", "-o", bin, ".")
		build.Dir = dir
		// The module's own go.mod decides; the test binary's module
		// settings must not leak into it.
		build.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
		out, err := build.CombinedOutput()
		require.NoError(t, err, "go build in %s:\n%s", dir, out)

		cmd := exec.CommandContext(ctx, bin)
		cmd.WaitDelay = 5 * time.Second
		cmd.Env = append(os.Environ(), env.vars()...)
		started := time.Now()
		out, err = cmd.CombinedOutput()
		require.NoError(t, err, "%s:\n%s", bin, out)
		t.Logf("%s (%s): %s", filepath.Base(bin), time.Since(started).Round(time.Millisecond), out)
	}
}

// envPython names the interpreter of the sentry-python client; unset, it is
// Debian's /usr/bin/python3, the one python3-sentry-sdk installs for (a
// python3 earlier on PATH, such as pyenv's, lacks the package).
const envPython = "PYTHON_BIN"

// wsgiJobs is how many requests the test makes of the WSGI client: each is
// a transaction with a profile of its own.
const wsgiJobs = 3

// wsgiService starts the WSGI service in dir (app.py) and drives it as its
// users would: wsgiJobs requests, which share env.BusyMillis, then POST
// /quit, after which the program flushes the SDK and exits. It returns once
// the recorder has a profile item per job.
func wsgiService(dir string) func(*testing.T, sdkEnv, *sdkRecorder) {
	return func(t *testing.T, env sdkEnv, rec *sdkRecorder) {
		t.Helper()
		python := os.Getenv(envPython)
		if python == "" {
			python = "/usr/bin/python3"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, python, "app.py")
		cmd.Dir = dir
		cmd.WaitDelay = 5 * time.Second
		cmd.Env = append(append(os.Environ(), env.vars()...), "PYTHONDONTWRITEBYTECODE=1")
		stderr := &lockedBuffer{}
		cmd.Stderr = stderr
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		started := time.Now()
		require.NoError(t, cmd.Start(), "%s: the WSGI client needs Debian's python3 and python3-sentry-sdk (or set %s)", python, envPython)
		lines := bufio.NewScanner(stdout)
		addr, err := readListening(lines)
		if err != nil {
			_ = cmd.Wait()
			t.Fatalf("%s %s/app.py: %v (Debian's python3-sentry-sdk installed?)\n%s", python, dir, err, stderr.String())
		}
		for range wsgiJobs {
			if err := wsgiRequest(http.MethodGet, "http://"+addr+"/job?busy_ms="+strconv.Itoa(env.BusyMillis/wsgiJobs)); err != nil {
				cancel()
				_ = cmd.Wait()
				t.Fatalf("%v\n%s", err, stderr.String())
			}
		}
		quitErr := wsgiRequest(http.MethodPost, "http://"+addr+"/quit")
		var summary struct {
			SDK  string `json:"sdk"`
			Jobs int    `json:"jobs"`
		}
		for lines.Scan() {
			_ = json.Unmarshal(lines.Bytes(), &summary)
		}
		err = cmd.Wait()
		require.NoError(t, quitErr, "stopping the service:\n%s", stderr.String())
		require.NoError(t, err, "%s %s/app.py:\n%s", python, dir, stderr.String())
		require.Equal(t, wsgiJobs, summary.Jobs, "jobs the service ran")
		t.Logf("%s %s/app.py, sentry-python %s (%s): %d jobs", python, dir, summary.SDK, time.Since(started).Round(time.Millisecond), summary.Jobs)
		// sentry-python 1.x's flush tells nothing; the recorder does.
		require.NoError(t, waitForProfileItems(rec, wsgiJobs, 20*time.Second))
	}
}

// readListening reads the service's first line, {"listening": "host:port"}.
func readListening(lines *bufio.Scanner) (string, error) {
	if !lines.Scan() {
		if err := lines.Err(); err != nil {
			return "", fmt.Errorf("reading the service's first line: %w", err)
		}
		return "", errors.New("the service exited before it listened")
	}
	var first struct {
		Listening string `json:"listening"`
	}
	if err := json.Unmarshal(lines.Bytes(), &first); err != nil || first.Listening == "" {
		return "", fmt.Errorf("the service's first line %q does not say where it listens", lines.Text())
	}
	return first.Listening, nil
}

// wsgiRequest makes one request of the WSGI service and requires a 200.
func wsgiRequest(method, target string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, target, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, target, resp.Status, body)
	}
	return nil
}

// pageResult is what the page posts to /done.
type pageResult struct {
	Rounds  int    `json:"rounds"`
	Flushed bool   `json:"flushed"`
	Error   string `json:"error"`
}

// browserPage bundles entry (in browser/) with esbuild, serves it from a
// loopback server with `Document-Policy: js-profiling` (without it Chromium
// offers no JS Self-Profiling API), and opens it in headless Chromium. The
// page posts to the DSN, a different origin, and reports to /done when its
// SDK has flushed; the runner then waits for the profile item to be
// recorded and stops Chromium.
func browserPage(entry string) func(*testing.T, sdkEnv, *sdkRecorder) {
	const dir = "browser"
	return func(t *testing.T, env sdkEnv, rec *sdkRecorder) {
		t.Helper()
		requireNodeModules(t, dir)
		work := t.TempDir()
		bundle := filepath.Join(work, "bundle.js")
		esbuild := exec.Command(filepath.Join("node_modules", ".bin", "esbuild"), entry,
			"--bundle", "--format=iife", "--log-level=warning", "--outfile="+bundle)
		esbuild.Dir = dir
		out, err := esbuild.CombinedOutput()
		require.NoError(t, err, "esbuild %s:\n%s", entry, out)

		query := url.Values{
			"dsn":         {env.DSN},
			"release":     {env.Release},
			"environment": {env.Environment},
			"busy":        {strconv.Itoa(env.BusyMillis)},
		}
		// A page has no environment: the extra NAME=value pairs (such as
		// E2E_EVENTS=1) go in its query string under the same names.
		for _, kv := range env.Extra {
			name, value, _ := strings.Cut(kv, "=")
			query.Set(name, value)
		}
		started := time.Now()
		openPage(t, bundle, "/bundle.js", query, filepath.Join(work, "profile"), func(res pageResult, chromiumLogs func() string) {
			t.Logf("%s in chromium (%s): %+v", entry, time.Since(started).Round(time.Millisecond), res)
			// The profile of a span is collected asynchronously after the
			// span ends; the flush normally covers it, the wait absorbs the
			// rest.
			require.NoError(t, waitForProfileItems(rec, 1, 20*time.Second), "chromium:\n%s", chromiumLogs())
		})
	}
}

// openPage serves bundle at bundleURL under a page that loads it, with
// `Document-Policy: js-profiling`, opens the page with query in headless
// Chromium (a profile directory of its own), waits until the page reports
// to /done that its SDK has flushed, and calls whileOpen with the report
// before it stops Chromium.
func openPage(t *testing.T, bundle, bundleURL string, query url.Values, profileDir string, whileOpen func(pageResult, func() string)) {
	t.Helper()
	chromium := os.Getenv(envChromium)
	if chromium == "" {
		path, err := exec.LookPath("chromium")
		require.NoError(t, err, "browser pages need Chromium (Debian's chromium package, or set %s)", envChromium)
		chromium = path
	}
	done := make(chan pageResult, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Document-Policy", "js-profiling")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><html><head><title>e2e</title></head><body><script src="`+bundleURL+`"></script></body></html>`)
	})
	mux.HandleFunc("GET "+bundleURL, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		http.ServeFile(w, r, bundle)
	})
	mux.HandleFunc("POST /done", func(w http.ResponseWriter, r *http.Request) {
		var res pageResult
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&res); err != nil {
			res.Error = "the page's report: " + err.Error()
		}
		select {
		case done <- res:
		default:
		}
	})
	mux.HandleFunc("GET /", http.NotFound)
	page := httptest.NewServer(mux)
	defer page.Close()

	// The flags keep Chromium off the network (this machine has none) and
	// out of any earlier profile.
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-breakpad", "--disable-dev-shm-usage",
		"--user-data-dir="+profileDir, page.URL+"/?"+query.Encode())
	// Its own process group: Chromium's renderer and utility processes are
	// stopped with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		// Killed, Chromium exits with an error; it only says how it ended.
		t.Logf("chromium exited: %v", <-exited)
	}()

	select {
	case res := <-done:
		require.Empty(t, res.Error, "the page failed")
		require.True(t, res.Flushed, "the page's Sentry.flush timed out")
		whileOpen(res, logs.String)
	case err := <-exited:
		exited <- err
		t.Fatalf("chromium exited before the page finished: %v\n%s", err, logs.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("the page did not finish within 2 minutes\n%s", logs.String())
	}
}

// waitForProfileItems waits until rec has recorded want profile or
// profile_chunk items, and then until it has seen no new request for half a
// second.
func waitForProfileItems(rec *sdkRecorder, want int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	seen, quietSince := -1, time.Now()
	for time.Now().Before(deadline) {
		reqs, err := rec.snapshot()
		if err != nil {
			return err
		}
		if len(reqs) != seen {
			seen, quietSince = len(reqs), time.Now()
		}
		var items sentItems
		for _, r := range reqs {
			if r.Method == http.MethodPost {
				if err := readProfileItems(r.Body, &items); err != nil {
					return err
				}
			}
		}
		if len(items.Profiles) >= want && time.Since(quietSince) >= 500*time.Millisecond {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("fewer than %d profile items recorded within %s", want, timeout)
}
