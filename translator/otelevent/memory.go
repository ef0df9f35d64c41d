package otelevent

import (
	"hash/maphash"
	"slices"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// CumulativeMemory remembers the last point of each cumulative series, so
// that the next one can be sent as the delta Sentry's counters and
// distributions are. It holds at most its capacity of series (the oldest
// forgotten first: such a series' next point is then a first point again)
// and is safe for concurrent use.
type CumulativeMemory struct {
	mu      sync.Mutex
	started pcommon.Timestamp
	cap     int
	seed    maphash.Seed
	series  map[uint64]previous
	order   []uint64 // insertion order, for forgetting the oldest
}

// previous is the last point of a series, and the points before it whose
// answers are kept for a retry.
type previous struct {
	point
	// earlier are the points before it, oldest first, at most
	// retriedPoints: a retried request holding several points of the
	// series finds each one's answer.
	earlier []point
}

// point is one point of a series and what delta answered for it, answered
// again when the same point comes back (a retried request).
type point struct {
	start, ts pcommon.Timestamp
	values    []float64
	delta     []float64
	ok        bool
}

// retriedPoints is how many earlier points of a series keep their answer:
// an SDK sends one point per series and export, so a request rarely holds
// more (unless a batch processor merged several exports).
const retriedPoints = 4

// NewCumulativeMemory returns a memory of at most capacity series, started
// at now: a series whose first point starts at or after now began while
// this exporter was watching, so its first cumulative value is a delta
// nobody sent before.
func NewCumulativeMemory(capacity int, now pcommon.Timestamp) *CumulativeMemory {
	return &CumulativeMemory{started: now, cap: max(1, capacity), seed: maphash.MakeSeed(), series: map[uint64]previous{}}
}

// Len is the number of series remembered.
func (m *CumulativeMemory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.series)
}

// seriesBase identifies a metric of a resource; with a point's attributes,
// a series.
type seriesBase struct {
	resource uint64
	name     string
	attrs    uint64
}

func (b seriesBase) with(attrs pcommon.Map) seriesBase {
	b.attrs = mapHash(attrs)
	return b
}

// hashSeed is fixed per process, so that one series hashes the same in every
// request.
var hashSeed = maphash.MakeSeed()

// mapHash hashes an attribute set independent of its order.
func mapHash(m pcommon.Map) uint64 {
	keys := make([]string, 0, m.Len())
	for k := range m.All() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var h maphash.Hash
	h.SetSeed(hashSeed)
	for _, k := range keys {
		v, _ := m.Get(k)
		_, _ = h.WriteString(k)
		_ = h.WriteByte(0)
		_, _ = h.WriteString(v.AsString())
		_ = h.WriteByte(0)
	}
	return h.Sum64()
}

func (m *CumulativeMemory) key(s seriesBase) uint64 {
	var h maphash.Hash
	h.SetSeed(m.seed)
	var b [16]byte
	for i := 0; i < 8; i++ {
		b[i] = byte(s.resource >> (8 * i))
		b[8+i] = byte(s.attrs >> (8 * i))
	}
	_, _ = h.Write(b[:])
	_, _ = h.WriteString(s.name)
	return h.Sum64()
}

// delta returns values minus the series' previous values (values[0] is the
// count or the sum, which only grows), and remembers values. ok is false
// when there is no well-defined delta: the first point of a series that
// started before this memory did (or has no start time).
func (m *CumulativeMemory) delta(s seriesBase, start, ts pcommon.Timestamp, values []float64) ([]float64, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := m.key(s)
	prev, seen := m.series[k]
	if seen {
		// The same point again: a retry of a request whose first try did
		// not reach Sentry. It stands for the same delta.
		for _, p := range slices.Concat(prev.earlier, []point{prev.point}) {
			if p.ts == ts && slices.Equal(p.values, values) {
				return slices.Clone(p.delta), p.ok
			}
		}
		if ts < prev.ts {
			// A late point: the later one already counted what it holds.
			return make([]float64, len(values)), true
		}
	}
	delta, ok := m.diff(seen, prev.point, start, values)
	next := previous{point: point{start: start, ts: ts, values: slices.Clone(values), delta: delta, ok: ok}}
	if seen {
		next.earlier = slices.Concat(prev.earlier, []point{prev.point})
		if len(next.earlier) > retriedPoints {
			next.earlier = next.earlier[len(next.earlier)-retriedPoints:]
		}
	}
	m.remember(k, seen, next)
	return slices.Clone(delta), ok
}

// diff is values minus the previous point's, or the values themselves when
// the series (re)started while this memory watched.
func (m *CumulativeMemory) diff(seen bool, prev point, start pcommon.Timestamp, values []float64) ([]float64, bool) {
	if seen && prev.start == start && len(prev.values) == len(values) && values[0] >= prev.values[0] {
		out := make([]float64, len(values))
		for i := range values {
			out[i] = values[i] - prev.values[i]
		}
		return out, true
	}
	// First point, or the series restarted (new start, a smaller count,
	// other buckets): the value counts from start, so it is the delta when
	// the series (re)started while we were watching.
	if start != 0 && (seen || start >= m.started) {
		return slices.Clone(values), true
	}
	return nil, false
}

func (m *CumulativeMemory) remember(k uint64, seen bool, p previous) {
	if !seen {
		for len(m.series) >= m.cap && len(m.order) > 0 {
			delete(m.series, m.order[0])
			m.order = m.order[1:]
		}
		m.order = append(m.order, k)
	}
	m.series[k] = p
}
