// Package sentryfeedback maps Sentry user feedback to OTLP log records
// linked to the event and trace they are about: "feedback" items (an
// event whose contexts.feedback holds the message) and the older
// "user_report" items. README.md holds the mapping table.
package sentryfeedback
