package sentrysession

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// aggregateStatuses are the counts of an aggregate bucket in the order
// their points are written: each is the number of sessions that started in
// the bucket and ended so. "errored" sessions exited after an error.
var aggregateStatuses = [...]struct {
	member, status string
	errored        bool
}{
	{"exited", "exited", false},
	{"errored", "exited", true},
	{"unhandled", "unhandled", true},
	{"crashed", "crashed", true},
	{"abnormal", "abnormal", true},
}

// maxBucketCount is the largest count of a status in a bucket: Relay
// reads them as u32 and refuses larger ones. It also keeps the bucket's
// sum of five counts far inside int64.
const maxBucketCount = math.MaxUint32

// AppendSessions appends the metric points of a "sessions" item (counts
// per bucket of sessions that started in it and how they ended) and
// returns their number. A bucket that cannot be read is dropped alone (a
// *sentrysignal.PartialError names it); a payload that is not an
// aggregate appends nothing (a *sentrysignal.DecodeError).
func AppendSessions(payload []byte, opts sentrysignal.Options, dst pmetric.MetricSlice) (int, error) {
	opts = opts.WithDefaults()
	doc, err := decodeObject(ItemSessions, payload, opts)
	if err != nil {
		return 0, err
	}
	buckets, ok := doc["aggregates"].([]any)
	if !ok {
		return 0, sentrysignal.PayloadError(ItemSessions, "aggregates", "not an array", nil)
	}
	if len(buckets) > opts.MaxItems {
		return 0, sentrysignal.PayloadError(ItemSessions, "aggregates", "more buckets than the limit", nil)
	}
	attrs := sentrysignal.Obj(doc, "attrs")
	l := labels{sentrysignal.Text(attrs, "release"), sentrysignal.Str(attrs, "environment")}
	set := metricSet{dst: dst}
	partial := sentrysignal.PartialError{Item: ItemSessions}
	for i, b := range buckets {
		if de := appendBucket(&set, b, l, i); de != nil {
			partial.Add(de)
		}
	}
	return set.points, partial.Err()
}

// appendBucket writes one bucket: started = the sum of its counts, at
// "started"; each non-zero count to ended by status; the error counts to
// errored.
func appendBucket(set *metricSet, b any, l labels, index int) *sentrysignal.DecodeError {
	bucket, ok := b.(map[string]any)
	if !ok {
		return sentrysignal.EntryError(ItemSessions, index, "", "not a JSON object", nil)
	}
	ts, err := sentrysignal.TimestampOf(bucket["started"])
	if err != nil {
		return sentrysignal.EntryError(ItemSessions, index, "started", "not a timestamp", err)
	}
	var counts [len(aggregateStatuses)]int64
	var total, errored int64
	for i, s := range aggregateStatuses {
		n, present := sentrysignal.Int(bucket, s.member)
		if bucket[s.member] != nil && (!present || n < 0 || n > maxBucketCount) {
			return sentrysignal.EntryError(ItemSessions, index, s.member, "not a count from 0 to 4294967295", nil)
		}
		counts[i] = n
		total += n
		if s.errored {
			errored += n
		}
	}
	if total == 0 {
		return nil
	}
	// "started": every session of the bucket started in it
	set.count(MetricStarted, ts, total, l)
	// "exited", "errored", "unhandled", "crashed", "abnormal"
	for i, s := range aggregateStatuses {
		if counts[i] == 0 {
			continue
		}
		dp := set.count(MetricEnded, ts, counts[i], l)
		dp.Attributes().PutStr(AttrStatus, s.status)
		dp.Attributes().PutBool(AttrErrored, s.errored)
	}
	if errored > 0 {
		set.count(MetricErrored, ts, errored, l)
	}
	return nil
}
