package profilesin

// Top-level fields of a profile: "release", "environment", "dist",
// "platform", "os", "device", "runtime", "client_sdk" ⇄ resource
// attributes (sentryresource.Resource, shared by every signal of an envelope);
// "profiler_id", "chunk_id", "event_id" ⇄ profile attributes and the
// chunk's ids. Here: ResourceOfProfile, serviceAttrs, idAttrs; the way
// back is profilesout/resource.go.

import (
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
)

// ResourceOfProfile is what a profile item says of its program: its
// top-level "release", "environment", "dist", "platform", V1 "device",
// "os", "runtime" and V2 "client_sdk".
func ResourceOfProfile(p *sentry.Profile) sentryresource.Resource {
	return sentryresource.Resource{
		Release: p.Release, Environment: p.Environment, Dist: p.Dist, Platform: p.Platform,
		SDK: p.ClientSDK, OS: p.OS, Device: p.Device, Runtime: p.Runtime,
	}
}

// serviceAttrs are service.name, service.version and
// deployment.environment.name as sample attributes too: consumers built on
// the OTLP profiles protocol before resource attributes became string-table
// references (Grafana Pyroscope among them) read the resource's plain keys
// only, and pdata writes references; a sample attribute they read.
func serviceAttrs(r *sentryresource.Resource) [3]stringAttr {
	return [3]stringAttr{
		{string(semconv.ServiceNameKey), r.ServiceNameOrDefault()},
		{string(semconv.ServiceVersionKey), r.Release},
		{string(semconv.DeploymentEnvironmentNameKey), r.Environment},
	}
}

// idAttrs: "profiler_id", "chunk_id", "event_id" (alias
// "profile_id") → profile attributes sentry.profiler_id, sentry.chunk_id,
// sentry.event_id. They are per
// profile (or per process run), not resource attributes, so that a backend
// that makes series of resource attributes gets one per service, not one
// per profile. Back: sentryProfilerID and chunkIDFor.
func idAttrs(p *sentry.Profile) [3]stringAttr {
	return [3]stringAttr{{sentryattr.ProfilerID, p.ProfilerID}, {sentryattr.ChunkID, p.ChunkID}, {sentryattr.EventID, p.EventID}}
}
