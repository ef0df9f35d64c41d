package sentry

import "time"

// Format versions of the `version` field.
const (
	VersionV1 = "1" // transaction-bound `profile` item (deprecated by the spec, still sent)
	VersionV2 = "2" // continuous `profile_chunk` item
)

// Profile is one Sentry profile payload: a V1 `profile` item or a V2
// `profile_chunk` item. Both versions share one type because they share the
// profile data; fields that exist in only one version say so.
//
// Absent optional scalars are zero values. Addresses and line numbers of zero
// are treated as absent (Sentry has no meaning for a zero address or line).
type Profile struct {
	Version string // "version"

	// Identity.
	EventID    string // V1 "event_id" (alias "profile_id"); 32 hex, dashes removed on decode
	ProfilerID string // V2 "profiler_id"
	ChunkID    string // V2 "chunk_id"

	// Present says which metadata fields the payload carried, because an
	// empty string is a value, not an absence: Relay accepts
	// `"os": {"version": ""}` but refuses a profile without os.version.
	Present Fields

	Platform    string    // "platform"
	Release     string    // "release"
	Environment string    // "environment"
	Dist        string    // "dist"
	Timestamp   time.Time // V1 "timestamp" (RFC 3339); zero when absent

	Device    Device    // V1 "device"
	OS        OS        // V1 "os"
	Runtime   Runtime   // V1 "runtime"
	ClientSDK ClientSDK // V2 "client_sdk"
	DebugMeta DebugMeta // "debug_meta"

	// Transactions holds V1 "transaction" (one element) or "transactions"
	// (browser SDKs); which of the two keys was used is not kept.
	Transactions []Transaction

	// Measurements in the order they appeared ("measurements" object).
	Measurements []Measurement

	// "profile"
	Samples []Sample
	// SampleWallNS, when not nil, holds the wall time each sample stands for
	// (parallel to Samples) instead of one sampling period: the slices of an
	// exact method trace (Android ART traces, translator/art). SampleCPUNS
	// holds their thread CPU time, when the trace measured it. Kept apart
	// from Sample so that sampled profiles, nearly all of them, do not pay
	// for them.
	SampleWallNS   []uint64
	SampleCPUNS    []uint64
	Stacks         Stacks
	Frames         []Frame
	ThreadMetadata []ThreadMetadata // "thread_metadata", in input order
	QueueMetadata  []QueueMetadata  // cocoa "queue_metadata", in input order
}

// Fields is a set of metadata fields, one bit each.
type Fields uint32

// The metadata fields whose presence Profile.Present records.
const (
	FieldPlatform             Fields = 1 << iota // "platform"
	FieldRelease                                 // "release"
	FieldEnvironment                             // "environment"
	FieldDist                                    // "dist"
	FieldTimestamp                               // "timestamp"
	FieldDevice                                  // "device"
	FieldDeviceArchitecture                      // "device.architecture"
	FieldDeviceLocale                            // "device.locale"
	FieldDeviceManufacturer                      // "device.manufacturer"
	FieldDeviceModel                             // "device.model"
	FieldDeviceClassification                    // "device.classification"
	FieldOS                                      // "os"
	FieldOSName                                  // "os.name"
	FieldOSVersion                               // "os.version"
	FieldOSBuildNumber                           // "os.build_number"
	FieldRuntime                                 // "runtime"
	FieldRuntimeName                             // "runtime.name"
	FieldRuntimeVersion                          // "runtime.version"
	FieldClientSDK                               // "client_sdk"
	FieldClientSDKName                           // "client_sdk.name"
	FieldClientSDKVersion                        // "client_sdk.version"
)

// Has reports whether every field of f was present.
func (f Fields) Has(field Fields) bool { return f&field == field }

// Device is V1 "device".
type Device struct {
	Architecture   string       // "architecture"
	IsEmulator     OptionalBool // "is_emulator"
	Locale         string       // "locale"
	Manufacturer   string       // "manufacturer"
	Model          string       // "model"
	Classification string       // "classification" (cocoa: high/medium/low end)
}

// OS is V1 "os".
type OS struct {
	Name        string // "name"
	Version     string // "version"
	BuildNumber string // "build_number"
}

// Runtime is V1 "runtime".
type Runtime struct {
	Name    string // "name"
	Version string // "version"
}

// ClientSDK is V2 "client_sdk".
type ClientSDK struct {
	Name    string // "name"
	Version string // "version"
}

// Transaction is V1 "transaction" or an element of "transactions".
type Transaction struct {
	ID              string // "id"
	Name            string // "name"
	TraceID         string // "trace_id"
	SegmentID       string // "segment_id" (span id of the transaction's root span, when sent)
	ActiveThreadID  string // "active_thread_id" (number or string on the wire)
	RelativeStartNS uint64 // "relative_start_ns" (number or string)
	RelativeEndNS   uint64 // "relative_end_ns" (number or string)
}

