"""A small WSGI service profiled by the real sentry-python 1.x.

The e2e tests run it with Debian's interpreter and Debian's
python3-sentry-sdk (1.9.10): the 1.x line enables transaction profiles (V1)
through `_experiments={"profiles_sample_rate": ...}` and profiles each
request that SentryWsgiMiddleware turns into a transaction. The service is
served by the standard library's wsgiref on loopback, in the main thread
(the 1.x profiler samples from a SIGPROF handler, which Python runs there).

The test drives it: the first line on stdout is {"listening": "host:port"};
each GET /job?busy_ms=N runs one job, a transaction of its own:

  GET /job (the middleware's transaction, renamed e2e-job)
    e2e-step (one per round)   e2eOuterChecksum runs here
      e2e-compute              e2eBusyFibonacci runs here

POST /quit (outside the middleware, so it is neither traced nor profiled)
stops the server; the program then flushes the SDK and prints a summary.

Environment: SENTRY_DSN (required), E2E_RELEASE, E2E_ENVIRONMENT,
E2E_SENTRY_DEBUG=1 for the SDK's own debug log, and E2E_EVENTS=1 to send,
once the server stopped, what else the SDK sends: an exception raised from
another (1.9.10 posts events to /api/<project>/store/), a message, a
release-health session (a `session` item; the middleware's requests also
make `sessions` aggregates), and a cron check-in and user feedback, which
1.9.10 has no API for: they go as a `check_in` and a `user_report` item of
an Envelope sent with the client's transport, as the SDK's own
session and profile items are.
"""

import json
import os
import sys
import time
import uuid
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, make_server

import sentry_sdk
from sentry_sdk.envelope import Envelope, Item, PayloadRef
from sentry_sdk.integrations.wsgi import SentryWsgiMiddleware

ROUNDS = 5


def e2eBusyFibonacci(n):
    # Recursive on purpose: most samples of the inner span are in it.
    return n if n < 2 else e2eBusyFibonacci(n - 1) + e2eBusyFibonacci(n - 2)


def e2eOuterChecksum(millis):
    # Integer hashing: CPU work that only ever runs in the outer (step) span.
    deadline = time.monotonic() + millis / 1000
    h = 0
    while time.monotonic() < deadline:
        for i in range(2000):
            h = (h * 31 + ((i * 7919) & 0xFFFF)) & 0xFFFFFFFF
    return h


def e2eInnerCompute(millis):
    deadline = time.monotonic() + millis / 1000
    checksum = 0
    while time.monotonic() < deadline:
        checksum = (checksum + e2eBusyFibonacci(18)) % 1000003
    return checksum


def run_job(busy_ms):
    per_round = busy_ms / ROUNDS
    checksum = 0
    for round_no in range(ROUNDS):
        with sentry_sdk.start_span(op="e2e.step", description="e2e-step") as step:
            step.set_data("e2e.round", round_no)
            checksum ^= e2eOuterChecksum(per_round * 0.4)
            with sentry_sdk.start_span(op="e2e.compute", description="e2e-compute"):
                checksum ^= e2eInnerCompute(per_round * 0.6)
    return checksum


def job_app(environ, start_response):
    """The traced application: one job per request, done before it answers."""
    if environ.get("PATH_INFO") != "/job":
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found\n"]
    query = parse_qs(environ.get("QUERY_STRING", ""))
    busy_ms = float(query.get("busy_ms", ["600"])[0])
    with sentry_sdk.configure_scope() as scope:
        scope.transaction = "e2e-job"
    checksum = run_job(busy_ms)
    body = json.dumps({"rounds": ROUNDS, "checksum": checksum}).encode()
    start_response("200 OK", [("Content-Type", "application/json")])
    return [body]


class Service:
    """Routes /quit itself and everything else through the SDK's middleware."""

    def __init__(self):
        self.traced = SentryWsgiMiddleware(job_app)
        self.stopping = False
        self.jobs = 0

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") == "/quit" and environ.get("REQUEST_METHOD") == "POST":
            self.stopping = True
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"bye\n"]
        if environ.get("PATH_INFO") == "/job":
            self.jobs += 1
        return self.traced(environ, start_response)


def send_events():
    """Sends one of each other item; see the module's docstring."""
    hub = sentry_sdk.Hub.current
    hub.start_session()
    try:
        try:
            raise RuntimeError("e2e: the cause of the exception")
        except RuntimeError as cause:
            raise ValueError("e2e: an exception captured on purpose") from cause
    except ValueError:
        error_id = sentry_sdk.capture_exception()
    sentry_sdk.capture_message("e2e: a message captured on purpose", level="warning")
    hub.end_session()

    client = hub.client
    envelope = Envelope(headers={"event_id": error_id})
    envelope.add_item(Item(type="check_in", payload=PayloadRef(json={
        "check_in_id": uuid.uuid4().hex,
        "monitor_slug": "e2e-job",
        "status": "ok",
        "duration": 1.5,
        "release": client.options["release"],
        "environment": client.options["environment"],
    })))
    envelope.add_item(Item(type="user_report", payload=PayloadRef(json={
        "event_id": error_id,
        "name": "e2e",
        "email": "e2e@example.invalid",
        "comments": "e2e: feedback sent on purpose",
    })))
    client.transport.capture_envelope(envelope)


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        pass


def main():
    dsn = os.environ.get("SENTRY_DSN")
    if not dsn:
        print("app.py: SENTRY_DSN is not set", file=sys.stderr)
        return 2
    if not sentry_sdk.VERSION.startswith("1."):
        print("app.py: written for sentry-python 1.x, found " + sentry_sdk.VERSION, file=sys.stderr)
        return 2
    sentry_sdk.init(
        dsn=dsn,
        release=os.environ.get("E2E_RELEASE", "e2e-python@1.0.0"),
        environment=os.environ.get("E2E_ENVIRONMENT", "e2e"),
        traces_sample_rate=1.0,
        _experiments={"profiles_sample_rate": 1.0},
        debug=os.environ.get("E2E_SENTRY_DEBUG") == "1",
    )
    service = Service()
    with make_server("127.0.0.1", 0, service, handler_class=QuietHandler) as server:
        host, port = server.server_address[:2]
        print(json.dumps({"listening": "%s:%d" % (host, port)}), flush=True)
        while not service.stopping:
            server.handle_request()
    if os.environ.get("E2E_EVENTS") == "1":
        send_events()
    sentry_sdk.flush(timeout=10)
    print(json.dumps({"sdk": sentry_sdk.VERSION, "jobs": service.jobs}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
