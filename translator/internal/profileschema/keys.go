// Package profileschema is the shape of the pdata profiles the translator
// writes (profilesin) and reads back (profilesout): the keys inside the
// structured profile attributes, named after the Sentry JSON fields they
// hold, the instrumentation scope, and the few pcommon.Map helpers both
// directions use. It imports nothing of either walk.
package profileschema

import "go.opentelemetry.io/collector/pdata/pcommon"

// ScopeName is the instrumentation scope of every produced profile and span.
const ScopeName = "github.com/sentryprofile/otelcol-sentryprofile/translator"

// MaxProfileItemBytes is Relay's limit for one profile item (50 MiB): what
// the receiver reads and the exporter writes at most.
const MaxProfileItemBytes = 50 << 20

// AnonymousFunction names a frame with no function or symbol, as Sentry's
// UI does; the exporter writes it back as an empty function.
const AnonymousFunction = "<anonymous>"

// Keys inside the structured profile attributes, named after the Sentry JSON
// fields they hold.
const (
	KeyName            = "name"
	KeyPriority        = "priority"
	KeyLabel           = "label"
	KeyUnit            = "unit"
	KeyValues          = "values"
	KeyValue           = "value"
	KeyTimestampNano   = "timestamp_unix_nano"
	KeyID              = "id"
	KeyTraceID         = "trace_id"
	KeySegmentID       = "segment_id"
	KeyActiveThreadID  = "active_thread_id"
	KeyRelativeStartNS = "relative_start_ns"
	KeyRelativeEndNS   = "relative_end_ns"
	KeyType            = "type"
	KeyCodeFile        = "code_file"
	KeyCodeID          = "code_id"
	KeyDebugID         = "debug_id"
	KeyDebugFile       = "debug_file"
	KeyUUID            = "uuid"
	KeyArch            = "arch"
	KeyImageAddr       = "image_addr"
	KeyImageVMAddr     = "image_vmaddr"
	KeyImageSize       = "image_size"
)

// NewMapValue is an empty map value with room for n entries: the shape of
// the structured profile attributes.
func NewMapValue(n int) (pcommon.Value, pcommon.Map) {
	v := pcommon.NewValueMap()
	m := v.Map()
	m.EnsureCapacity(n)
	return v, m
}

// PutNonEmpty puts k only when v is not empty: absent and empty fields
// read back the same.
func PutNonEmpty(m pcommon.Map, k, v string) {
	if v != "" {
		m.PutStr(k, v)
	}
}

// MapStr is the string value of k in m; "" when it is absent or not a
// string.
func MapStr(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}
