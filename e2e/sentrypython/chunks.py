"""A sentry-python 2.x service whose continuous profiler fills a whole chunk.

TestPyroscopeShowsSentrysTime runs it with the SDK's source tree on
PYTHONPATH (SENTRY_PYTHON_SRC): the profiler samples every thread of the
process at each tick and flushes a chunk every 60 s, so a run of
E2E_RUN_SECONDS (65 by default) sends one full chunk and one of the rest.
Besides the main thread and the SDK's own, two threads of the program's:
one hashing, one waiting, as a web worker's pool would.
"""

import hashlib
import os
import threading
import time

import sentry_sdk

sentry_sdk.init(
    dsn=os.environ["SENTRY_DSN"],
    release=os.environ["E2E_RELEASE"],
    environment=os.environ["E2E_ENVIRONMENT"],
    profile_session_sample_rate=1.0,
    profile_lifecycle="manual",
)

stop = threading.Event()


def e2e_hash_worker():
    while not stop.is_set():
        hashlib.sha256(b"x" * 1024).digest()
        time.sleep(0.05)


def e2e_waiter():
    stop.wait()


sentry_sdk.profiler.start_profiler()
threads = [
    threading.Thread(target=e2e_hash_worker, name="hash-worker"),
    threading.Thread(target=e2e_waiter, name="waiter"),
]
for t in threads:
    t.start()
end = time.time() + float(os.environ.get("E2E_RUN_SECONDS", "65"))
while time.time() < end:
    hashlib.sha256(b"y" * 4096).digest()
    time.sleep(0.02)
stop.set()
for t in threads:
    t.join()
sentry_sdk.profiler.stop_profiler()
sentry_sdk.flush(10)
print(sentry_sdk.VERSION)
