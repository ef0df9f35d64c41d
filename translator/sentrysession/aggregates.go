package sentrysession

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
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

// AggregateMetrics is the router's contract for a "sessions" item: the
// metric points of its buckets (counts per bucket of sessions that started
// in it and how they ended), and, when it has any, the resource their
// attrs.release and attrs.environment name. A bucket that cannot be read
// is dropped alone (a *sentrysignal.PartialError names it); a payload that
// is not an aggregate gives nothing (a *sentrysignal.DecodeError).
func AggregateMetrics(payload []byte, opts sentrysignal.Options) (sentrysignal.Metrics, error) {
	opts = opts.WithDefaults()
	doc, err := sentrysignal.DecodeObject(ItemSessions, payload, opts)
	if err != nil {
		return sentrysignal.Metrics{}, err
	}
	buckets, err := readBuckets(doc, opts.MaxItems)
	if err != nil {
		return sentrysignal.Metrics{}, err
	}
	res := sentrysignal.ResourceOfRelease(sentrysignal.Obj(doc, "attrs"))
	l := labels{res.Release, res.Environment}
	set := metricSet{dst: pmetric.NewMetricSlice()}
	partial := appendBuckets(&set, buckets, l)
	var facts sentrysignal.Facts
	if set.points > 0 {
		facts.Resource = res // the labels of its points
	}
	return sentrysignal.MetricsOf(facts, set.dst, set.points), partial.Err()
}

// appendBuckets writes every bucket; those that cannot be read are
// dropped and named in the PartialError.
func appendBuckets(set *metricSet, buckets []any, l labels) sentrysignal.PartialError {
	partial := sentrysignal.PartialError{Item: ItemSessions}
	for i, b := range buckets {
		if de := appendBucket(set, b, l, i); de != nil {
			partial.Add(de)
		}
	}
	return partial
}

// readBuckets reads "aggregates": an array of at most limit buckets.
func readBuckets(doc map[string]any, limit int) ([]any, error) {
	buckets, ok := doc["aggregates"].([]any)
	if !ok {
		return nil, sentrysignal.PayloadError(ItemSessions, "aggregates", "not an array", nil)
	}
	if len(buckets) > limit {
		return nil, sentrysignal.PayloadError(ItemSessions, "aggregates", "more buckets than the limit", nil)
	}
	return buckets, nil
}

// bucketCounts are the counts of one bucket, by aggregateStatuses' index.
type bucketCounts struct {
	counts         [len(aggregateStatuses)]int64
	total, errored int64
}

// readBucketCounts reads a bucket's counts; a count that is present but
// not one from 0 to maxBucketCount fails.
func readBucketCounts(bucket map[string]any, index int) (bucketCounts, *sentrysignal.DecodeError) {
	var c bucketCounts
	for i, s := range aggregateStatuses {
		n, ok := bucketCount(bucket, s.member)
		if !ok {
			return c, sentrysignal.EntryError(ItemSessions, index, s.member, "not a count from 0 to 4294967295", nil)
		}
		c.counts[i] = n
		c.total += n
		if s.errored {
			c.errored += n
		}
	}
	return c, nil
}

// bucketCount reads one count of a bucket: absent or null is 0; false
// when it is not a count from 0 to maxBucketCount.
func bucketCount(bucket map[string]any, member string) (int64, bool) {
	if bucket[member] == nil {
		return 0, true
	}
	n, ok := sentrysignal.Int(bucket, member)
	return n, ok && n >= 0 && n <= maxBucketCount
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
	c, de := readBucketCounts(bucket, index)
	if de != nil || c.total == 0 {
		return de
	}
	// "started": every session of the bucket started in it
	set.count(MetricStarted, ts, c.total, l)
	// "exited", "errored", "unhandled", "crashed", "abnormal"
	c.appendEnded(set, ts, l)
	if c.errored > 0 {
		set.count(MetricErrored, ts, c.errored, l)
	}
	return nil
}

// appendEnded writes each non-zero count as sessions ended by its status.
func (c *bucketCounts) appendEnded(set *metricSet, ts pcommon.Timestamp, l labels) {
	for i, s := range aggregateStatuses {
		if c.counts[i] == 0 {
			continue
		}
		dp := set.count(MetricEnded, ts, c.counts[i], l)
		dp.Attributes().PutStr(AttrStatus, s.status)
		dp.Attributes().PutBool(AttrErrored, s.errored)
	}
}
