// Package e2e holds the end-to-end tests of the distribution. They drive real
// programs and so are opt-in, and `go test ./...` skips them in milliseconds:
//
//   - TestCollector* start the collector binary that `make build` produces
//     (its path in OTELCOL_BIN): a smoke test that posts envelopes to the
//     configuration `make run` uses, `validate` on every configuration, and
//     each example run between a fake Sentry and a fake OTLP backend.
//     TestSentryprofPprof reads sentryprof's pprof output with `go tool
//     pprof` (SENTRYPROF_BIN). `make smoke` runs them all.
//   - TestSDKs (E2E=1) runs every real Sentry SDK that runs on this machine
//     against the built collector and checks that every sample it sent came
//     out. `make e2e` runs it and prints its per-client table, and
//     TestForwardRealSDK, which checks forwarding to a stand-in Sentry with
//     node 11 (a User-Agent present) and node 9 (none).
//   - TestSymbolicationRealBuilds (E2E=1) writes a small application,
//     builds it for the browser and for Node with symbolication/build.mjs
//     (esbuild, minified, source maps, debug ids injected by
//     @sentry/esbuild-plugin with upload and telemetry off), profiles each
//     build with the real SDK (@sentry/browser 11.1.0 in headless Chromium,
//     the bundle served at a path unlike the build's so that only its debug
//     id finds the map; @sentry/profiling-node 11.1.0 in V8's caller-line
//     mode) through the receiver and the symbolication processor, and
//     checks that the hot frames come out with the names, file and lines of
//     the source it wrote. `make e2e` runs it.
//   - TestPyroscopeShowsSentrysTime (OTELCOL_BIN) sends the sentry-python
//     captures (timestamps moved to now), with SENTRY_PYTHON_SRC a 65-s run
//     of sentry-python 2.x's continuous profiler (sentrypython/chunks.py),
//     and with E2E=1 every client's requests, through the built collector
//     to Grafana Pyroscope (PYROSCOPE_BIN, else compat/pyroscope's model of
//     what it keeps), and checks that each service's total there is the
//     wall time Sentry's rule gives the same envelopes
//     (docs/pyroscope-time.md).
//
// # The real-SDK clients
//
// Each client is a small real program that keeps the CPU busy for a few
// seconds in the same named functions (e2eBusyFibonacci, e2eOuterChecksum,
// e2eInnerCompute) under a root span, one child span per round and, in
// node/, browser/ and sentrypython/, a grandchild span around the innermost
// work. Older majors are here because deployments run them for years:
//
//	node8-v1       node10/app.js in node8/   @sentry/node 8.55.2, profilesSampleRate (V1 profile + transaction)
//	node8-v2       node10/app.js in node8/   @sentry/node 8.55.2, Sentry.profiler.startProfiler() (V2 profile_chunk)
//	node9-v1       node10/app.js in node9/   @sentry/node 9.47.1, profilesSampleRate (V1)
//	node9-v2       node10/app.js in node9/   @sentry/node 9.47.1, profileLifecycle 'trace' (V2)
//	node10-v1      node10/app.js  @sentry/node 10.75.3, profilesSampleRate (V1)
//	node10-v2      node10/app.js  @sentry/node 10.75.3, profileLifecycle 'trace' (V2)
//	node11-static  node/app.js    @sentry/node 11.1.0, traceLifecycle 'static' (transaction items)
//	node11-stream  node/app.js    @sentry/node 11.1.0, span streaming, the default (span items)
//	browser10-v1   browser/page10.js  @sentry/browser 10.75.3, profilesSampleRate (V1)
//	browser11-v2   browser/page11.js  @sentry/browser 11.1.0, UI profiling, 'trace' (V2)
//	go-v1          sentrygo/      github.com/getsentry/sentry-go v0.30.0, ProfilesSampleRate (V1)
//	python1-wsgi   sentrypython/app.py  Debian's sentry-python 1.9.10, _experiments profiles_sample_rate (V1), WSGI
//
// node8/ and node9/ hold only their SDK (package.json and lockfile): the
// program is node10/app.js, which loads the SDK from its working directory.
// @sentry/node 8.x and 9.x send no User-Agent header.
//
// sentrypython/app.py is a WSGI service served by wsgiref on loopback under
// Debian's /usr/bin/python3 (PYTHON_BIN overrides it), where
// python3-sentry-sdk is installed (`.ci/run` installs it): the test makes
// three GET /job requests, each a transaction of the SDK's WSGI middleware
// with its profile, then POST /quit. sentry-python 1.x profiles only such
// middleware transactions, sampling every thread from a SIGPROF handler.
//
// The npm directories are pinned by their package-lock.json and installed by
// `make e2e` (`npm ci`, only when the lockfile changed; node_modules is
// git-ignored). The browser pages are bundled with esbuild at test time,
// served from a loopback server with `Document-Policy: js-profiling`, and
// opened in headless Chromium (Debian's chromium, or CHROMIUM_BIN); they post
// cross-origin to the receiver, whose `cors:` allows loopback origins.
// sentrygo/ is a Go module of its own with its go.sum, built by the test, so
// the project's go.mod never depends on the SDK.
//
// With E2E_EVENTS=1 (browser/page11.js: E2E_EVENTS=1 in its query string,
// where the runner puts every extra variable) five clients also send every
// other item their release has an API for:
//
//	node11-static  an exception with a cause, a message, a log, a metric, a check-in, feedback, a session
//	node10-v1      the same (10.75.3 has logs and metrics on by default)
//	browser11-v2   the same but the check-in (a server-side API); the session is browserSessionIntegration's
//	go-v1          a wrapped error (a chained exception), a message, a check-in; v0.30.0 has no logs,
//	               no sessions, and statsd metrics only through a hand-built event
//	python1-wsgi   an exception raised from another and a message (to /store/), a session and the
//	               middleware's session aggregates, and a check_in and a user_report item in an
//	               Envelope sent with the client's transport (1.9.10 has no API for either)
//
// TestSDKSignals runs them against a collector with logs and metrics
// pipelines, counts from the SDK's recorded requests what each sent, and
// checks that each event, feedback, log entry and check-in comes out of the
// logs pipeline once with its fields (event id, message or the chain's type,
// value and stack trace, severity, check-in id, slug, status and duration),
// each metric with as many points and the same values, and the sessions as
// sentry.sessions.started and .ended, all under the run's release and
// environment; it logs each client's sent/arrived counts.
// TestCollectorAllSignals does the same for captured payloads and a /store/
// event through the built collector alone.
//
// # The harness
//
// runSDK(t, client, opts) starts a built collector of the client's own
// (sdkCollectorConfig: the receiver, the file exporter, and the collector's
// metrics on a Prometheus endpoint, so that its discard counters are the
// client's alone), puts a recording proxy between the SDK and the receiver,
// runs the program, waits until every profile item is out or counted as
// discarded, and returns an sdkRun: the SDK's requests (Requests, bodies
// decompressed; Posts for the envelope POSTs alone), what they carried
// counted by this package's own small envelope parser (Sent), the file
// exporter's OTLP output (Output, and its summary Got) and the receiver's
// counters (Metrics). sdkRunOptions adds environment variables or replaces
// the collector configuration.
//
// sharedRuns.get(t, client) returns one run per client and test process,
// running it if no test has yet, so that a run is kept for the test that
// asks for it again in the same `go test`.
//
// The package has no code outside its tests; this file only documents it.
package e2e
