package profilesout

// Top-level fields of a profile: "release", "environment", "dist",
// "platform", "os", "device", "runtime", "client_sdk" ⇄ resource
// attributes (Resource, shared by every signal of an envelope);
// "profiler_id", "chunk_id", "event_id" ⇄ profile attributes and the
// chunk's ids. Here: readResourceMeta, sentryProfilerID, foreignProfilerID,
// chunkIDFor; the way in is profilesin/resource.go.

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

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/profileschema"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryid"
)

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
		platform: profileschema.MapStr(attrs, sentryattr.Platform),
		language: profileschema.MapStr(attrs, string(semconv.TelemetrySDKLanguageKey)),
		// resource service.version → "release", else
		// ExportOptions.DefaultRelease. Never empty when either gives one.
		release: cmp.Or(profileschema.MapStr(attrs, string(semconv.ServiceVersionKey)), opts.DefaultRelease),
		// resource deployment.environment.name → "environment"; else the
		// key it replaced (still what many resource detectors write),
		// else ExportOptions.DefaultEnvironment.
		environment: cmp.Or(profileschema.MapStr(attrs, string(semconv.DeploymentEnvironmentNameKey)),
			profileschema.MapStr(attrs, attrDeploymentEnvironmentOld), opts.DefaultEnvironment),
		// resource sentry.dist → "dist".
		dist: profileschema.MapStr(attrs, sentryattr.Dist),
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
	dv.attrs.Each(prof.AttributeIndices(), func(key string, v pcommon.Value) {
		switch key {
		case sentryattr.ProfilerID:
			profilerID = v.AsString()
		case sentryattr.EventID:
			eventID = v.AsString()
		}
	})
	return sentryid.Normalize(cmp.Or(profilerID, profileschema.MapStr(res, sentryattr.ProfilerID), eventID, profileschema.MapStr(res, sentryattr.EventID)))
}

// sentryItemIDKeys are resource attributes that identify one Sentry item,
// not its source: the profiler is the same without them.
var sentryItemIDKeys = []string{sentryattr.ChunkID, sentryattr.EventID, sentryattr.TransactionID, sentryattr.TransactionName, sentryattr.TransactionTraceID}

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
	keys, identified := sourceKeys(attrs)
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
	return sentryid.UUIDv4Hex(id)
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
	return sentryid.UUIDv4Hex(out)
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
		v = depVersion(info, path)
	}
	if v == "" || v == "(devel)" {
		return "0.0.0"
	}
	return strings.TrimPrefix(v, "v")
}

// sourceKeys are the resource attribute keys that name a source, sorted
// (sentryItemIDKeys left out), and whether one of them tells one machine,
// container or instance from another (profilerIdentityKeys).
func sourceKeys(attrs pcommon.Map) (keys []string, identified bool) {
	keys = make([]string, 0, attrs.Len())
	for k := range attrs.All() {
		if slices.Contains(sentryItemIDKeys, k) {
			continue
		}
		identified = identified || slices.Contains(profilerIdentityKeys, k)
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, identified
}

// depVersion is the version of module path among the binary's
// dependencies; "" when it is none of them.
func depVersion(info *debug.BuildInfo, path string) string {
	for _, dep := range info.Deps {
		if dep.Path == path {
			return dep.Version
		}
	}
	return ""
}
