package sentrygrouping

// Event is what grouping reads of a Sentry event. Frames and exceptions are
// in Sentry's order: oldest call first, the raised exception last.
type Event struct {
	// Platform is the event's "platform", the default of each frame's.
	Platform string
	// SDKVersion is "sdk.version"; Sentry keeps sentry-python 3.x exception
	// groups unfiltered.
	SDKVersion string
	// Fingerprint is the client's "fingerprint".
	Fingerprint []string
	// Message is "logentry": the template ("message") and the formatted
	// text.
	Message Message
	// Exceptions is "exception.values".
	Exceptions []Exception
	// Threads is "threads.values".
	Threads []Thread
	// Stacktrace is the event's own "stacktrace"; nil when it has none.
	Stacktrace *Stacktrace
	// Transaction, Level, Logger and Tags feed the fingerprint variables
	// of the same names.
	Transaction, Level, Logger string
	Tags                       []Tag
}

// Message is an event's "logentry".
type Message struct {
	// Template is "logentry.message", the text before formatting.
	Template string
	// Formatted is "logentry.formatted".
	Formatted string
}

// Tag is one entry of "tags".
type Tag struct{ Key, Value string }

// Exception is one entry of "exception.values".
type Exception struct {
	Type, Value, Module string
	Mechanism           *Mechanism
	// Stacktrace is nil when the exception has none (or no frames).
	Stacktrace *Stacktrace
}

// Mechanism is an exception's "mechanism": what grouping reads of it.
type Mechanism struct {
	Type             string
	Source           string
	Synthetic        bool
	IsExceptionGroup bool
	// ExceptionID and ParentID link the exceptions of a chain or group;
	// nil when the SDK sent none.
	ExceptionID, ParentID *int64
	// NSError is "meta.ns_error" (Apple platforms); nil when absent.
	NSError *NSError
}

// NSError is an Apple NSError's domain and code.
type NSError struct {
	Domain string
	Code   int64
}

// Thread is one entry of "threads.values".
type Thread struct {
	Crashed, Current bool
	Stacktrace       *Stacktrace
}

// Stacktrace is a "stacktrace" interface.
type Stacktrace struct {
	Frames []Frame
}

// Frame is one stack frame.
type Frame struct {
	Function, RawFunction, Module, Package   string
	Filename, AbsPath, Platform, ContextLine string
	Lineno, Colno                            int64
	// InApp is "in_app"; nil when the SDK left it unset.
	InApp *bool
	// SourceMapUsed says the frame was resolved through a source map
	// ("data.sourcemap" is set).
	SourceMapUsed bool
}

// Result is an event's grouping key.
type Result struct {
	// Hash is the 32 hex digits of the key, Sentry's primary hash.
	Hash string
	// Components are the values the hash was made from, in order, each as
	// "<component>=<value>": the MD5 of the values concatenated is Hash.
	Components []string
	// Variant names what the key was made from: "app" (in-app frames),
	// "system" (all frames), "default" (the message), "custom_fingerprint"
	// or "fallback" (nothing contributed).
	Variant string
}
