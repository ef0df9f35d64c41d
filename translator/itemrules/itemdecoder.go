package itemrules

// The envelope's profile items, read by one set of rules for the receiver
// and sentryprof: which items are profiles, how each is decoded (Decode),
// Relay's one-profile-per-transaction rule, the time a profile without one
// starts at, and which transaction a V1 profile belongs to (ProfileItems).

import (
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/android"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/art"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/profileschema"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/sentrytime"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/perfetto"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryid"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/traceitems"
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
	if d.tooLarge(item) {
		return nil, nil, sentry.NewError(sentry.ReasonExceedSizeLimit, fmt.Sprintf("%d bytes, limit %d", item.Size, d.MaxSize))
	}
	if strings.Contains(item.Header.ContentType, "perfetto") {
		p, err := decodePerfettoItem(item, fallback)
		return p, nil, err
	}
	p, err := d.decoder.Decode(item.Payload)
	if err != nil {
		return decodeOtherFormat(item, fallback, asItemError(err, sentry.ReasonInvalidJSON))
	}
	sentry.Normalize(p)
	warnings, err := sentry.Check(p, sentry.DefaultLimits(), d.Mode)
	if err != nil {
		return p, nil, asItemError(err, sentry.ReasonMissingProfileMetadata)
	}
	startAtFallback(p, fallback)
	return p, warnings, nil
}

// startAtFallback gives a V1 profile without "timestamp" the time it was
// sent: without one its samples would sit at 1970, and the time it was
// sent is the closest the envelope says.
func startAtFallback(p *sentry.Profile, fallback time.Time) {
	if p.Version == sentry.VersionV1 && p.Timestamp.IsZero() {
		p.Timestamp = fallback.UTC()
	}
}

// tooLarge reports whether an item is past d's size limit, or was not
// read for its size.
func (d *ItemDecoder) tooLarge(item *envelope.Item) bool {
	return item.Oversized || (d.MaxSize > 0 && item.Size > d.MaxSize)
}

// decodePerfettoItem reads an Android Perfetto chunk: JSON metadata
// (meta_length bytes of the item), then a binary Perfetto trace.
func decodePerfettoItem(item *envelope.Item, fallback time.Time) (*sentry.Profile, *sentry.Error) {
	metaLen, ok := android.PerfettoMetaLength(item.Header.Raw)
	if !ok || metaLen > len(item.Payload) {
		return nil, sentry.NewError(sentry.ReasonInvalidSampledProfile, "Perfetto chunk without a meta_length inside the item")
	}
	p, err := android.DecodePerfettoChunk(item.Payload[:metaLen], item.Payload[metaLen:], fallback, perfetto.DefaultLimits())
	return p, asItemError(err, sentry.ReasonInvalidSampledProfile)
}

