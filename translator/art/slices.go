package art

import (
	"encoding/binary"
)

// Slices is a trace as time on call stacks: each thread's time between two
// of its records is one Slice, spent in the stack open during it. Every
// microsecond between a thread's first record and the end of the trace
// (see Slices for where it ends) is in exactly one slice, or in none when the thread had no method open. (In
// ART's sampling mode, which Sentry's SDK uses, records come in bursts
// about every 10 ms: a slice then spans the time between two samples.)
type Slices struct {
	Stacks [][]uint32 // method ids, leaf first
	Slices []Slice
}

// Slice is one stretch of a thread's time in one stack.
type Slice struct {
	Thread uint32
	Stack  int    // index in Stacks
	Start  uint32 // wall microseconds since the trace start (CPU for a thread-cpu trace)
	Wall   uint32 // microseconds
	CPU    uint32 // thread CPU microseconds spent (dual clock; 0 otherwise)
}

// Slices replays each thread's enter and exit records. Unbalanced streams
// are read as ART writes them: the records at the start of the trace enter
// the stack already open then; an exit or unwind of a method below the top
// closes every method above it too (they left without a record, as an
// exception unwinds them); an exit of a method not on the stack is ignored.
//
// Methods still open at the end run until tracing stopped, measured on the
// clock the records use. With the wall or dual clock that is
// `elapsed-time-usec` (or the thread's last record, when that is later):
// ART writes a record only when a stack changes, so a thread that sat in
// the same stack until the end (the main thread idling in its looper) has
// no later record, and its last record would cut that time off. vroom
// closes open methods at the last record instead (each thread's own in its
// flame chart, the main thread's in its call trees), which leaves that
// tail out; Relay only parses the trace and times nothing. With the
// thread-cpu clock
// a record's time is its thread's CPU time, on which `elapsed-time-usec`
// (wall time) says nothing: open methods end at the thread's last record.
func (t *Trace) Slices() Slices {
	sl := slicer{trace: t, threads: map[uint32]*threadState{}, stackIDs: map[string]int{}, key: make([]byte, 0, 256)}
	for _, e := range t.Events {
		sl.event(e)
	}
	end := uint32(min(t.ElapsedMicros, uint64(^uint32(0))))
	if t.Clock == ClockThreadCPU {
		end = 0 // no end on a thread's CPU clock but its last record
	}
	for _, th := range t.threadOrder() {
		if s := sl.threads[th]; s != nil {
			sl.emit(th, s, max(end, s.last), s.cpu)
		}
	}
	return sl.out
}

// threadState is a thread's stack of entered methods and when (on the
// trace's clock, and on its CPU clock) it last changed.
type threadState struct {
	stack     []uint32
	last, cpu uint32
	started   bool
}

// slicer cuts a trace's events into slices of each thread's stack.
type slicer struct {
	trace    *Trace
	threads  map[uint32]*threadState
	out      Slices
	stackIDs map[string]int
	key      []byte
}

// event ends the slice the event's thread was in and enters or leaves its
// method.
func (sl *slicer) event(e Event) {
	s := sl.thread(e.Thread)
	now := sl.at(e)
	if s.started {
		sl.emit(e.Thread, s, now, e.CPU)
	}
	s.apply(e)
	if !s.started || now > s.last {
		s.last = now
	}
	s.cpu = e.CPU
	s.started = true
}

// thread is the state of thread th, made on its first event.
func (sl *slicer) thread(th uint32) *threadState {
	s := sl.threads[th]
	if s == nil {
		s = &threadState{}
		sl.threads[th] = s
	}
	return s
}

// apply enters or leaves the event's method.
func (s *threadState) apply(e Event) {
	if e.Action == Enter {
		s.stack = append(s.stack, e.Method)
	} else {
		s.stack = leave(s.stack, e.Method)
	}
}

// leave pops method, and whatever was entered after it, off stack; a
// method that was never entered leaves the stack as it is.
func leave(stack []uint32, method uint32) []uint32 {
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i] == method {
			return stack[:i]
		}
	}
	return stack
}

// at is when an event happened on the trace's clock.
func (sl *slicer) at(e Event) uint32 {
	if sl.trace.Clock == ClockThreadCPU {
		return e.CPU
	}
	return e.Wall
}

// emit adds the slice of thread th's stack from its last change until
// (and its CPU time until cpu on a dual clock); nothing for an empty stack
// or no time.
func (sl *slicer) emit(th uint32, s *threadState, until, cpu uint32) {
	if len(s.stack) == 0 || until <= s.last {
		return
	}
	slice := Slice{Thread: th, Stack: sl.stackID(s.stack), Start: s.last, Wall: until - s.last, CPU: sl.cpuSince(s, cpu)}
	sl.out.Slices = append(sl.out.Slices, slice)
}

// cpuSince is the thread's CPU time from its last change until cpu, on a
// dual clock; 0 on one clock, or when the CPU clock went back.
func (sl *slicer) cpuSince(s *threadState, cpu uint32) uint32 {
	if sl.trace.Clock == ClockDual && cpu >= s.cpu {
		return cpu - s.cpu
	}
	return 0
}

// stackID is the index of stack (root first) in out.Stacks (leaf first),
// added once.
func (sl *slicer) stackID(stack []uint32) int {
	sl.key = sl.key[:0]
	for i := len(stack) - 1; i >= 0; i-- { // leaf first
		sl.key = binary.LittleEndian.AppendUint32(sl.key, stack[i])
	}
	if id, ok := sl.stackIDs[string(sl.key)]; ok {
		return id
	}
	leafFirst := make([]uint32, len(stack))
	for i := range stack {
		leafFirst[i] = stack[len(stack)-1-i]
	}
	id := len(sl.out.Stacks)
	sl.out.Stacks = append(sl.out.Stacks, leafFirst)
	sl.stackIDs[string(sl.key)] = id
	return id
}

// threadOrder lists the threads of the records in order of first record.
func (t *Trace) threadOrder() []uint32 {
	seen := map[uint32]bool{}
	var order []uint32
	for _, e := range t.Events {
		if !seen[e.Thread] {
			seen[e.Thread] = true
			order = append(order, e.Thread)
		}
	}
	return order
}
