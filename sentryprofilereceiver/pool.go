package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// The per-envelope state the receiver reuses from one envelope to the next.

import (
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

// translation is what an envelope reuses from the one before: the envelope
// reader's buffers, the decoded profile's arrays and the builder's maps and
// scratch space.
type translation struct {
	reader  *envelope.Reader
	items   []envelope.Item
	decoder translator.ItemDecoder
	builder *translator.ProfilesBuilder

	// Of the envelope header: the SDK that sent it (for the drop log) and
	// sent_at (the fallback time of a V1 profile without timestamp).
	sdkName string
	sentAt  string
	// arrived is when the envelope arrived: the fallback time when sent_at
	// is absent or unreadable.
	arrived time.Time

	// segments are the envelope's transaction and span items, decoded once
	// for the span index and the traces signal.
	segments []decodedSegment
	// released marks the translation of a chunk that was held: it is not
	// held again.
	released bool
}

// decodedSegment is one transaction or span item, decoded (seg) or not
// (err).
type decodedSegment struct {
	item int
	seg  *sentrytrace.Segment
	err  error
}

func (h *envelopeHandler) getTranslation() *translation {
	select {
	case t := <-h.warm:
		return t
	default:
	}
	if t, ok := h.translations.Get().(*translation); ok {
		return t
	}
	return &translation{builder: translator.NewProfilesBuilder(translator.ReceiveOptions{})}
}

func (h *envelopeHandler) putTranslation(t *translation) {
	// The items' payloads live in the reader's memory, which the next
	// envelope reuses; the request body is let go with its connection.
	clear(t.items)
	t.items = t.items[:0]
	clear(t.segments)
	t.segments = t.segments[:0]
	t.sdkName, t.sentAt, t.arrived, t.released = "", "", time.Time{}, false
	if t.reader != nil {
		t.reader.Reset(nil, envelope.Limits{})
	}
	select {
	case h.warm <- t:
	default:
		h.translations.Put(t)
	}
}
