package sentrysignal

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// HistogramScale is the scale of the exponential histograms written for
// single observations: 8, where a bucket is 2^(2^-8) wide (about 0.27 % of
// its value). It is the finest scale Prometheus native histograms take
// (schema 8), and finer buckets gain nothing in stores that print bucket
// bounds to four digits (VictoriaMetrics answered no quantile at 20). The
// value itself is kept exactly: a point holds one observation, so its sum,
// min and max are the value.
const HistogramScale = 8

// PutObservation writes one observed value as an exponential histogram
// point of count 1: sum, min and max hold it exactly, its bucket holds it
// to the scale's precision (zero in zero_count, negatives in negative).
func PutObservation(dp pmetric.ExponentialHistogramDataPoint, v float64) {
	dp.SetCount(1)
	dp.SetSum(v)
	dp.SetMin(v)
	dp.SetMax(v)
	dp.SetScale(HistogramScale)
	switch {
	case v == 0:
		dp.SetZeroCount(1)
	case v > 0:
		dp.Positive().SetOffset(BucketIndex(v))
		dp.Positive().BucketCounts().Append(1)
	default:
		dp.Negative().SetOffset(BucketIndex(-v))
		dp.Negative().BucketCounts().Append(1)
	}
}

// BucketIndex is the index i of the bucket (base^i, base^(i+1)] holding v >
// 0 at HistogramScale; exact powers of two, read from the float's exponent,
// fall in the bucket they close.
func BucketIndex(v float64) int32 {
	frac, exp := math.Frexp(v) // v = frac · 2^exp, frac in [0.5, 1)
	if frac == 0.5 {
		return int32((exp-1)<<HistogramScale) - 1
	}
	scaleFactor := math.Ldexp(math.Log2E, HistogramScale)
	return int32(math.Ceil(math.Log(v)*scaleFactor)) - 1
}

// maxHistogramBuckets bounds the buckets of a point written from several
// values (the OpenTelemetry SDKs' default); the scale is lowered until the
// values fit.
const maxHistogramBuckets = 160

// PutObservations writes several observed values as one exponential
// histogram point: count, sum, min and max exactly, the values in buckets
// at the finest scale at which each sign's buckets span at most 160.
func PutObservations(dp pmetric.ExponentialHistogramDataPoint, values []float64) {
	if len(values) == 0 {
		return
	}
	var pos, neg []int32
	lo, hi, sum := values[0], values[0], 0.0
	for _, v := range values {
		lo, hi, sum = min(lo, v), max(hi, v), sum+v
		switch {
		case v > 0:
			pos = append(pos, BucketIndex(v))
		case v < 0:
			neg = append(neg, BucketIndex(-v))
		default:
			dp.SetZeroCount(dp.ZeroCount() + 1)
		}
	}
	dp.SetCount(uint64(len(values)))
	// a sum past float64's range is no sum: leave it unset rather than
	// write an infinity that stores refuse or print as a number
	if !math.IsInf(sum, 0) {
		dp.SetSum(sum)
	}
	dp.SetMin(lo)
	dp.SetMax(hi)
	shift := max(downscale(pos), downscale(neg))
	dp.SetScale(HistogramScale - int32(shift))
	fillBuckets(dp.Positive(), pos, shift)
	fillBuckets(dp.Negative(), neg, shift)
}

// downscale is how many halvings of the scale make indices span at most
// maxHistogramBuckets buckets.
func downscale(indices []int32) int {
	if len(indices) == 0 {
		return 0
	}
	lo, hi := indices[0], indices[0]
	for _, i := range indices {
		lo, hi = min(lo, i), max(hi, i)
	}
	shift := 0
	for (hi>>shift)-(lo>>shift)+1 > maxHistogramBuckets {
		shift++
	}
	return shift
}

func fillBuckets(b pmetric.ExponentialHistogramDataPointBuckets, indices []int32, shift int) {
	if len(indices) == 0 {
		return
	}
	lo := indices[0] >> shift
	for _, i := range indices {
		lo = min(lo, i>>shift)
	}
	counts := make([]uint64, 0, maxHistogramBuckets)
	for _, i := range indices {
		at := int(i>>shift - lo)
		for len(counts) <= at {
			counts = append(counts, 0)
		}
		counts[at]++
	}
	b.SetOffset(lo)
	b.BucketCounts().FromRaw(counts)
}
