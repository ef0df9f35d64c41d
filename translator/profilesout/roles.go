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
func roleOfKey(key string) attrRole { return roleOfKeys[key] }

// roleOfKeys: the attribute keys FromProfiles reads, each with its role;
// any other key is roleOther.
var roleOfKeys = map[string]attrRole{
	sentryattr.ThreadID:                 roleSentryThreadID,
	string(semconv.ThreadIDKey):         roleThreadID,
	string(semconv.ThreadNameKey):       roleThreadName,
	sentryattr.ThreadPriority:           roleThreadPriority,
	sentryattr.QueueAddress:             roleQueueAddress,
	sentryattr.ThreadState:              roleThreadState,
	sentryattr.SampleIdle:               roleSampleIdle,
	string(semconv.ProfileFrameTypeKey): roleFrameType,
	sentryattr.FramePlatform:            roleFramePlatform,
	sentryattr.FrameFilename:            roleFrameFilename,
	sentryattr.FrameRawFunction:         roleFrameRawFunction,
	sentryattr.FrameModule:              roleFrameModule,
	sentryattr.FramePackage:             roleFramePackage,
	sentryattr.FrameInApp:               roleFrameInApp,
	sentryattr.FrameSymbolAddr:          roleFrameSymbolAddr,
	sentryattr.FrameImageAddr:           roleFrameImageAddr,
	sentryattr.FrameAddrMode:            roleFrameAddrMode,
	sentryattr.FrameStatus:              roleFrameStatus,
	sentryattr.FrameData:                roleFrameData,
}
