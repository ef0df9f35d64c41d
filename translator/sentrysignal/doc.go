// Package sentrysignal holds what every translator of a non-profile Sentry
// item shares: the options a receiver passes (personal data, limits), the
// typed decode error, the resource-relevant fields a payload names, and the
// conversions every mapping uses (timestamps, ids, levels, JSON values and
// Sentry's typed attributes into pcommon values).
//
// The per-item translators (sentryevent, sentrylog, sentrymetric,
// sentrysession, sentrycheckin, sentryfeedback, sentryclientreport) all take
// an item's payload bytes and an Options and append into a destination the
// caller owns; none builds a Resource.
package sentrysignal
