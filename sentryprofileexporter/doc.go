//go:generate go tool mdatagen metadata.yaml

// Package sentryprofileexporter sends OTLP profiles to Sentry: every resource
// becomes V2 `profile_chunk` envelope items (profilesout.FromProfiles), posted
// to the envelope endpoint of the DSN the resource is routed to. Delivery goes
// through exporterhelper, so `sending_queue` (including persistent storage),
// `retry_on_failure` and Sentry's rate limits all end in retries rather than
// in dropped data.
package sentryprofileexporter // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter"
