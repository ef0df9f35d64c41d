// Package complexityguard is the complexity guard: a test, run by `go
// test ./...` and so by `make test`, that every byte an unauthenticated
// client (or a misbehaving upstream) can send costs at most linear work
// and memory, and that a new decoder cannot arrive without being measured.
//
// Each row is one entry point along the dimension an attacker grows for
// free (attributes, keys, frames, path components, template repetitions,
// items per envelope, build ids, resources, string length × references).
// The row's input is generated at size n and 8n and the guard asserts on
// work, not wall time:
//
//   - allocated bytes and allocations (runtime.MemStats TotalAlloc and
//     Mallocs over the run, the heap collected before and collection off
//     during it) grow at most 10× — measured on the first run of a fresh
//     instance (a receiver's pools start empty at both sizes), so a reused
//     buffer cannot make the small run look cheaper than its input;
//   - the row's own deterministic count when it has one grows at most 10×,
//     and stays under its absolute bound when it has one (debuginfod
//     requests per batch, events an export expands to per request);
//   - the output (OTLP protobuf of what reached the pipelines, a chunk's
//     JSON) stays within its documented limit: 4× the input plus 64 KiB
//     unless the row documents another;
//   - for rows whose defect is CPU-only (a linear search per insert
//     allocates nothing extra), CPU time grows at most 16× (see
//     maxCPURatio for why not 10), n doubled first until the 1× run takes
//     5 ms (but never so far that 8n passes the item's size limit; a 1×
//     run still under 1 ms then is not judged), the least of 3 runs kept.
//
// CPU time is read from clocks, not hardware counters: these VMs expose
// no performance counters (/sys/bus/event_source/devices has no `cpu`), so
// an instruction count is not available. Rows whose code runs on the
// calling goroutine (ART and Perfetto decoding, the exporter's conversion,
// rate-limit headers, the span index) read CLOCK_THREAD_CPUTIME_ID with the
// goroutine locked to its thread. Rows that go through the receiver's real
// HTTP handler or the symbolication processor read
// CLOCK_PROCESS_CPUTIME_ID, since the handler runs on net/http's
// goroutines; the garbage collector is off during the run, so what else
// the process does is only the test's HTTP client, linear in the body.
// Under the race detector (which slows memory accesses 2–20× unevenly) CPU
// times are not judged; allocations are, always, at the same n (the HTTP
// rows judged by CPU run at n/8 there, since their defects allocate
// linearly).
//
// Rows by clock: ThreadClock — art_trace_methods, perfetto_packets,
// rate_limit_header_entries, span_index_timeline, export_functions;
// ProcessClock — the receiver rows of extra keys, tags, attributes,
// monitor_config keys and statsd tags, and the source-map and ProGuard
// rows; every other row is judged by allocations and its counts only.
//
// TestEveryDecoderHasARow fails when an item type of the router (read from
// ARCHITECTURE.md's "The router's table", which the receiver's
// TestArchitectureDocItemTable keeps equal to itemRoutes) or a `func
// Fuzz…` of the module has no row. Code that is unexported elsewhere is
// measured by a test in its own package with CheckLinear, and listed in
// externalRows.
//
// A row that catches a known defect names it, so its failure says what
// regressed.
package complexityguard
