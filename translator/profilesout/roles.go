package profilesout

import (
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
)

// attrDeploymentEnvironmentOld is the key deployment.environment.name
// replaced in semantic conventions 1.27.
const attrDeploymentEnvironmentOld = "deployment.environment"

// attrRole is what a sample or location attribute means to FromProfiles.
type attrRole uint8

// The roles, each beside the attribute key that has it (roleOfKey).
const (
	roleOther          attrRole = iota
	roleSentryThreadID          // sentry.thread.id
	roleThreadID                // thread.id
	roleThreadName              // thread.name
	roleThreadPriority          // sentry.thread.priority
	roleQueueAddress            // sentry.queue.address
	roleThreadState             // sentry.thread.state
	roleSampleIdle              // sentry.sample.idle
	// Location attributes.
	roleFrameType        // profile.frame.type
	roleFramePlatform    // sentry.frame.platform
	roleFrameFilename    // sentry.frame.filename
	roleFrameRawFunction // sentry.frame.raw_function
	roleFrameModule      // sentry.frame.module
	roleFramePackage     // sentry.frame.package
	roleFrameInApp       // sentry.frame.in_app
	roleFrameSymbolAddr  // sentry.frame.symbol_addr
	roleFrameImageAddr   // sentry.frame.image_addr
	roleFrameAddrMode    // sentry.frame.addr_mode
	roleFrameStatus      // sentry.frame.status
	roleFrameData        // sentry.frame.data
)

// roleOfKey is the key → role table FromProfiles reads the attribute table
// with, once per conversion: samples and locations then switch on a small
// integer instead of comparing key strings.
func roleOfKey(key string) attrRole {
	switch key {
	case sentryattr.ThreadID:
		return roleSentryThreadID
	case string(semconv.ThreadIDKey):
		return roleThreadID
	case string(semconv.ThreadNameKey):
		return roleThreadName
	case sentryattr.ThreadPriority:
		return roleThreadPriority
	case sentryattr.QueueAddress:
		return roleQueueAddress
	case sentryattr.ThreadState:
		return roleThreadState
	case sentryattr.SampleIdle:
		return roleSampleIdle
	case string(semconv.ProfileFrameTypeKey):
		return roleFrameType
	case sentryattr.FramePlatform:
		return roleFramePlatform
	case sentryattr.FrameFilename:
		return roleFrameFilename
	case sentryattr.FrameRawFunction:
		return roleFrameRawFunction
	case sentryattr.FrameModule:
		return roleFrameModule
	case sentryattr.FramePackage:
		return roleFramePackage
	case sentryattr.FrameInApp:
		return roleFrameInApp
	case sentryattr.FrameSymbolAddr:
		return roleFrameSymbolAddr
	case sentryattr.FrameImageAddr:
		return roleFrameImageAddr
	case sentryattr.FrameAddrMode:
		return roleFrameAddrMode
	case sentryattr.FrameStatus:
		return roleFrameStatus
	case sentryattr.FrameData:
		return roleFrameData
	}
	return roleOther
}
