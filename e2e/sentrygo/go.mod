module sentrygoe2e

go 1.24

require github.com/getsentry/sentry-go v0.30.0

require (
	golang.org/x/sys v0.18.0 // indirect
	golang.org/x/text v0.14.0 // indirect
)
