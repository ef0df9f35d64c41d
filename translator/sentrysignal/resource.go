package sentrysignal

import (
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
)

// ResourceOfEvent is what an event-shaped payload (an event, a feedback)
// says of its program: "release", "environment", "dist", "platform",
// "server_name", "sdk" and the os, runtime and device contexts. The app
// and browser contexts have no resource field: they stay on the records.
// Members of another type than Sentry's read as absent.
func ResourceOfEvent(doc map[string]any) sentryresource.Resource {
	r := sentryresource.Resource{
		Release:     Text(doc, "release"),
		Environment: Str(doc, "environment"),
		Dist:        Text(doc, "dist"),
		Platform:    Str(doc, "platform"),
		ServerName:  Str(doc, "server_name"),
	}
	sdk := Obj(doc, "sdk")
	r.SDK.Name, r.SDK.Version = Str(sdk, "name"), Str(sdk, "version")
	contexts := Obj(doc, "contexts")
	// contexts.os, contexts.runtime, contexts.device
	os, rt, dev := Obj(contexts, "os"), Obj(contexts, "runtime"), Obj(contexts, "device")
	r.OS.Name, r.OS.Version = Str(os, "name"), Str(os, "version")
	r.Runtime.Name, r.Runtime.Version = Str(rt, "name"), Str(rt, "version")
	r.Device.Architecture, r.Device.Model = Str(dev, "arch"), Str(dev, "model")
	r.Device.Manufacturer = Str(dev, "manufacturer")
	return r
}

// ResourceOfRelease is the resource of a payload that names only its
// release and environment (a check-in, a session's attrs): "release" as
// text (Sentry accepts a number), "environment" when a string.
func ResourceOfRelease(obj map[string]any) sentryresource.Resource {
	return sentryresource.Resource{Release: Text(obj, "release"), Environment: Str(obj, "environment")}
}

// NoteResourceAttribute sets the field of res that an attribute of a log
// or metric entry names, when it names one: sentry.release,
// sentry.environment, sentry.sdk.name, sentry.sdk.version and
// server.address (the SDK's server_name). Translators call it with the
// string attributes they write, so that the entries of a container fill
// the envelope's resource as an event's members do.
func NoteResourceAttribute(res *sentryresource.Resource, key, value string) {
	switch key {
	case sentryattr.Release:
		res.Release = value
	case sentryattr.Environment:
		res.Environment = value
	case sentryattr.SDKName:
		res.SDK.Name = value
	case sentryattr.SDKVersion:
		res.SDK.Version = value
	case string(semconv.ServerAddressKey):
		res.ServerName = value
	}
}

// ResourceOfEventPayload is ResourceOfEvent of an event read as a
// Payload (obj is the event's object).
func ResourceOfEventPayload(p *Payload, obj Node) sentryresource.Resource {
	r := sentryresource.Resource{
		Release:     p.Text(p.Member(obj, "release")),
		Environment: p.Str(p.Member(obj, "environment")),
		Dist:        p.Text(p.Member(obj, "dist")),
		Platform:    p.Str(p.Member(obj, "platform")),
		ServerName:  p.Str(p.Member(obj, "server_name")),
	}
	str := func(obj Node, key string) string { return p.Str(p.Member(obj, key)) }
	sdk := p.Member(obj, "sdk")
	r.SDK.Name, r.SDK.Version = str(sdk, "name"), str(sdk, "version")
	contexts := p.Member(obj, "contexts")
	// contexts.os, contexts.runtime, contexts.device
	os, rt, dev := p.Member(contexts, "os"), p.Member(contexts, "runtime"), p.Member(contexts, "device")
	r.OS.Name, r.OS.Version = str(os, "name"), str(os, "version")
	r.Runtime.Name, r.Runtime.Version = str(rt, "name"), str(rt, "version")
	r.Device.Architecture, r.Device.Model = str(dev, "arch"), str(dev, "model")
	r.Device.Manufacturer = str(dev, "manufacturer")
	return r
}
