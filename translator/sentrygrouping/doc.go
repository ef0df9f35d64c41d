// Package sentrygrouping computes the key Sentry groups an error event by:
// the hash that decides which issue an event belongs to, so that a log
// store can count issues as Sentry's issue list does.
//
// It implements Sentry's current default grouping configuration,
// newstyle:2023-01-11, for the parts an SDK's error event exercises: the
// client fingerprint (with {{ default }} and the other variables), the
// exception chain (types, the in-app frames of each stack trace by module
// or file name, function and context line, values when no stack trace
// contributes), a single thread's stack trace, an event's own stack trace,
// and the message template. The hash is, as in Sentry, the MD5 of the
// concatenated values of the grouping components that contribute.
//
// The package is pure: Group reads an Event and returns a Result. An Event
// is built from the event JSON (FromEventJSON) or from the log record the
// receiver writes for an event (FromLogRecord). README.md lists what is
// implemented and what is left out.
package sentrygrouping
