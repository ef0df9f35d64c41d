package sentrysignal

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// HistogramScale is the scale of the exponential histograms written for
// single observations: 20, the finest, where a bucket is 2^(2^-20) wide
// (about 0.00007 % of its value). Merging points rescales them without
// losing what was kept.
const HistogramScale = 20

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
