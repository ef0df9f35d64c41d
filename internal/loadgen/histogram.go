package loadgen

import (
	"math"
	"time"
)

// Histogram is a latency histogram with logarithmic buckets: eight per
// doubling, from 1 µs to about 71 min, so a quantile is exact to within 9 %
// whatever the latency, in a fixed 256 buckets (the last one also holds
// everything longer, reported as the maximum). The zero value is ready to
// use; it is not safe for concurrent use (each worker keeps its own and they
// are merged).
type Histogram struct {
	counts [histogramBuckets]uint64
	total  uint64
	max    time.Duration
}

const (
	histogramBuckets   = 256
	bucketsPerDoubling = 8
	histogramUnit      = time.Microsecond
)

// Record adds one observation.
func (h *Histogram) Record(d time.Duration) {
	h.counts[bucketOf(d)]++
	h.total++
	h.max = max(h.max, d)
}

// Merge adds every observation of o.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.max = max(h.max, o.max)
}

// Count is the number of observations.
func (h *Histogram) Count() uint64 { return h.total }

// Max is the largest observation.
func (h *Histogram) Max() time.Duration { return h.max }

// Quantile returns the upper bound of the bucket holding the q-th quantile
// (0 < q ≤ 1), never more than the largest observation; 0 when empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.total)))
	rank = min(max(rank, 1), h.total)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			if i == histogramBuckets-1 {
				return h.max
			}
			return min(bucketUpper(i), h.max)
		}
	}
	return h.max
}

// bucketOf maps a duration to its bucket: bucket 0 holds everything up to
// 1 µs, bucket i > 0 holds (upper(i-1), upper(i)].
func bucketOf(d time.Duration) int {
	if d <= histogramUnit {
		return 0
	}
	i := int(math.Ceil(math.Log2(float64(d)/float64(histogramUnit)) * bucketsPerDoubling))
	return min(max(i, 0), histogramBuckets-1)
}

func bucketUpper(i int) time.Duration {
	return time.Duration(float64(histogramUnit) * math.Exp2(float64(i)/bucketsPerDoubling))
}
