//go:build linux

package proccpu

import (
	"os"
	"testing"
	"time"
)

// TestSelfAndOf: work done shows in both readings, which agree within
// /proc's 10 ms ticks.
func TestSelfAndOf(t *testing.T) {
	before, err := Of(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	start := Self()
	for x, deadline := 0, time.Now().Add(150*time.Millisecond); time.Now().Before(deadline); x++ {
		_ = x * x
	}
	spent := Self() - start
	after, err := Of(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if spent < 50*time.Millisecond {
		t.Fatalf("Self counted %v of 150 ms busy", spent)
	}
	if d := after - before; d < spent-30*time.Millisecond || d > spent+300*time.Millisecond {
		t.Fatalf("Of counted %v, Self %v", d, spent)
	}
	if _, err := Of(1 << 30); err == nil {
		t.Fatal("Of of no process: no error")
	}
}
