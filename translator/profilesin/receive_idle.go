package profilesin

// Idle samples of transaction profiles, as Sentry shows them. A V1 sample
// whose stack is empty (JS Self-Profiling samples the thread while an
// async function awaits) is idle. Sentry's processing of a transaction
// profile (vroom's sample.Profile.Normalize → ReplaceIdleStacks) gives an
// idle sample that lies between two active samples of its thread the
// frames the two share from the root, so that the time of an await inside
// an async function is that function's time; idle samples before a
// thread's first active sample and after its last one stay empty.
// Continuous-profiling chunks (V2) are not treated so, nor are method
// traces (their slices carry their own stacks and times).
//
// The receiver does the same: such a sample gets the common frames as its
// stack, and every idle sample carries sentry.sample.idle = true, so that
// the exporter writes it back with an empty stack (the SDK's) and a reader
// can tell waiting time from running time.

import (
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// Kinds of sample in ProfilesBuilder.idleOf, besides the index of the
// sample's replacement stack in ProfilesBuilder.idleStacks.
const (
	sampleActive = -1 // not idle
	sampleIdle   = -2 // idle, its empty stack kept
)

// idleWorkPerInput bounds the work of finding common frames: at most this
// many frame comparisons per frame index and sample of the item (plus
// idleWorkFloor). vroom has no bound; a real SDK's profile needs far less
// (the captured browser profile of 768 samples, 481 idle, costs 979),
// while a payload built to pair deep stacks in many different ways could
// otherwise cost samples × depth. Past the bound the remaining idle
// samples keep their empty stacks (still marked idle): nothing the SDK
// sent is lost.
const (
	idleWorkPerInput = 4
	idleWorkFloor    = 1 << 16
)

// frameIdentity is what vroom compares frames by (frame.Frame.ID: file,
// function, line and instruction address); abs_path, colno, module and
// the rest do not count.
type frameIdentity struct {
	filename, function string
	lineno             uint32
	addr               uint64
}

// idleReplacer is the state of one item's idle pass: vroom's walk of each
// thread's samples in payload order.
type idleReplacer struct {
	b       *ProfilesBuilder
	p       *sentry.Profile
	classes []int32         // frame → its identity class (frames vroom takes as one)
	slots   map[int32]int32 // replacement stack → its index in b.idleStacks
	budget  int
	// The last pair of stacks and the replacement stack they gave: an
	// async function awaiting in a loop pairs the same stacks again.
	lastPrev, lastNext int64
	lastStack          int32
}

// findIdleSamples fills b.idleOf, one entry per Sentry sample: sampleActive,
// sampleIdle, or the index in b.idleStacks of the stack vroom gives the
// idle sample. It returns false, leaving b.idleOf empty, when the item is
// not a transaction profile of sampled stacks or has no empty stack.
func (b *ProfilesBuilder) findIdleSamples(p *sentry.Profile, start uint64) bool {
	b.idleOf, b.idleStacks = b.idleOf[:0], b.idleStacks[:0]
	if isV2(p) || hasDurations(p) || !b.anyIdleSample(p) {
		return false
	}
	idleOf := b.idleOf[:0]
	for i := range p.Samples {
		kind := int32(sampleActive)
		if b.sampleIsIdle(p, &p.Samples[i]) {
			kind = sampleIdle
		}
		idleOf = append(idleOf, kind)
	}
	b.idleOf = idleOf
	r := idleReplacer{
		b: b, p: p, slots: map[int32]int32{}, lastPrev: -1,
		budget: idleWorkFloor + idleWorkPerInput*(len(p.Stacks.FrameIndices)+len(p.Samples)),
	}
	b.forEachThreadRun(p, start, r.replaceThread)
	return true
}

// anyIdleSample reports whether a sample of p has a valid, empty stack.
func (b *ProfilesBuilder) anyIdleSample(p *sentry.Profile) bool {
	for i := range p.Samples {
		if b.sampleIsIdle(p, &p.Samples[i]) {
			return true
		}
	}
	return false
}

// sampleIsIdle: the sample's stack exists and has no frame (vroom's
// Stack.IsActive is false).
func (b *ProfilesBuilder) sampleIsIdle(p *sentry.Profile, s *sentry.Sample) bool {
	return s.StackID >= 0 && s.StackID < int64(len(b.stackIndices)) && b.stackIndices[s.StackID] >= 0 &&
		len(p.Stacks.At(int(s.StackID))) == 0
}

// forEachThreadRun calls f with the samples vroom sees of each thread, in
// payload order: those Relay keeps, whose stack and time are valid and,
// when the transaction has an end (relative_end_ns > 0), that lie within
// [relative_start_ns, relative_end_ns] (Relay drops the others before
// vroom sees the profile).
func (b *ProfilesBuilder) forEachThreadRun(p *sentry.Profile, start uint64, f func(run []int32)) {
	keep := b.idleCandidate(p, start)
	// A counting sort of the kept samples by thread, keeping payload order.
	nThreads := b.threads.Len()
	starts := make([]int32, nThreads+1)
	for i := range p.Samples {
		if keep(i) {
			starts[b.sampleThreads[i]+1]++
		}
	}
	for t := 1; t < len(starts); t++ {
		starts[t] += starts[t-1]
	}
	order := make([]int32, starts[nThreads])
	fill := append([]int32(nil), starts[:nThreads]...)
	for i := range p.Samples {
		if keep(i) {
			t := b.sampleThreads[i]
			order[fill[t]] = int32(i)
			fill[t]++
		}
	}
	for t := range nThreads {
		f(order[starts[t]:starts[t+1]])
	}
}

// idleCandidate tells whether sample i of p takes part in the idle
// replacement: a valid stack, a time, and inside the first transaction's
// "relative_start_ns".."relative_end_ns" when it gives one.
func (b *ProfilesBuilder) idleCandidate(p *sentry.Profile, start uint64) func(i int) bool {
	var lo, hi uint64
	if len(p.Transactions) > 0 && p.Transactions[0].RelativeEndNS > 0 {
		lo, hi = p.Transactions[0].RelativeStartNS, p.Transactions[0].RelativeEndNS
	}
	return func(i int) bool {
		s := &p.Samples[i]
		if _, ok := sampleTime(s, false, start); !ok || !b.validStack(s.StackID) {
			return false
		}
		return hi == 0 || (s.ElapsedSinceStartNS >= lo && s.ElapsedSinceStartNS <= hi)
	}
}

// validStack reports whether "stack_id" names a stack of the item that
// became a dictionary stack.
func (b *ProfilesBuilder) validStack(id int64) bool {
	return id >= 0 && id < int64(len(b.stackIndices)) && b.stackIndices[id] >= 0
}

// replaceThread is vroom's ReplaceIdleStacks on one thread's samples,
// detail for detail: an idle sample before the thread's first active one,
// or after its last, stays empty; a run of idle samples between two active
// ones takes the frames the active sample before the run (the previous
// one vroom remembers) and the one after it share from the root, as the
// earlier sample's frames. vroom's loop steps past the active sample that
// ends a run without remembering it, so the run after the next one pairs
// the same earlier sample with its own end.
func (r *idleReplacer) replaceThread(run []int32) {
	idleOf := r.b.idleOf
	prev := int64(-1) // Sentry stack of the previous active sample
	nextAt := 0       // where the next active sample is, once looked up
	var next int64
	for i := 0; i < len(run); i++ {
		s := &r.p.Samples[run[i]]
		if idleOf[run[i]] == sampleActive {
			prev = s.StackID
			continue
		}
		if prev < 0 {
			continue
		}
		if i >= nextAt {
			nextAt, next = r.nextActive(run, i)
			if nextAt < 0 {
				return // the rest of the thread is idle, and stays empty
			}
		}
		r.markIdle(run[i:nextAt], r.replacement(prev, next))
		// i goes to the active sample that ends the run: the loop's i++
		// steps past it, as vroom's does.
		i = nextAt
	}
}

// markIdle gives the idle samples of run the replacement stack slot k;
// none when k < 0 (no common stack within the budget).
func (r *idleReplacer) markIdle(run []int32, k int32) {
	if k < 0 {
		return
	}
	for _, i := range run {
		r.b.idleOf[i] = k
	}
}

// nextActive is the position in run of the first active sample at or
// after i and its stack, or -1.
func (r *idleReplacer) nextActive(run []int32, i int) (int, int64) {
	for ; i < len(run); i++ {
		if r.b.idleOf[run[i]] == sampleActive {
			return i, r.p.Samples[run[i]].StackID
		}
	}
	return -1, -1
}

// replacement is the index in b.idleStacks of the stack of the frames
// Sentry stacks prev and next share from the root (prev's frames), or -1
// when the work bound is spent.
func (r *idleReplacer) replacement(prev, next int64) int32 {
	if prev == r.lastPrev && next == r.lastNext {
		return r.lastStack
	}
	a, c := r.p.Stacks.At(int(prev)), r.p.Stacks.At(int(next))
	// Comparing costs at most the shorter stack, and building the common
	// stack as much again.
	if r.budget < 2*min(len(a), len(c))+1 {
		return -1
	}
	n := commonRoot(r.frameClasses(), a, c)
	r.budget -= 2*n + 1
	k := r.slotOf(r.b.stack(a[len(a)-n:])) // the root end of a leaf-first stack
	r.lastPrev, r.lastNext, r.lastStack = prev, next, k
	return k
}

// commonRoot is how many frames two leaf-first stacks share from their
// root, frames compared by class.
func commonRoot(classes []int32, a, c []int64) int {
	n := 0
	for n < len(a) && n < len(c) && classes[a[len(a)-1-n]] == classes[c[len(c)-1-n]] {
		n++
	}
	return n
}

// slotOf is the idle slot of dictionary stack stack, added once.
func (r *idleReplacer) slotOf(stack int32) int32 {
	k, ok := r.slots[stack]
	if !ok {
		k = int32(len(r.b.idleStacks))
		r.b.idleStacks = append(r.b.idleStacks, stack)
		r.slots[stack] = k
	}
	return k
}

// frameClasses numbers the frames by identity, once per item and only for
// an item that has idle samples between active ones.
func (r *idleReplacer) frameClasses() []int32 {
	if r.classes != nil {
		return r.classes
	}
	ids := make(map[frameIdentity]int32, len(r.p.Frames))
	classes := make([]int32, len(r.p.Frames))
	for i := range r.p.Frames {
		f := &r.p.Frames[i]
		key := frameIdentity{filename: f.Filename, function: f.Function, lineno: f.Lineno, addr: f.InstructionAddr}
		c, ok := ids[key]
		if !ok {
			c = int32(len(ids))
			ids[key] = c
		}
		classes[i] = c
	}
	r.classes = classes
	return classes
}
