// Package sentryevent maps Sentry error and message events (envelope
// "event" items and the bodies of POST /api/<project>/store/) to OTLP log
// records: one LogRecord per event, with the exception as semantic
// conventions name it and every other field kept under a documented
// sentry.* attribute, so that the event can be read back from the record.
// README.md holds the mapping table.
package sentryevent
