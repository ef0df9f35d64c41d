package sentrymetric

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// distributionScale is the exponential histogram's finest scale (20): a
// bucket is 2^(2^-20) wide, about 0.0000661 % of its value, so the single
// value of a point is kept to that precision in its bucket, exactly in sum,
// min and max; merging rescales without loss of what was kept.
const distributionScale = 20

// putDistribution writes one observed value of a distribution as a delta
// exponential histogram point of count 1.
func putDistribution(dp pmetric.ExponentialHistogramDataPoint, p *point) {
	v := p.value.float()
	// "timestamp"
	dp.SetStartTimestamp(p.ts)
	dp.SetTimestamp(p.ts)
	// "value" → count 1, sum, min, max, and its bucket
	dp.SetCount(1)
	dp.SetSum(v)
	dp.SetMin(v)
	dp.SetMax(v)
	dp.SetScale(distributionScale)
	switch {
	case v == 0:
		dp.SetZeroCount(1)
	case v > 0:
		dp.Positive().SetOffset(bucketIndex(v))
		dp.Positive().BucketCounts().Append(1)
	default:
		dp.Negative().SetOffset(bucketIndex(-v))
		dp.Negative().BucketCounts().Append(1)
	}
	p.attrs.MoveTo(dp.Attributes())
	// "trace_id", "span_id" → an exemplar of the value
	if !p.traceID.IsEmpty() {
		putExemplar(dp.Exemplars().AppendEmpty(), p)
	}
}

// bucketIndex is the index of the bucket (base^i, base^(i+1)] holding v >
// 0 at distributionScale, computed from the float's exponent and mantissa
// so that exact powers of two fall in the bucket they close.
func bucketIndex(v float64) int32 {
	frac, exp := math.Frexp(v) // v = frac · 2^exp, frac in [0.5, 1)
	if frac == 0.5 {
		return int32((exp-1)<<distributionScale) - 1
	}
	scaleFactor := math.Ldexp(math.Log2E, distributionScale)
	return int32(math.Ceil(math.Log(v)*scaleFactor)) - 1
}
