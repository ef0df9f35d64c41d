package profilesin

// Sample and period types of the produced profiles: every timestamp is one
// sample (OTLP's implicit value 1), taken every period nanoseconds of wall
// time, so that a pprof conversion shows sample counts that multiply by the
// period into wall-clock time at the SDKs' 101 Hz.
const (
	sampleTypeWall    = "wall"
	sampleTypeSamples = "samples"
	sampleTypeCPU     = "cpu"
	sampleUnitCount   = "count"
	periodTypeWall    = "wall"
	periodUnitNanos   = "nanoseconds"
	// sentryPeriodNanos is 1/101 s, the sampling interval the Sentry profiling
	// spec prescribes (101 Hz, prime to avoid lockstep with periodic work).
	sentryPeriodNanos = int64(1e9) / 101
)

// Original payload formats set by ReceiveOptions.KeepOriginalPayload.
const (
	OriginalPayloadFormatV1 = "sentry_profile_v1"
	OriginalPayloadFormatV2 = "sentry_profile_chunk_v2"
)
