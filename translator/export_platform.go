package translator

import "sync"

// PlatformMemory remembers the platform of each profiler across FromProfiles
// calls, so that every chunk of a profiler has one platform: Relay routes
// chunks by platform, and Sentry shows a profiler's chunks together only
// when they agree. It holds at most its capacity of profilers, forgetting
// the oldest first. Safe for concurrent use; the zero value is not usable:
// call NewPlatformMemory.
type PlatformMemory struct {
	mu       sync.Mutex
	capacity int
	byID     map[string]string
	order    []string // profiler ids, oldest first: a ring of capacity entries
	next     int
}

// NewPlatformMemory returns a memory of up to capacity profilers (at least 1).
func NewPlatformMemory(capacity int) *PlatformMemory {
	capacity = max(capacity, 1)
	return &PlatformMemory{capacity: capacity, byID: make(map[string]string), order: make([]string, 0, capacity)}
}

// settle returns the platform a profiler's chunk gets, given the platform
// its own frames voted for. The first platform other than native that a
// profiler gets is its platform from then on: native frames (the kernel,
// libc) run under every runtime, so a window with only those says nothing
// about the process. A profiler that never showed anything else stays
// native.
func (m *PlatformMemory) settle(profilerID, voted string) string {
	if m == nil {
		return voted
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if known, ok := m.byID[profilerID]; ok {
		if known != "native" || voted == "native" {
			return known
		}
		m.byID[profilerID] = voted
		return voted
	}
	if len(m.order) < m.capacity {
		m.order = append(m.order, profilerID)
	} else {
		delete(m.byID, m.order[m.next])
		m.order[m.next] = profilerID
		m.next = (m.next + 1) % m.capacity
	}
	m.byID[profilerID] = voted
	return voted
}
