package translator

// Top-level fields of a profile: "release", "environment", "dist",
// "platform", "os", "device", "runtime", "client_sdk" ⇄ resource
// attributes (Resource, shared by every signal of an envelope);
// "profiler_id", "chunk_id", "event_id" ⇄ profile attributes and the
// chunk's ids. Receive: Resource, serviceAttrs, idAttrs.
// Export: readResourceMeta, sentryProfilerID, foreignProfilerID,
// chunkIDFor.

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
)

// Resource is who sent an envelope (translator/sentryresource).
type Resource = sentryresource.Resource

// ResourceOfProfile is what a profile item says of its program: its
// top-level "release", "environment", "dist", "platform", V1 "device",
// "os", "runtime" and V2 "client_sdk".
func ResourceOfProfile(p *sentry.Profile) Resource {
	return Resource{
		Release: p.Release, Environment: p.Environment, Dist: p.Dist, Platform: p.Platform,
		SDK: p.ClientSDK, OS: p.OS, Device: p.Device, Runtime: p.Runtime,
	}
}

// serviceAttrs are service.name, service.version and
// deployment.environment.name as sample attributes too: consumers built on
// the OTLP profiles protocol before resource attributes became string-table
// references (Grafana Pyroscope among them) read the resource's plain keys
// only, and pdata writes references; a sample attribute they read.
func serviceAttrs(r *Resource) [3]stringAttr {
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
	return [3]stringAttr{{attrProfilerID, p.ProfilerID}, {attrChunkID, p.ChunkID}, {attrEventID, p.EventID}}
}

// resourceMeta is what every chunk of one profiler shares.
type resourceMeta struct {
	index                      int // the first resource of the profiler's group
	profilerID                 string
	platform, language         string
	release, environment, dist string
}

// readResourceMeta reads the top-level fields of a resource's chunks.
func readResourceMeta(index int, attrs pcommon.Map, opts ExportOptions) resourceMeta {
	return resourceMeta{
		index: index,
		// resource sentry.platform → "platform" (else the frames vote: see
		// groupConverter.platform).
		platform: mapStr(attrs, attrPlatform),
		language: mapStr(attrs, string(semconv.TelemetrySDKLanguageKey)),
		// resource service.version → "release", else
		// ExportOptions.DefaultRelease. Never empty when either gives one.
		release: cmp.Or(mapStr(attrs, string(semconv.ServiceVersionKey)), opts.DefaultRelease),
		// resource deployment.environment.name → "environment"; else the
		// key it replaced (still what many resource detectors write),
		// else ExportOptions.DefaultEnvironment.
		environment: cmp.Or(mapStr(attrs, string(semconv.DeploymentEnvironmentNameKey)),
			mapStr(attrs, attrDeploymentEnvironmentOld), opts.DefaultEnvironment),
		// resource sentry.dist → "dist".
		dist: mapStr(attrs, attrDist),
	}
}

// sentryProfilerID is the profiler_id of a profile that came from Sentry:
// sentry.profiler_id of a V2 chunk, or the event_id of a V1 profile (a
// transaction profile is its own profiler session); "" for any other
// profile. They are profile attributes (resource attributes before the
// receiver kept resources to the source's identity; still read). Every read
// of the per-profile Sentry ids is here (and in sentryItemIDKeys), so that
// where they live can change in one place.
func sentryProfilerID(dv *dictionaryView, res pcommon.Map, prof pprofile.Profile) string {
	var profilerID, eventID string
	dv.eachAttr(prof.AttributeIndices(), func(key string, v pcommon.Value) {
		switch key {
		case attrProfilerID:
			profilerID = v.AsString()
		case attrEventID:
			eventID = v.AsString()
		}
	})
	return normalizeID(cmp.Or(profilerID, mapStr(res, attrProfilerID), eventID, mapStr(res, attrEventID)))
}

// sentryItemIDKeys are resource attributes that identify one Sentry item,
// not its source: the profiler is the same without them.
var sentryItemIDKeys = []string{attrChunkID, attrEventID, attrTransactionID, attrTransactionName, attrTransactionTraceID}

// profilerIdentityKeys are the resource attributes that tell one machine,
// container or instance from another. Without any of them a resource of the
// eBPF profiler (process.pid and the executable) would be the same
// profiler on every host.
var profilerIdentityKeys = []string{
	string(semconv.HostIDKey),
	string(semconv.HostNameKey),
	string(semconv.K8SPodUIDKey),
	string(semconv.ContainerIDKey),
	string(semconv.ServiceInstanceIDKey),
}

// foreignProfilerID is a stable profiler_id for a source that is not a
// Sentry SDK: a digest of its resource attributes (minus per-item ids), as
// a v4-shaped UUID, so that one source keeps one id across exports. When
// the resource names none of profilerIdentityKeys, instanceID (the
// collector's own identity) is mixed in: sources seen by different
// collectors are then different profilers.
func foreignProfilerID(attrs pcommon.Map, instanceID string) string {
	keys := make([]string, 0, attrs.Len())
	identified := false
	for k := range attrs.All() {
		if slices.Contains(sentryItemIDKeys, k) {
			continue
		}
		if slices.Contains(profilerIdentityKeys, k) {
			identified = true
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := sha256.New()
	for _, k := range keys {
		v, _ := attrs.Get(k)
		fmt.Fprintf(h, "%s\x00%s\x00", k, v.AsString())
	}
	if !identified && instanceID != "" {
		fmt.Fprintf(h, "\x01collector.instance\x00%s\x00", instanceID)
	}
	var id [16]byte
	copy(id[:], h.Sum(nil))
	return uuidV4Hex(id)
}

// chunkIDFor is the chunk_id of window w, which starts at first, of the
// group of profiles profs of one profiler (where names the group): the
// profile id when a single profile makes a single window's first chunk (so
// a Sentry chunk keeps its id), else a digest of the profiler, the first
// profile and the window, so that the same input gives the same ids.
func chunkIDFor(profs []pprofile.Profile, profilerID, where string, w int, first uint64) string {
	prof := profs[0]
	id := prof.ProfileID()
	if w == 0 && len(profs) == 1 && !id.IsEmpty() {
		return hex.EncodeToString(id[:])
	}
	h := sha256.New()
	h.Write([]byte(profilerID))
	h.Write(id[:])
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(prof.Time()))
	h.Write(buf[:])
	h.Write([]byte(where))
	binary.LittleEndian.PutUint64(buf[:], uint64(w))
	h.Write(buf[:])
	if len(profs) > 1 {
		binary.LittleEndian.PutUint64(buf[:], first)
		h.Write(buf[:])
	}
	var out [16]byte
	copy(out[:], h.Sum(nil))
	return uuidV4Hex(out)
}

// moduleVersion is the version of this module in the running binary, or
// "0.0.0" in a development build, which has none.
func moduleVersion() string {
	const path = "github.com/sentryprofile/otelcol-sentryprofile"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "0.0.0"
	}
	v := info.Main.Version
	if info.Main.Path != path {
		v = ""
		for _, dep := range info.Deps {
			if dep.Path == path {
				v = dep.Version
			}
		}
	}
	if v == "" || v == "(devel)" {
		return "0.0.0"
	}
	return strings.TrimPrefix(v, "v")
}