// DebugMeta is "debug_meta".
type DebugMeta struct {
	Images []Image // "images"
}

// Image is one "debug_meta.images" entry.
type Image struct {
	Type        string // "type": macho, elf, pe, symbolic, sourcemap, proguard, …
	CodeFile    string // "code_file"
	CodeID      string // "code_id"
	DebugID     string // "debug_id"
	DebugFile   string // "debug_file"
	UUID        string // "uuid" (proguard, legacy apple)
	Arch        string // "arch"
	ImageAddr   uint64 // "image_addr" (hex string or number)
	ImageVMAddr uint64 // "image_vmaddr" (hex string or number)
	ImageSize   uint64 // "image_size" (number or string)
}

// Measurement is one entry of "measurements": {name: {unit, values}}.
type Measurement struct {
	Name   string
	Unit   string             // "unit"
	Values []MeasurementValue // "values"
}

// MeasurementValue is one element of a measurement's "values".
type MeasurementValue struct {
	ElapsedSinceStartNS uint64  // V1 "elapsed_since_start_ns"
	Timestamp           int64   // V2 "timestamp" as Unix nanoseconds (decimal text parsed exactly)
	Value               float64 // "value"
}

// Sample is one element of "profile.samples": one stack seen on one thread at
// one time.
type Sample struct {
	StackID  int64  // "stack_id"; kept wide so validation can name out-of-range values
	ThreadID string // "thread_id" (number or string on the wire)

	// V1 "elapsed_since_start_ns" (number or string on the wire).
	ElapsedSinceStartNS uint64
	// V2 "timestamp": float seconds since the epoch on the wire, kept as Unix
	// nanoseconds parsed from the decimal text so no precision is lost.
	Timestamp int64

	QueueAddress string // cocoa "queue_address"
	State        string // "state" (cocoa thread state)
}

// Stacks is "profile.stacks": lists of frame indices, leaf first. The lists
// are stored back to back in one slice so that a profile with thousands of
// stacks costs two allocations instead of thousands.
type Stacks struct {
	// FrameIndices holds every stack's frame indices back to back.
	FrameIndices []int64
	// Offsets[i] is where stack i starts in FrameIndices; stack i ends where
	// stack i+1 starts (or at len(FrameIndices)).
	Offsets []int
}

// Len is the number of stacks.
func (s *Stacks) Len() int { return len(s.Offsets) }

// At returns the frame indices of stack i, leaf first. The slice aliases the
// Stacks storage.
func (s *Stacks) At(i int) []int64 {
	end := len(s.FrameIndices)
	if i+1 < len(s.Offsets) {
		end = s.Offsets[i+1]
	}
	return s.FrameIndices[s.Offsets[i]:end:end]
}

// Append adds one stack.
func (s *Stacks) Append(frameIndices ...int64) {
	s.Offsets = append(s.Offsets, len(s.FrameIndices))
	s.FrameIndices = append(s.FrameIndices, frameIndices...)
}

// Frame is one element of "profile.frames", with the attributes of the Stack
// Trace Interface that SDKs send in profiles.
type Frame struct {
	Function        string       // "function"
	RawFunction     string       // "raw_function"
	Symbol          string       // "symbol"
	Module          string       // "module"
	Package         string       // "package"
	Filename        string       // "filename"
	AbsPath         string       // "abs_path"
	Lineno          uint32       // "lineno"
	Colno           uint32       // "colno"
	InApp           OptionalBool // "in_app"
	Platform        string       // "platform"
	InstructionAddr uint64       // "instruction_addr" (hex string or number)
	SymbolAddr      uint64       // "symbol_addr", alias "sym_addr"
	ImageAddr       uint64       // "image_addr"
	AddrMode        string       // "addr_mode"
	Status          string       // "status" (symbolication status)
	// Data is "data" (an object of symbolicator details) as its raw JSON text,
	// kept verbatim; empty when absent.
	Data string
}

// ThreadMetadata is one entry of "thread_metadata", keyed by thread id.
type ThreadMetadata struct {
	ThreadID string
	Name     string // "name"
	Priority int64  // "priority"
	// HasPriority tells a priority of 0 from an absent one.
	HasPriority bool
}

// QueueMetadata is one entry of cocoa "queue_metadata", keyed by queue address.
type QueueMetadata struct {
	Address string
	Label   string // "label"
}

// OptionalBool is a JSON boolean that may be absent.
type OptionalBool uint8

const (
	BoolUnset OptionalBool = iota
	BoolFalse
	BoolTrue
)

// Set reports whether the value was present.
func (b OptionalBool) Set() bool { return b != BoolUnset }

// True reports whether the value was present and true.
func (b OptionalBool) True() bool { return b == BoolTrue }

// BoolOf converts a Go bool to a present OptionalBool.
func BoolOf(v bool) OptionalBool {
	if v {
		return BoolTrue
	}
	return BoolFalse
}
