package sentryattr

// Error event record attributes: the members of a Sentry event the
// receiver keeps on its log record (sentry.<member>, translator/
// sentryevent) that the grouping key and the symbolication processor read
// back, and the grouping key written beside them.
const (
	EventException   = "sentry.exception"   // {"values": [...]}, every frame
	EventThreads     = "sentry.threads"     // {"values": [...]}
	EventStacktrace  = "sentry.stacktrace"  // the event's own stack trace
	EventFingerprint = "sentry.fingerprint" // the client's fingerprint
	EventTransaction = "sentry.transaction"
	EventLogger      = "sentry.logger"
	EventSDK         = "sentry.sdk"
	MessageTemplate  = "sentry.message.template" // logentry.message
	TagPrefix        = "sentry.tags."
	// GroupingHash is the key Sentry groups the event by
	// (translator/sentrygrouping); GroupingComponents the values it was
	// hashed from, for debugging.
	GroupingHash       = "sentry.grouping.hash"
	GroupingComponents = "sentry.grouping.components"
)

// What the symbolication processor reads of an error record and keeps of
// it: the event's debug images, and its own stack trace as sent when the
// processor rewrote sentry.stacktrace (exceptions and threads keep theirs
// in their raw_stacktrace, as Sentry does).
const (
	EventDebugMeta     = "sentry.debug_meta" // {"images": [...]}
	EventRawStacktrace = "sentry.raw_stacktrace"
)
