package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"sync"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
)

// An SDK sends a user report (sentry-python 1.x: {"event_id", "name",
// "email", "comments"}) or a feedback naming its event
// (contexts.feedback.associated_event_id) in an envelope of its own, with
// no release, environment or SDK of its own. Sentry attaches such a report
// to its event; here it takes the resource its event was sent under, which
// the receiver remembers for a while by project and event id.
const (
	// rememberedEvents bounds the events remembered: a Resource is a few
	// hundred bytes, so 10,000 of them are a few MB. An event pushed out
	// by newer ones leaves its late feedback under the envelope's own
	// resource (counted as not_seen).
	rememberedEvents = 10_000
	// rememberEventsFor is how long an event's resource is kept: the SDKs'
	// report dialogs are answered within minutes of the error.
	rememberEventsFor = time.Hour
)

// eventResources remembers the resource of recent events by project and
// event id, bounded by count (oldest first out) and age. It is safe for
// concurrent use.
type eventResources struct {
	mu    sync.Mutex
	ttl   time.Duration
	now   func() time.Time
	byKey map[eventKey]rememberedEvent
	// ring holds the keys in the order they were remembered; next is
	// where the next one goes, overwriting (and forgetting) the oldest.
	ring []eventKey
	next int
}

type eventKey struct{ projectID, eventID string }

type rememberedEvent struct {
	resource sentryresource.Resource
	at       time.Time
	slot     int // the ring slot that holds this key
}

func newEventResources(capacity int, ttl time.Duration) *eventResources {
	return &eventResources{
		ttl:   ttl,
		now:   time.Now,
		byKey: make(map[eventKey]rememberedEvent, capacity),
		ring:  make([]eventKey, capacity),
	}
}

// remember keeps res as the resource of the project's event.
func (e *eventResources) remember(projectID, eventID string, res sentryresource.Resource) {
	if eventID == "" || len(e.ring) == 0 {
		return
	}
	key := eventKey{projectID, eventID}
	e.mu.Lock()
	defer e.mu.Unlock()
	if old, ok := e.byKey[key]; ok {
		// The same event again (an SDK retry): refresh it in its slot.
		e.byKey[key] = rememberedEvent{resource: res, at: e.now(), slot: old.slot}
		return
	}
	if oldest := e.ring[e.next]; oldest != (eventKey{}) {
		delete(e.byKey, oldest)
	}
	e.ring[e.next] = key
	e.byKey[key] = rememberedEvent{resource: res, at: e.now(), slot: e.next}
	e.next = (e.next + 1) % len(e.ring)
}

// lookup returns the resource remembered for the project's event, if it
// is younger than the memory's age bound.
func (e *eventResources) lookup(projectID, eventID string) (sentryresource.Resource, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.byKey[eventKey{projectID, eventID}]
	if !ok || e.now().Sub(r.at) > e.ttl {
		return sentryresource.Resource{}, false
	}
	return r.resource, true
}