// decodeOtherFormat reads an item the sample-format decoder refused with
// serr: an Android payload with an ART method trace is read by its own
// decoder (its samples are valid by construction, and Relay's
// sample-format rules do not apply to it); anything else stays refused.
func decodeOtherFormat(item *envelope.Item, fallback time.Time, serr *sentry.Error) (*sentry.Profile, []*sentry.Error, *sentry.Error) {
	if serr.Reason != sentry.ReasonPlatformNotSupported || !android.IsAndroidTrace(item.Payload) {
		return nil, nil, serr
	}
	p, warnings, err := android.DecodeAndroid(item.Payload, fallback, art.DefaultLimits())
	return p, warnings, asItemError(err, sentry.ReasonInvalidSampledProfile)
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

// Envelope item types the translator reads.
const (
	ItemTypeProfile        = "profile"          // V1, bound to the envelope's transaction
	ItemTypeProfileChunk   = "profile_chunk"    // V2 (continuous profiling)
	ItemTypeProfileChunkUI = "profile_chunk_ui" // alias of profile_chunk some Android SDKs send
)

// MaxProfileItemBytes is Relay's limit for one profile item (50 MiB).
const MaxProfileItemBytes = profileschema.MaxProfileItemBytes

// IsProfileItem reports whether an item of type itemType holds a profile:
// profile, profile_chunk or profile_chunk_ui.
func IsProfileItem(itemType string) bool {
	switch itemType {
	case ItemTypeProfile, ItemTypeProfileChunk, ItemTypeProfileChunkUI:
		return true
	}
	return false
}

// FallbackTime is when an envelope was sent: its header's sent_at (RFC 3339)
// in UTC, or otherwise (in UTC) when sent_at is absent or unreadable. A V1
// profile without timestamp, an Android trace and a Perfetto chunk start
// there.
func FallbackTime(sentAt string, otherwise time.Time) time.Time {
	if sentAt != "" {
		if ts, err := sentrytime.ParseRFC3339(sentAt); err == nil {
			return ts.Time().UTC()
		}
	}
	return otherwise.UTC()
}

// EnvelopeItems is one envelope as ItemDecoder.ProfileItems reads it.
type EnvelopeItems struct {
	// Items are the envelope's items in envelope order.
	Items []envelope.Item
	// SentAt is the envelope header's sent_at, verbatim ("" when absent).
	SentAt string
	// Arrival is when the envelope arrived (or now): the fallback time when
	// SentAt is absent or unreadable.
	Arrival time.Time
	// TraceItems are the envelope's transaction and span items, decoded
	// once by the caller (sentrytrace.AppendItems) for every signal that reads
	// them, in envelope order. The envelope's resource starts from them, and
	// a V1 profile links to one of its transactions.
	TraceItems []sentrytrace.Item
	// Held, when not nil, has one entry per item: true for a profile item
	// the caller keeps to decode later. A held item yields nothing and does
	// not count for the one-V1-profile rule (the receiver holds chunks for
	// the spans that arrive after them).
	Held []bool
}

// OutcomeKind says what became of one envelope item.
type OutcomeKind uint8

const (
	// ItemAccepted: a profile item decoded and passed the checks.
	ItemAccepted OutcomeKind = iota + 1
	// ItemRefused: a profile item was refused.
	ItemRefused
	// TransactionUnreadable: a transaction item a V1 profile could link to
	// is oversized or does not decode. The envelope's V1 profiles are still
	// read, without that transaction.
	TransactionUnreadable
)

// ItemOutcome is what ItemDecoder.ProfileItems says about one item.
type ItemOutcome struct {
	Kind  OutcomeKind
	Index int // the item's place in the envelope, from 0

	// Decoded is, for ItemAccepted, what ProfilesBuilder.Add takes: the
	// profile, the transaction it belongs to (V1 only) and the payload. For
	// ItemRefused, Decoded.Profile is the decoded profile when the item decoded
	// before it was refused (for a drop log), else nil.
	Decoded profilesin.DecodedProfile
	// Warnings are, for ItemAccepted in lenient mode, the Relay rules the
	// item breaks, each located at Index.
	Warnings []*sentry.Error
	// Err is why, for ItemRefused and TransactionUnreadable, located at
	// Index.
	Err *sentry.Error
}

// ProfileItems reads the profile items of an envelope (profile,
// profile_chunk, profile_chunk_ui) and yields one outcome for each, in
// envelope order, and one for each transaction item a V1 profile could not
// read. Items of other types yield nothing.
//
// Each profile item is read by Decode, with d's mode and size limit and the
// fallback time FallbackTime(env.SentAt, env.Arrival). Relay keeps the first
// V1 profile item (type profile) of an envelope, since a transaction has one
// profile: later ones are refused with sentry.ReasonTooManyProfiles before
// they are decoded. Chunks are not limited.
//
// Trace items are not decoded here: env.TraceItems are, once, by the
// caller. Unreadable transactions are reported only when the envelope has
// a V1 profile item. The envelope's resource (DecodedProfile.Resource, shared by its
// accepted items) is filled from its trace items, in envelope order, then from
// each profile as it is read. A
// V1 profile gets the transaction whose event_id is the id of any of its
// transactions (ids compared as 32 hex digits, case and dashes aside), else
// the envelope's first readable transaction, else none; V2 chunks get none.
//
// An accepted profile lives in d's memory until the next Decode, which runs
// when the loop asks for the next outcome: consume it (add it to a
// ProfilesBuilder) in the loop body. d is not safe for concurrent use, and
// the sequence must not be iterated twice at once.
func (d *ItemDecoder) ProfileItems(env EnvelopeItems) iter.Seq[ItemOutcome] {
	return func(yield func(ItemOutcome) bool) {
		if !hasProfileItem(env.Items) {
			return
		}
		r := newEnvelopeRead(d, env)
		for i := range env.Items {
			if out, ok := r.item(i); ok && !yield(out) {
				return
			}
		}
	}
}

// envelopeRead is the state of one ProfileItems pass over an envelope.
type envelopeRead struct {
	d   *ItemDecoder
	env EnvelopeItems
	// txs are the envelope's transactions, collected first (a transaction
	// item may follow its profile); first the first readable one; next the
	// next entry of txs to report, if unreadable.
	txs   []envelopeTransaction
	first *sentrytrace.Segment
	next  int
	// resource is the envelope's: its trace items' fields, then each
	// profile's as it is read; every profile shares it
	// (DecodedProfile.Resource).
	resource   *sentryresource.Resource
	fallback   time.Time
	v1Profiles int
}

func newEnvelopeRead(d *ItemDecoder, env EnvelopeItems) *envelopeRead {
	txs := envelopeTransactions(env.Items, env.TraceItems)
	r := &envelopeRead{d: d, env: env, txs: txs, first: firstReadable(txs),
		resource: new(sentryresource.Resource), fallback: FallbackTime(env.SentAt, env.Arrival)}
	for _, t := range env.TraceItems {
		if t.Segment != nil {
			r.resource.Fill(traceitems.ResourceOfSegment(t.Segment))
		}
	}
	return r
}

// item is the outcome of item i, false when it has none: an item of
// another type, a held profile, a readable transaction.
func (r *envelopeRead) item(i int) (ItemOutcome, bool) {
	item := &r.env.Items[i]
	switch {
	case item.Header.Type == sentrytrace.ItemTypeTransaction:
		return r.transaction(i)
	case !IsProfileItem(item.Header.Type) || r.held(i):
		return ItemOutcome{}, false
	case item.Header.Type == ItemTypeProfile && r.tooManyProfiles():
		err := sentry.NewError(sentry.ReasonTooManyProfiles, "a transaction has one profile").AtItem(i)
		return ItemOutcome{Kind: ItemRefused, Index: i, Decoded: profilesin.DecodedProfile{Payload: item.Payload}, Err: err}, true
	}
	return r.profile(i, item), true
}

// held reports whether the caller keeps item i to decode later
// (EnvelopeItems.Held).
func (r *envelopeRead) held(i int) bool { return r.env.Held != nil && r.env.Held[i] }

// transaction is the outcome of transaction item i: TransactionUnreadable
// when a V1 profile could not read it.
func (r *envelopeRead) transaction(i int) (ItemOutcome, bool) {
	if r.next >= len(r.txs) || r.txs[r.next].index != i {
		return ItemOutcome{}, false
	}
	tx := r.txs[r.next]
	r.next++
	if tx.err == nil {
		return ItemOutcome{}, false
	}
	return ItemOutcome{Kind: TransactionUnreadable, Index: i, Err: tx.err}, true
}

// tooManyProfiles counts a V1 profile item before it is decoded, as Relay
// does: a second one is refused even when the first was invalid.
func (r *envelopeRead) tooManyProfiles() bool {
	r.v1Profiles++
	return r.v1Profiles > 1
}

// profile decodes profile item i: refused, or accepted with its
// transaction (V1) and the envelope's resource, filled with its own.
func (r *envelopeRead) profile(i int, item *envelope.Item) ItemOutcome {
	p, warnings, serr := r.d.Decode(item, r.fallback)
	if serr != nil {
		return ItemOutcome{Kind: ItemRefused, Index: i, Decoded: profilesin.DecodedProfile{Profile: p, Payload: item.Payload}, Err: serr.AtItem(i)}
	}
	for k, w := range warnings {
		warnings[k] = w.AtItem(i)
	}
	r.resource.Fill(profilesin.ResourceOfProfile(p))
	return ItemOutcome{Kind: ItemAccepted, Index: i, Warnings: warnings,
		Decoded: profilesin.DecodedProfile{Profile: p, Transaction: transactionFor(p, r.txs, r.first), Payload: item.Payload, Resource: r.resource}}
}

// hasProfileItem reports whether any item holds a profile.
func hasProfileItem(items []envelope.Item) bool {
	for i := range items {
		if IsProfileItem(items[i].Header.Type) {
			return true
		}
	}
	return false
}

// envelopeTransaction is one transaction item of an envelope: decoded (seg,
// with its canonical event id) or not (err).
type envelopeTransaction struct {
	index int
	id    string // sentryid.Normalize(event_id); "" when it is not an id
	seg   *sentrytrace.Segment
	err   *sentry.Error
}

// envelopeTransactions are the transaction items among traceItems, in
// envelope order, when the envelope has a V1 profile item; nil otherwise,
// since only a V1 profile links to the envelope's transaction.
func envelopeTransactions(items []envelope.Item, traceItems []sentrytrace.Item) []envelopeTransaction {
	if !hasItemOfType(items, ItemTypeProfile) {
		return nil
	}
	var txs []envelopeTransaction
	for _, t := range traceItems {
		if item := &items[t.Index]; item.Header.Type == sentrytrace.ItemTypeTransaction {
			txs = append(txs, transactionOfItem(item, t))
		}
	}
	return txs
}

// hasItemOfType reports whether any item is of type typ.
func hasItemOfType(items []envelope.Item, typ string) bool {
	for i := range items {
		if items[i].Header.Type == typ {
			return true
		}
	}
	return false
}

// transactionOfItem is transaction item t: its segment, or why there is
// none to link to.
func transactionOfItem(item *envelope.Item, t sentrytrace.Item) envelopeTransaction {
	switch {
	case item.Oversized:
		// The reader skipped it: there is nothing to link to.
		return envelopeTransaction{index: t.Index,
			err: sentry.NewError(sentry.ReasonExceedSizeLimit, fmt.Sprintf("transaction of %d bytes not read", item.Size)).AtItem(t.Index)}
	case t.Err != nil || t.Segment == nil:
		return envelopeTransaction{index: t.Index, err: asItemError(traceItemErr(t.Err), sentry.ReasonInvalidJSON).AtItem(t.Index)}
	}
	return envelopeTransaction{index: t.Index, id: sentryid.Normalize(t.Segment.EventID), seg: t.Segment}
}

// traceItemErr is err, or an error saying a trace item has no segment.
func traceItemErr(err error) error {
	if err == nil {
		return errors.New("transaction: no segment")
	}
	return err
}

// firstReadable is the envelope's first transaction that decoded; nil when
// none did.
func firstReadable(txs []envelopeTransaction) *sentrytrace.Segment {
	for _, t := range txs {
		if t.seg != nil {
			return t.seg
		}
	}
	return nil
}

// transactionFor is the transaction a V1 profile belongs to: the one whose
// event_id any of its transactions names, else first (the envelope's first
// readable one). A V2 chunk is not bound to a transaction.
func transactionFor(p *sentry.Profile, txs []envelopeTransaction, first *sentrytrace.Segment) *sentrytrace.Segment {
	if p.Version == sentry.VersionV2 || first == nil {
		return nil
	}
	for _, named := range p.Transactions {
		if seg := transactionByID(txs, sentryid.Normalize(named.ID)); seg != nil {
			return seg
		}
	}
	return first
}

// transactionByID is the decoded transaction whose canonical event id is
// id; nil for none, and for id "" (not an id).
func transactionByID(txs []envelopeTransaction, id string) *sentrytrace.Segment {
	if id == "" {
		return nil
	}
	for _, t := range txs {
		if t.seg != nil && t.id == id {
			return t.seg
		}
	}
	return nil
}
