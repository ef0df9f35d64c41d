package translator

import "github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"

// ResourceOfSignal is what a non-profile payload (an event, feedback, a
// session update, a check-in) says of its program, in the envelope
// resource's terms: "release", "environment", "dist", "platform",
// "server_name", "sdk" and the os, runtime and device contexts. The app
// and browser contexts have no field here: they stay on the records.
func ResourceOfSignal(s sentrysignal.Resource) Resource {
	r := Resource{
		Release: s.Release, Environment: s.Environment, Dist: s.Dist,
		Platform: s.Platform, ServerName: s.ServerName,
	}
	r.SDK.Name, r.SDK.Version = s.SDKName, s.SDKVersion
	r.OS.Name, r.OS.Version = s.OSName, s.OSVersion
	r.Runtime.Name, r.Runtime.Version = s.RuntimeName, s.RuntimeVersion
	r.Device.Architecture, r.Device.Model, r.Device.Manufacturer = s.DeviceArch, s.DeviceModel, s.DeviceManufacturer
	return r
}
