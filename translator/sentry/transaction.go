package sentry

// TransactionEvent is the part of a `transaction` envelope item that links a
// V1 profile to its trace: the trace, the root span and the child spans with
// the thread each ran on.
type TransactionEvent struct {
	EventID        string // "event_id"
	Transaction    string // "transaction" (the name)
	TraceID        string // "contexts.trace.trace_id"
	SpanID         string // "contexts.trace.span_id" (the root span)
	ThreadID       string // "contexts.trace.data.thread.id"
	StartTimestamp int64  // "start_timestamp" (float seconds or RFC 3339) as Unix nanoseconds
	Timestamp      int64  // "timestamp" (the end) as Unix nanoseconds
	Spans          []Span // "spans"
}

// Span is one element of a transaction's "spans".
type Span struct {
	SpanID         string // "span_id"
	ParentSpanID   string // "parent_span_id"
	ThreadID       string // "data.thread.id"
	StartTimestamp int64  // "start_timestamp" as Unix nanoseconds
	Timestamp      int64  // "timestamp" as Unix nanoseconds
}
