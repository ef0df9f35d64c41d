package sentrysignal

// Resource is what a payload says about the process that sent it: the
// fields a receiver's resource builder turns into resource attributes
// (service.version, deployment.environment.name, os.*, process.runtime.*,
// device.*, browser.*, telemetry.sdk.*). Empty fields were absent.
type Resource struct {
	Release     string // "release"
	Environment string // "environment"
	Dist        string // "dist"
	Platform    string // "platform"
	ServerName  string // "server_name"
	SDKName     string // "sdk.name"
	SDKVersion  string // "sdk.version"

	OSName             string // contexts.os.name
	OSVersion          string // contexts.os.version
	RuntimeName        string // contexts.runtime.name
	RuntimeVersion     string // contexts.runtime.version
	DeviceArch         string // contexts.device.arch
	DeviceModel        string // contexts.device.model
	DeviceManufacturer string // contexts.device.manufacturer
	DeviceFamily       string // contexts.device.family
	AppName            string // contexts.app.app_name
	AppVersion         string // contexts.app.app_version
	AppIdentifier      string // contexts.app.app_identifier
	BrowserName        string // contexts.browser.name
	BrowserVersion     string // contexts.browser.version
}

// ReadContexts fills the contexts.* fields of r from a decoded "contexts"
// object (see DecodeAny). Members of another type than Sentry's read as
// absent; the payload's translator still maps "contexts" in full.
func (r *Resource) ReadContexts(contexts map[string]any) {
	os, rt, br := Obj(contexts, "os"), Obj(contexts, "runtime"), Obj(contexts, "browser")
	dev, app := Obj(contexts, "device"), Obj(contexts, "app")
	r.OSName, r.OSVersion = Str(os, "name"), Str(os, "version")
	r.RuntimeName, r.RuntimeVersion = Str(rt, "name"), Str(rt, "version")
	r.BrowserName, r.BrowserVersion = Str(br, "name"), Str(br, "version")
	r.DeviceArch, r.DeviceModel = Str(dev, "arch"), Str(dev, "model")
	r.DeviceManufacturer, r.DeviceFamily = Str(dev, "manufacturer"), Str(dev, "family")
	r.AppName, r.AppVersion = Str(app, "app_name"), Str(app, "app_version")
	r.AppIdentifier = Str(app, "app_identifier")
}

// ReadTop fills the top-level fields of r from a decoded event-like
// payload (release, environment, dist, platform, server_name, sdk).
func (r *Resource) ReadTop(doc map[string]any) {
	r.Release, r.Environment = Text(doc, "release"), Str(doc, "environment")
	r.Dist, r.Platform, r.ServerName = Text(doc, "dist"), Str(doc, "platform"), Str(doc, "server_name")
	sdk := Obj(doc, "sdk")
	r.SDKName, r.SDKVersion = Str(sdk, "name"), Str(sdk, "version")
}
