// Package sentryattr holds the attribute keys more than one package of this
// module reads or writes: the receiver's translators write them, the
// symbolication processor, the exporter and the Pyroscope check read them.
// Declaring each key once makes a rename break the build instead of the
// receiver → processor → exporter contract. Fields with a semantic
// convention use the semconv constants; these are the Sentry fields that
// have none. translator/README.md maps each to its Sentry JSON.
package sentryattr

// Resource attributes: who sent the payload.
const (
	Platform             = "sentry.platform"
	ProjectID            = "sentry.project.id"
	Dist                 = "sentry.dist"
	DeviceIsEmulator     = "sentry.device.is_emulator"
	DeviceLocale         = "sentry.device.locale"
	DeviceClassification = "sentry.device.classification"
)

// Attributes of log records, metric points and spans that name their
// program (Sentry Logs' and trace metrics' "attributes", span v2's), as
// Sentry names them.
const (
	Release     = "sentry.release"
	Environment = "sentry.environment"
	SDKName     = "sentry.sdk.name"
	SDKVersion  = "sentry.sdk.version"
	Op          = "sentry.op"
	// TimestampSequence orders the records of one timestamp (Sentry Logs
	// and trace metrics).
	TimestampSequence = "sentry.timestamp.sequence"
	// PayloadPrefix names a payload member no convention maps:
	// "sentry.payload.<member>" (logs, metrics, check-ins, user reports).
	PayloadPrefix = "sentry.payload."
	Origin        = "sentry.origin"
	Status        = "sentry.status"
)

// Profile attributes: the ids of one Sentry profile item and the
// transaction it belongs to.
const (
	ProfilerID         = "sentry.profiler_id"
	ChunkID            = "sentry.chunk_id"
	EventID            = "sentry.event_id"
	TransactionName    = "sentry.transaction.name"
	TransactionID      = "sentry.transaction.id"
	TransactionTraceID = "sentry.transaction.trace_id"
)

// Profile attributes: the per-item collections OTLP has no place for, as
// structured values so that the exporter can rebuild them exactly.
const (
	Transactions   = "sentry.transactions"
	ThreadMetadata = "sentry.thread_metadata"
	QueueMetadata  = "sentry.queue_metadata"
	// DebugImages holds every debug_meta image of a Sentry profile; the
	// symbolication processor reads its artifact ids from it.
	DebugImages  = "sentry.debug_meta.images"
	Measurements = "sentry.measurements"
)

// Sample attributes: the thread a sample ran on, besides semconv thread.id
// and thread.name.
const (
	// ThreadID holds the Sentry thread id verbatim when it is not a
	// canonical decimal integer (cocoa sends hex addresses); thread.id, an
	// integer in semconv, cannot carry it exactly.
	ThreadID       = "sentry.thread.id"
	ThreadPriority = "sentry.thread.priority"
	ThreadActive   = "sentry.thread.active"
	ThreadState    = "sentry.thread.state"
	QueueAddress   = "sentry.queue.address"
	QueueLabel     = "sentry.queue.label"
	// SampleIdle marks a transaction profile's sample whose stack the SDK
	// sent empty (the thread was idle).
	SampleIdle = "sentry.sample.idle"
)

// Location attributes: frame fields without a home in Function, Line or
// Location.
const (
	FramePlatform    = "sentry.frame.platform"
	FrameModule      = "sentry.frame.module" // the class of a JVM method
	FramePackage     = "sentry.frame.package"
	FrameInApp       = "sentry.frame.in_app"
	FrameRawFunction = "sentry.frame.raw_function"
	// FrameFilename is present exactly when Function.filename holds the
	// frame's abs_path; its value is the frame's filename, empty when the
	// frame had none.
	FrameFilename   = "sentry.frame.filename"
	FrameSymbolAddr = "sentry.frame.symbol_addr"
	FrameImageAddr  = "sentry.frame.image_addr"
	FrameAddrMode   = "sentry.frame.addr_mode"
	FrameStatus     = "sentry.frame.status"
	FrameData       = "sentry.frame.data"
)

// Mapping attributes: debug_meta image identifiers. An ELF code_id is the
// GNU build id and goes to the semconv key instead of ImageCodeID.
const (
	ImageType        = "sentry.image.type"
	ImageCodeID      = "sentry.image.code_id"
	ImageDebugID     = "sentry.image.debug_id"
	ImageDebugFile   = "sentry.image.debug_file"
	ImageUUID        = "sentry.image.uuid"
	ImageArch        = "sentry.image.arch"
	ImageImageVMAddr = "sentry.image.image_vmaddr"
)
