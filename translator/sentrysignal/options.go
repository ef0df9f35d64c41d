package sentrysignal

// Default limits, used where an Options field is zero.
const (
	// DefaultMaxPayloadBytes is Relay's limit for an event item (1 MiB)
	// times the ratio a pretty-printing SDK may add; containers of logs and
	// metrics are smaller in practice.
	DefaultMaxPayloadBytes = 4 << 20
	// DefaultMaxItems bounds the entries of one container (logs, metrics,
	// session aggregates, discard counts).
	DefaultMaxItems = 10_000
	// DefaultMaxDepth bounds how deep a free-form JSON value (extra,
	// contexts, frame vars, breadcrumb data) is mapped into nested OTLP
	// maps; deeper values are kept as their JSON text. Relay trims
	// databags at 7 levels (5 for logentry.params).
	DefaultMaxDepth = 8
)

// Options is what a receiver passes to every translator.
type Options struct {
	// IncludeUserData maps personal data: an event's "user" and
	// "request", the "vars" of stack frames, a session's "did" and
	// feedback's contact email and name. Off by default, as for spans.
	IncludeUserData bool
	// MaxPayloadBytes refuses larger payloads before decoding them.
	MaxPayloadBytes int
	// MaxItems refuses containers with more entries.
	MaxItems int
	// MaxDepth bounds the nesting of mapped free-form values.
	MaxDepth int
	// MaxMapEntries bounds the entries of each map written (see
	// DefaultMaxMapEntries).
	MaxMapEntries int
	// Truncations, when set, counts what the limits cut (see Truncations).
	Truncations *Truncations
}

// WithDefaults returns o with every zero limit set to its default.
func (o Options) WithDefaults() Options {
	if o.MaxPayloadBytes <= 0 {
		o.MaxPayloadBytes = DefaultMaxPayloadBytes
	}
	if o.MaxItems <= 0 {
		o.MaxItems = DefaultMaxItems
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxMapEntries <= 0 {
		o.MaxMapEntries = DefaultMaxMapEntries
	}
	return o
}

// CheckSize refuses a payload over the limit, naming the item type.
func (o Options) CheckSize(item string, payload []byte) error {
	if limit := o.WithDefaults().MaxPayloadBytes; len(payload) > limit {
		return PayloadError(item, "", "payload of "+itoa(len(payload))+" bytes exceeds the limit of "+itoa(limit), nil)
	}
	return nil
}
