// Command main prints the goroutine stack the way the OpenTelemetry Go SDK
// records it in exception.stacktrace (runtime/debug.Stack text), then panics
// so the runtime prints its own trace to stderr. Lines marked "frame:" are the
// lines the parser test expects on the stack.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
)

type store struct{ name string }

//go:noinline
func (s *store) get(key string) []byte {
	if key == "panic" {
		var m map[string]int
		m[key]++ // frame:get-panic
	}
	return debug.Stack() // frame:get
}

type box[T any] struct{ v T }

//go:noinline
func (b box[T]) open(s *store, key string) []byte {
	return s.get(key) // frame:open
}

//go:noinline
func handle(key string) []byte {
	b := box[int]{v: 1}
	return b.open(&store{name: "db"}, key) // frame:handle
}

// recordStackTrace is what the OpenTelemetry Go SDK's span.RecordError
// calls with trace.WithStackTrace(true): runtime.Stack into 2048 bytes, so
// a deep stack is cut short.
//
//go:noinline
func recordStackTrace() string {
	stackTrace := make([]byte, 2048)
	n := runtime.Stack(stackTrace, false) // frame:record
	return string(stackTrace[0:n])
}

//go:noinline
func deep(n int) string {
	if n == 0 {
		return recordStackTrace() // frame:deep-bottom
	}
	return deep(n - 1) // frame:deep
}

func main() {
	fmt.Print(string(handle("stack"))) // frame:main
	fmt.Print("=====otel-cut=====\n" + deep(40) + "\n")
	fmt.Fprintln(os.Stderr, "=====panic=====")
	func() {
		handle("panic") // frame:main.func1
	}() // frame:main-closure
}
