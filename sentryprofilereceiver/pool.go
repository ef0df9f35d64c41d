package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// The per-envelope state the receiver reuses from one envelope to the next,
// and the slots that bound how many envelopes use it at once.

import (
	"context"
	"sync"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/itemrules"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

// envelopeState is what an envelope reuses from the one before: the envelope
// reader's buffers, the decoded profile's arrays and the builder's maps and
// scratch space.
type envelopeState struct {
	reader  *envelope.Reader
	items   []envelope.Item
	decoder itemrules.ItemDecoder
	builder *profilesin.ProfilesBuilder

	// Of the envelope header: the SDK that sent it (for the drop log) and
	// sent_at (the fallback time of a V1 profile without timestamp).
	sdkName string
	sentAt  string
	// arrived is when the envelope arrived: the fallback time when sent_at
	// is absent or unreadable.
	arrived time.Time

	// traceItems are the envelope's transaction and span items, decoded
	// once (sentrytrace.AppendItems) for the span index, the traces signal
	// and the profiles.
	traceItems []sentrytrace.Item
	// released marks the state of a chunk that was held: it is not
	// held again.
	released bool
}

// envelopeStatePool keeps envelope states for the next envelopes. warm keeps
// one per core across garbage collections, which under load run every few
// milliseconds and would otherwise empty the sync.Pool and make the next
// envelopes grow their buffers again; the rest come and go with the load.
type envelopeStatePool struct {
	warm chan *envelopeState
	rest sync.Pool
}

func newEnvelopeStatePool(warm int) *envelopeStatePool {
	return &envelopeStatePool{warm: make(chan *envelopeState, warm)}
}

func (p *envelopeStatePool) get() *envelopeState {
	select {
	case t := <-p.warm:
		return t
	default:
	}
	if t, ok := p.rest.Get().(*envelopeState); ok {
		return t
	}
	return &envelopeState{builder: profilesin.NewProfilesBuilder(profilesin.ReceiveOptions{})}
}

func (p *envelopeStatePool) put(t *envelopeState) {
	// The items' payloads live in the reader's memory, which the next
	// envelope reuses; the request body is let go with its connection.
	clear(t.items)
	t.items = t.items[:0]
	clear(t.traceItems)
	t.traceItems = t.traceItems[:0]
	t.sdkName, t.sentAt, t.arrived, t.released = "", "", time.Time{}, false
	if t.reader != nil {
		t.reader.Reset(nil, envelope.Limits{})
	}
	select {
	case p.warm <- t:
	default:
		p.rest.Put(t)
	}
}

// envelopeSlots holds one token per envelope being read or translated:
// a request waits for one before it reads its body, so a waiting request
// costs a connection, not its envelope's memory.
type envelopeSlots chan struct{}

// acquire waits for a slot; false when ctx ended first (the client is
// gone, or the shutdown deadline passed).
func (s envelopeSlots) acquire(ctx context.Context) bool {
	select {
	case s <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s envelopeSlots) release() { <-s }
