package translator

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/art"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/perfetto"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// ItemDecoder reads one profile item by the rules the receiver and
// sentryprof share: its size, its format (the sample format, an Android ART
// method trace, an Android Perfetto chunk), Relay's normalization and checks
// in the chosen mode, and the V1 timestamp fallback. It keeps a
// sentry.Decoder's memory from one item to the next and is not safe for
// concurrent use; the zero value checks leniently with no size limit.
type ItemDecoder struct {
	Mode    sentry.Mode
	MaxSize int64 // bytes; 0 for no limit

	decoder sentry.Decoder
}

// Decode reads item. fallback is when the profile was sent (the envelope's
// sent_at, else its arrival), for profiles that do not say when they start.
// On a validation error the decoded profile comes back too, for the drop
// log; warnings are the Relay rules a kept item breaks. The profile lives
// in the decoder's memory until the next Decode.
func (d *ItemDecoder) Decode(item *envelope.Item, fallback time.Time) (*sentry.Profile, []*sentry.Error, *sentry.Error) {
	if item.Oversized || (d.MaxSize > 0 && item.Size > d.MaxSize) {
		return nil, nil, sentry.NewError(sentry.ReasonExceedSizeLimit, fmt.Sprintf("%d bytes, limit %d", item.Size, d.MaxSize))
	}
	// An Android Perfetto chunk: JSON metadata (meta_length bytes of the
	// item), then a binary Perfetto trace.
	if strings.Contains(item.Header.ContentType, "perfetto") {
		metaLen, ok := PerfettoMetaLength(item.Header.Raw)
		if !ok || metaLen > len(item.Payload) {
			return nil, nil, sentry.NewError(sentry.ReasonInvalidSampledProfile, "Perfetto chunk without a meta_length inside the item")
		}
		p, err := DecodePerfettoChunk(item.Payload[:metaLen], item.Payload[metaLen:], fallback, perfetto.DefaultLimits())
		return p, nil, asItemError(err, sentry.ReasonInvalidSampledProfile)
	}
	p, err := d.decoder.Decode(item.Payload)
	if err != nil {
		serr := asItemError(err, sentry.ReasonInvalidJSON)
		// An Android payload with an ART method trace is read by its own
		// decoder; its samples are valid by construction, and Relay's
		// sample-format rules do not apply to it.
		if serr.Reason == sentry.ReasonPlatformNotSupported && IsAndroidTrace(item.Payload) {
			p, warnings, err := DecodeAndroid(item.Payload, fallback, art.DefaultLimits())
			return p, warnings, asItemError(err, sentry.ReasonInvalidSampledProfile)
		}
		return nil, nil, serr
	}
	sentry.Normalize(p)
	warnings, err := sentry.Check(p, sentry.DefaultLimits(), d.Mode)
	if err != nil {
		return p, nil, asItemError(err, sentry.ReasonMissingProfileMetadata)
	}
	if p.Version == sentry.VersionV1 && p.Timestamp.IsZero() {
		// Without its timestamp a V1 profile's samples would sit at 1970;
		// the time it was sent is the closest the envelope says.
		p.Timestamp = fallback.UTC()
	}
	return p, warnings, nil
}

// asItemError is err as a *sentry.Error, with fallback as its reason when
// it is not one; nil for nil.
func asItemError(err error, fallback sentry.Reason) *sentry.Error {
	if err == nil {
		return nil
	}
	var serr *sentry.Error
	if errors.As(err, &serr) {
		return serr
	}
	e := sentry.NewError(fallback, "")
	e.Err = err
	return e
}
