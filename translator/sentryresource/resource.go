// Package sentryresource is who sent an envelope: what its items say of
// the program (release, environment, sdk, os, device, runtime), one value
// per envelope, written as the resource of every signal made from it. It
// is a leaf: every translator fills it, none reads another's output back.
package sentryresource

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// Resource is what Sentry says about the program that sent an envelope:
// one value per envelope, filled from every item that names it (the
// profile, the transaction or span container, and any other signal's
// payload), and written by CopyTo as the resource of every signal made from
// that envelope, so that a backend joins a service's profiles, spans, logs
// and metrics by identical resource attributes. Each field names the
// Sentry JSON it is read from and the attribute it becomes (semantic
// conventions where one exists, sentry.* otherwise); an empty field writes
// nothing.
type Resource struct {
	// ServiceName, when set, is service.name (the receiver's service_name);
	// else service.name is the package of a `package@version` release, else
	// "unknown_service:<platform>".
	ServiceName string
	// ProjectID: the project of the request path → sentry.project.id.
	ProjectID string

	Release     string // "release" → service.version
	Environment string // "environment" → deployment.environment.name
	Dist        string // "dist" → sentry.dist
	Platform    string // "platform" → sentry.platform
	ServerName  string // events' "server_name" → host.name

	// SDK: "sdk" of events and transactions, "client_sdk" of profiles and
	// chunks → telemetry.sdk.name, telemetry.sdk.version.
	SDK sentry.ClientSDK
	// OS: "os" of V1 profiles, "contexts.os" of events → os.name,
	// os.version, os.build_id ("build_number").
	OS sentry.OS
	// Device: "device" of V1 profiles, "contexts.device" of events →
	// host.arch ("architecture", verbatim, e.g. arm64e),
	// device.model.identifier ("model"), device.manufacturer,
	// sentry.device.locale, sentry.device.classification,
	// sentry.device.is_emulator (bool).
	Device sentry.Device
	// Runtime: "runtime" of V1 profiles, "contexts.runtime" of events →
	// process.runtime.name, process.runtime.version.
	Runtime sentry.Runtime
}

// Fill sets what r lacks from o: each top-level field on its own, each
// context (SDK, OS, Device, Runtime) whole from the first source that has
// any of it, so that a name and a version never come from two payloads.
// Filling from the envelope's items in a fixed order gives every signal of
// the envelope the same resource.
func (r *Resource) Fill(o Resource) {
	fill := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	fill(&r.ServiceName, o.ServiceName)
	fill(&r.ProjectID, o.ProjectID)
	fill(&r.Release, o.Release)
	fill(&r.Environment, o.Environment)
	fill(&r.Dist, o.Dist)
	fill(&r.Platform, o.Platform)
	fill(&r.ServerName, o.ServerName)
	fillWhole(&r.SDK, o.SDK)
	fillWhole(&r.OS, o.OS)
	fillWhole(&r.Device, o.Device)
	fillWhole(&r.Runtime, o.Runtime)
}

// CopyTo writes r as the attributes of res (existing keys are replaced).
func (r *Resource) CopyTo(res pcommon.Resource) {
	attrs := res.Attributes()
	attrs.EnsureCapacity(attrs.Len() + 20)
	putStr := func(k, v string) {
		if v != "" {
			attrs.PutStr(k, v)
		}
	}
	// "release" → service.name (its package part: serviceNameOf) and
	// service.version; "environment" → deployment.environment.name;
	// "dist" → sentry.dist; "platform" → sentry.platform; "server_name" →
	// host.name.
	attrs.PutStr(string(semconv.ServiceNameKey), r.ServiceNameOrDefault())
	putStr(string(semconv.ServiceVersionKey), r.Release)
	putStr(string(semconv.DeploymentEnvironmentNameKey), r.Environment)
	putStr(sentryattr.Dist, r.Dist)
	putStr(sentryattr.Platform, r.Platform)
	putStr(sentryattr.ProjectID, r.ProjectID)
	putStr(string(semconv.HostNameKey), r.ServerName)
	// profiler_id, chunk_id, event_id and the transaction are per profile
	// (or per process run): profile attributes, so that a backend that
	// makes series of resource attributes gets one per service, not one
	// per profile.

	// "os"."name", "version", "build_number" → os.name, os.version,
	// os.build_id. No way back: a V2 chunk has no os, device or runtime.
	putStr(string(semconv.OSNameKey), r.OS.Name)
	putStr(string(semconv.OSVersionKey), r.OS.Version)
	putStr(string(semconv.OSBuildIDKey), r.OS.BuildNumber)
	// "device"."architecture", "model", "manufacturer", "locale",
	// "classification", "is_emulator" → host.arch,
	// device.model.identifier, device.manufacturer, sentry.device.*.
	putStr(string(semconv.HostArchKey), r.Device.Architecture)
	putStr(string(semconv.DeviceModelIdentifierKey), r.Device.Model)
	putStr(string(semconv.DeviceManufacturerKey), r.Device.Manufacturer)
	putStr(sentryattr.DeviceLocale, r.Device.Locale)
	putStr(sentryattr.DeviceClassification, r.Device.Classification)
	if r.Device.IsEmulator.Set() {
		attrs.PutBool(sentryattr.DeviceIsEmulator, r.Device.IsEmulator.True())
	}
	// "runtime"."name", "version" → process.runtime.name, .version.
	putStr(string(semconv.ProcessRuntimeNameKey), r.Runtime.Name)
	putStr(string(semconv.ProcessRuntimeVersionKey), r.Runtime.Version)
	// "client_sdk" / "sdk"."name", "version" → telemetry.sdk.name,
	// .version. Back: the exporter names itself (ExportOptions.SDKName,
	// SDKVersion).
	putStr(string(semconv.TelemetrySDKNameKey), r.SDK.Name)
	putStr(string(semconv.TelemetrySDKVersionKey), r.SDK.Version)
}

// ServiceNameOrDefault is service.name: ServiceName when given, else the
// package part of a release that follows Sentry's
// `package@version+build` convention, else "unknown_service:<platform>"
// in the spirit of the semconv fallback.
func (r *Resource) ServiceNameOrDefault() string {
	return serviceNameOf(r.ServiceName, r.Release, r.Platform)
}

// serviceNameOf is the override when given, else the package part of a
// release that follows Sentry's `package@version+build` convention, else
// "unknown_service:<platform>" in the spirit of the semconv fallback.
func serviceNameOf(override, release, platform string) string {
	if override != "" {
		return override
	}
	if pkg, _, ok := strings.Cut(release, "@"); ok && pkg != "" {
		return pkg
	}
	if platform != "" {
		return "unknown_service:" + platform
	}
	return "unknown_service"
}

// fillWhole sets an empty context from src, whole. An empty src writes
// nothing: every log of a container fills the envelope's resource, and
// storing an empty struct over an empty one still costs the write
// barriers of its strings.
func fillWhole[T comparable](dst *T, src T) {
	var zero T
	if *dst == zero && src != zero {
		*dst = src
	}
}
