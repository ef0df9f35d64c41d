package translator

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
)

// Attribute keys for Sentry fields that have no semantic convention, as
// internal/sentryattr declares them for every package. Fields that do have
// one use the semconv constants directly; README.md lists both.
//
// Resource attributes (one resource per profile item).
const (
	attrPlatform             = sentryattr.Platform
	attrProjectID            = sentryattr.ProjectID
	attrProfilerID           = sentryattr.ProfilerID
	attrChunkID              = sentryattr.ChunkID
	attrEventID              = sentryattr.EventID
	attrDist                 = sentryattr.Dist
	attrDeviceIsEmulator     = sentryattr.DeviceIsEmulator
	attrDeviceLocale         = sentryattr.DeviceLocale
	attrDeviceClassification = sentryattr.DeviceClassification
	attrTransactionName      = sentryattr.TransactionName
	attrTransactionID        = sentryattr.TransactionID
	attrTransactionTraceID   = sentryattr.TransactionTraceID
)

// Profile attributes: the per-item collections OTLP has no place for. They are
// structured values (maps and arrays) so that the exporter can rebuild them
// exactly.
const (
	attrTransactions   = sentryattr.Transactions
	attrThreadMetadata = sentryattr.ThreadMetadata
	attrQueueMetadata  = sentryattr.QueueMetadata
	attrDebugImages    = sentryattr.DebugImages
	attrMeasurements   = sentryattr.Measurements
)

// Sample attributes: the thread a sample ran on, besides semconv thread.id and
// thread.name.
const (
	// attrThreadID holds the Sentry thread id verbatim when it is not a
	// canonical decimal integer (cocoa sends hex addresses); thread.id, an
	// integer in semconv, cannot carry it exactly.
	attrThreadID       = sentryattr.ThreadID
	attrThreadPriority = sentryattr.ThreadPriority
	attrThreadActive   = sentryattr.ThreadActive
	attrThreadState    = sentryattr.ThreadState
	attrQueueAddress   = sentryattr.QueueAddress
	attrQueueLabel     = sentryattr.QueueLabel
	// attrSampleIdle marks a transaction profile's sample whose stack the
	// SDK sent empty (the thread was idle); its stack is the one Sentry
	// shows it with (receive_idle.go), and the exporter writes it back
	// empty.
	attrSampleIdle = sentryattr.SampleIdle
)

// Location attributes: frame fields without a home in Function, Line or
// Location.
const (
	attrFramePlatform    = sentryattr.FramePlatform
	attrFrameModule      = sentryattr.FrameModule
	attrFramePackage     = sentryattr.FramePackage
	attrFrameInApp       = sentryattr.FrameInApp
	attrFrameRawFunction = sentryattr.FrameRawFunction
	// attrFrameFilename is present exactly when Function.filename holds the
	// frame's abs_path; its value is the frame's filename, empty when the frame
	// had none. Without it Function.filename is the frame's filename.
	attrFrameFilename   = sentryattr.FrameFilename
	attrFrameSymbolAddr = sentryattr.FrameSymbolAddr
	attrFrameImageAddr  = sentryattr.FrameImageAddr
	attrFrameAddrMode   = sentryattr.FrameAddrMode
	attrFrameStatus     = sentryattr.FrameStatus
	attrFrameData       = sentryattr.FrameData
)

// Mapping attributes: debug_meta image identifiers. An ELF code_id is the GNU
// build id and goes to the semconv key instead of attrImageCodeID.
const (
	attrImageType        = sentryattr.ImageType
	attrImageCodeID      = sentryattr.ImageCodeID
	attrImageDebugID     = sentryattr.ImageDebugID
	attrImageDebugFile   = sentryattr.ImageDebugFile
	attrImageUUID        = sentryattr.ImageUUID
	attrImageArch        = sentryattr.ImageArch
	attrImageImageVMAddr = sentryattr.ImageImageVMAddr
)

