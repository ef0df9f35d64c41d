package sentryclientreport

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// ItemType is the envelope item type this package reads.
const ItemType = "client_report"

// Outcomes: the list of the report a count came from. SDKs send
// "discarded_events"; the others are Relay's own lists, accepted in
// reports it forwards.
const (
	OutcomeDiscarded        = "discarded"         // "discarded_events"
	OutcomeRateLimited      = "rate_limited"      // "rate_limited_events"
	OutcomeFiltered         = "filtered"          // "filtered_events"
	OutcomeFilteredSampling = "filtered_sampling" // "filtered_sampling_events"
)

var lists = [...]struct{ member, outcome string }{
	{"discarded_events", OutcomeDiscarded},
	{"rate_limited_events", OutcomeRateLimited},
	{"filtered_events", OutcomeFiltered},
	{"filtered_sampling_events", OutcomeFilteredSampling},
}

// Discard is one count of a report.
type Discard struct {
	Outcome  string // which list it came from (Outcome*)
	Reason   string // "reason": queue_overflow, ratelimit_backoff, network_error, sample_rate, before_send, event_processor, buffer_overflow, …
	Category string // "category": error, transaction, span, log_item, profile_chunk, session, attachment, …
	Quantity int64  // "quantity"
}

// Report is one decoded client report.
type Report struct {
	// Timestamp is "timestamp", zero when absent.
	Timestamp pcommon.Timestamp
	// Discards holds every count, in the order of the lists above and of
	// each list.
	Discards []Discard
}

// Decode reads a client report. It fails (a *sentrysignal.DecodeError)
// when the payload is not a JSON object or is over the size limit, when a
// "timestamp" is present but not one, when a list is not an array, when
// the lists hold more than Options.MaxItems counts, or when a count has no
// reason or category or a quantity that is not a non-negative integer:
// the counts feed the receiver's own metrics, where a wrong number is
// worse than none.
func Decode(payload []byte, opts sentrysignal.Options) (*Report, error) {
	opts = opts.WithDefaults()
	doc, err := sentrysignal.DecodeObject(ItemType, payload, opts)
	if err != nil {
		return nil, err
	}
	r := &Report{}
	if doc["timestamp"] != nil {
		if r.Timestamp, err = sentrysignal.TimestampOf(doc["timestamp"]); err != nil {
			return nil, sentrysignal.PayloadError(ItemType, "timestamp", "not a timestamp", err)
		}
	}
	for _, l := range lists {
		if err := r.readList(doc[l.member], l.member, l.outcome, opts.MaxItems); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *Report) readList(x any, member, outcome string, limit int) error {
	if x == nil {
		return nil
	}
	entries, ok := x.([]any)
	if !ok {
		return sentrysignal.PayloadError(ItemType, member, "not an array", nil)
	}
	if len(r.Discards)+len(entries) > limit {
		return sentrysignal.PayloadError(ItemType, member, "more counts than the limit", nil)
	}
	for i, e := range entries {
		d, err := readDiscard(e, i, member, outcome)
		if err != nil {
			return err
		}
		r.Discards = append(r.Discards, d)
	}
	return nil
}

// readDiscard reads entry i of a list: "reason", "category" and a
// non-negative "quantity", all required.
func readDiscard(e any, i int, member, outcome string) (Discard, error) {
	entry, _ := e.(map[string]any)
	d := Discard{Outcome: outcome, Reason: sentrysignal.Str(entry, "reason"), Category: sentrysignal.Str(entry, "category")}
	q, ok := sentrysignal.Int(entry, "quantity")
	switch {
	case entry == nil:
		return d, sentrysignal.EntryError(ItemType, i, member, "not a JSON object", nil)
	case d.Reason == "":
		return d, sentrysignal.EntryError(ItemType, i, member+".reason", "missing", nil)
	case d.Category == "":
		return d, sentrysignal.EntryError(ItemType, i, member+".category", "missing", nil)
	case !ok || q < 0:
		return d, sentrysignal.EntryError(ItemType, i, member+".quantity", "not a non-negative integer", nil)
	}
	d.Quantity = q
	return d, nil
}
