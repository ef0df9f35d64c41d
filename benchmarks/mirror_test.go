package benchmarks

import "encoding/json"

// The encoding/json reference decodes into, and encodes from, plain structs
// that mirror translator/sentry's model field for field: what a Go service
// that used the standard library would write. Numbers the SDKs send as
// strings (V1 elapsed_since_start_ns, hex addresses) stay strings here, as
// encoding/json cannot parse them into integers without custom code; the
// reference does strictly less work than our decoder.

// jsonProfile is a V1 `profile` or a V2 `profile_chunk`.
type jsonProfile struct {
	Version      string                     `json:"version"`
	EventID      string                     `json:"event_id,omitempty"`
	ProfilerID   string                     `json:"profiler_id,omitempty"`
	ChunkID      string                     `json:"chunk_id,omitempty"`
	Platform     string                     `json:"platform"`
	Release      string                     `json:"release,omitempty"`
	Environment  string                     `json:"environment,omitempty"`
	Dist         string                     `json:"dist,omitempty"`
	Timestamp    string                     `json:"timestamp,omitempty"`
	Device       *jsonDevice                `json:"device,omitempty"`
	OS           *jsonOS                    `json:"os,omitempty"`
	Runtime      *jsonRuntime               `json:"runtime,omitempty"`
	ClientSDK    *jsonClientSDK             `json:"client_sdk,omitempty"`
	DebugMeta    *jsonDebugMeta             `json:"debug_meta,omitempty"`
	Transaction  *jsonTransaction           `json:"transaction,omitempty"`
	Transactions []jsonTransaction          `json:"transactions,omitempty"`
	Measurements map[string]jsonMeasurement `json:"measurements,omitempty"`
	Profile      jsonProfileData            `json:"profile"`
}

type jsonDevice struct {
	Architecture   string `json:"architecture"`
	IsEmulator     *bool  `json:"is_emulator,omitempty"`
	Locale         string `json:"locale,omitempty"`
	Manufacturer   string `json:"manufacturer,omitempty"`
	Model          string `json:"model,omitempty"`
	Classification string `json:"classification,omitempty"`
}

type jsonOS struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	BuildNumber string `json:"build_number,omitempty"`
}

type jsonRuntime struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type jsonClientSDK struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type jsonDebugMeta struct {
	Images []jsonImage `json:"images"`
}

type jsonImage struct {
	Type        string `json:"type,omitempty"`
	CodeFile    string `json:"code_file,omitempty"`
	CodeID      string `json:"code_id,omitempty"`
	DebugID     string `json:"debug_id,omitempty"`
	DebugFile   string `json:"debug_file,omitempty"`
	UUID        string `json:"uuid,omitempty"`
	Arch        string `json:"arch,omitempty"`
	ImageAddr   string `json:"image_addr,omitempty"`
	ImageVMAddr string `json:"image_vmaddr,omitempty"`
	ImageSize   uint64 `json:"image_size,omitempty"`
}

type jsonTransaction struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	TraceID         string `json:"trace_id"`
	SegmentID       string `json:"segment_id,omitempty"`
	ActiveThreadID  string `json:"active_thread_id"`
	RelativeStartNS string `json:"relative_start_ns,omitempty"`
	RelativeEndNS   string `json:"relative_end_ns,omitempty"`
}

type jsonMeasurement struct {
	Unit   string                 `json:"unit"`
	Values []jsonMeasurementValue `json:"values"`
}

type jsonMeasurementValue struct {
	ElapsedSinceStartNS string  `json:"elapsed_since_start_ns,omitempty"`
	Timestamp           float64 `json:"timestamp,omitempty"`
	Value               float64 `json:"value"`
}

type jsonProfileData struct {
	Samples        []jsonSample                  `json:"samples"`
	Stacks         [][]int64                     `json:"stacks"`
	Frames         []jsonFrame                   `json:"frames"`
	ThreadMetadata map[string]jsonThreadMetadata `json:"thread_metadata,omitempty"`
	QueueMetadata  map[string]jsonQueueMetadata  `json:"queue_metadata,omitempty"`
}

type jsonSample struct {
	StackID             int64   `json:"stack_id"`
	ThreadID            string  `json:"thread_id"`
	ElapsedSinceStartNS string  `json:"elapsed_since_start_ns,omitempty"`
	Timestamp           float64 `json:"timestamp,omitempty"`
	QueueAddress        string  `json:"queue_address,omitempty"`
	State               string  `json:"state,omitempty"`
}

type jsonFrame struct {
	Function        string          `json:"function,omitempty"`
	RawFunction     string          `json:"raw_function,omitempty"`
	Symbol          string          `json:"symbol,omitempty"`
	Module          string          `json:"module,omitempty"`
	Package         string          `json:"package,omitempty"`
	Filename        string          `json:"filename,omitempty"`
	AbsPath         string          `json:"abs_path,omitempty"`
	Lineno          uint32          `json:"lineno,omitempty"`
	Colno           uint32          `json:"colno,omitempty"`
	InApp           *bool           `json:"in_app,omitempty"`
	Platform        string          `json:"platform,omitempty"`
	InstructionAddr string          `json:"instruction_addr,omitempty"`
	SymbolAddr      string          `json:"symbol_addr,omitempty"`
	ImageAddr       string          `json:"image_addr,omitempty"`
	AddrMode        string          `json:"addr_mode,omitempty"`
	Status          string          `json:"status,omitempty"`
	Data            json.RawMessage `json:"data,omitempty"`
}

type jsonThreadMetadata struct {
	Name     string `json:"name,omitempty"`
	Priority *int64 `json:"priority,omitempty"`
}

type jsonQueueMetadata struct {
	Label string `json:"label,omitempty"`
}