// Keys inside the structured profile attributes, named after the Sentry JSON
// fields they hold.
const (
	keyName            = "name"
	keyPriority        = "priority"
	keyLabel           = "label"
	keyUnit            = "unit"
	keyValues          = "values"
	keyValue           = "value"
	keyTimestampNano   = "timestamp_unix_nano"
	keyID              = "id"
	keyTraceID         = "trace_id"
	keySegmentID       = "segment_id"
	keyActiveThreadID  = "active_thread_id"
	keyRelativeStartNS = "relative_start_ns"
	keyRelativeEndNS   = "relative_end_ns"
	keyType            = "type"
	keyCodeFile        = "code_file"
	keyCodeID          = "code_id"
	keyDebugID         = "debug_id"
	keyDebugFile       = "debug_file"
	keyUUID            = "uuid"
	keyArch            = "arch"
	keyImageAddr       = "image_addr"
	keyImageVMAddr     = "image_vmaddr"
	keyImageSize       = "image_size"
)

// Sample and period types of the produced profiles: every timestamp is one
// sample (OTLP's implicit value 1), taken every period nanoseconds of wall
// time, so that a pprof conversion shows sample counts that multiply by the
// period into wall-clock time at the SDKs' 101 Hz.
const (
	// anonymousFunction names a frame with no function or symbol, as
	// Sentry's UI does; the exporter writes it back as an empty function.
	anonymousFunction = "<anonymous>"
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

// attrDeploymentEnvironmentOld is the key deployment.environment.name
// replaced in semantic conventions 1.27.
const attrDeploymentEnvironmentOld = "deployment.environment"

// attrRole is what a sample or location attribute means to FromProfiles.
type attrRole uint8

// The roles, each beside the attribute key that has it (roleOfKey).
const (
	roleOther          attrRole = iota
	roleSentryThreadID          // sentry.thread.id
	roleThreadID                // thread.id
	roleThreadName              // thread.name
	roleThreadPriority          // sentry.thread.priority
	roleQueueAddress            // sentry.queue.address
	roleThreadState             // sentry.thread.state
	roleSampleIdle              // sentry.sample.idle
	// Location attributes.
	roleFrameType        // profile.frame.type
	roleFramePlatform    // sentry.frame.platform
	roleFrameFilename    // sentry.frame.filename
	roleFrameRawFunction // sentry.frame.raw_function
	roleFrameModule      // sentry.frame.module
	roleFramePackage     // sentry.frame.package
	roleFrameInApp       // sentry.frame.in_app
	roleFrameSymbolAddr  // sentry.frame.symbol_addr
	roleFrameImageAddr   // sentry.frame.image_addr
	roleFrameAddrMode    // sentry.frame.addr_mode
	roleFrameStatus      // sentry.frame.status
	roleFrameData        // sentry.frame.data
)

// roleOfKey is the key → role table FromProfiles reads the attribute table
// with, once per conversion: samples and locations then switch on a small
// integer instead of comparing key strings.
func roleOfKey(key string) attrRole {
	switch key {
	case attrThreadID:
		return roleSentryThreadID
	case string(semconv.ThreadIDKey):
		return roleThreadID
	case string(semconv.ThreadNameKey):
		return roleThreadName
	case attrThreadPriority:
		return roleThreadPriority
	case attrQueueAddress:
		return roleQueueAddress
	case attrThreadState:
		return roleThreadState
	case attrSampleIdle:
		return roleSampleIdle
	case string(semconv.ProfileFrameTypeKey):
		return roleFrameType
	case attrFramePlatform:
		return roleFramePlatform
	case attrFrameFilename:
		return roleFrameFilename
	case attrFrameRawFunction:
		return roleFrameRawFunction
	case attrFrameModule:
		return roleFrameModule
	case attrFramePackage:
		return roleFramePackage
	case attrFrameInApp:
		return roleFrameInApp
	case attrFrameSymbolAddr:
		return roleFrameSymbolAddr
	case attrFrameImageAddr:
		return roleFrameImageAddr
	case attrFrameAddrMode:
		return roleFrameAddrMode
	case attrFrameStatus:
		return roleFrameStatus
	case attrFrameData:
		return roleFrameData
	}
	return roleOther
}

// newMapValue is an empty map value with room for n entries: the shape of
// the structured profile attributes.
func newMapValue(n int) (pcommon.Value, pcommon.Map) {
	v := pcommon.NewValueMap()
	m := v.Map()
	m.EnsureCapacity(n)
	return v, m
}

func putNonEmpty(m pcommon.Map, k, v string) {
	if v != "" {
		m.PutStr(k, v)
	}
}

func mapStr(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}
