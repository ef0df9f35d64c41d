package android

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/perfetto"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// DecodePerfettoChunk turns an Android Perfetto chunk (a `profile_chunk`
// item with content type application/x-perfetto-trace: meta, the item's
// first `meta_length` bytes of JSON chunk metadata, then trace, a binary
// Perfetto trace) into a V2 chunk of the sample model: each PerfSample one
// sample on its thread at its realtime, each resolved frame a frame — Java
// frames (from a mapping of the runtime: .oat, .odex, .vdex, .jar, .apk,
// .art, the JIT cache) by their function name, native ones also by their
// mapping (its path as package, its build id as a debug image) and their
// pc relative to it. Without a clock snapshot the samples keep their
// spacing and end at fallback.
func DecodePerfettoChunk(meta, trace []byte, fallback time.Time, limits perfetto.Limits) (*sentry.Profile, error) {
	var a androidPayload
	if err := json.Unmarshal(meta, &a); err != nil {
		return nil, sentry.NewError(sentry.ReasonInvalidJSON, "Perfetto chunk metadata: "+err.Error())
	}
	tr, err := perfetto.Decode(trace, limits)
	if err != nil {
		return nil, sentry.NewError(sentry.ReasonInvalidSampledProfile, err.Error())
	}
	p := &sentry.Profile{
		Version: sentry.VersionV2, Platform: "android", ChunkID: a.ChunkID, ProfilerID: a.ProfilerID,
		Release: a.Release, Environment: a.Environment,
		ClientSDK: sentry.ClientSDK{Name: a.ClientSDK.Name, Version: a.ClientSDK.Version},
	}
	if err := androidDebugMeta(p, a); err != nil {
		return nil, err
	}

	// Without realtime, the samples end at fallback.
	var shift int64
	if !tr.HasClocks && len(tr.Samples) > 0 {
		var last uint64
		for _, s := range tr.Samples {
			last = max(last, s.Timestamp)
		}
		shift = fallback.UnixNano() - int64(last)
	}
	type frameKey struct {
		fn, path string
		pc       uint64
	}
	frames := map[frameKey]int64{}
	images := map[string]int{}
	stacks := map[string]int64{}
	var key strings.Builder
	threads := map[uint32]string{}
	for _, s := range tr.Samples {
		key.Reset()
		indices := make([]int64, len(s.Frames))
		for i, f := range s.Frames {
			k := frameKey{f.Function, f.MappingPath, f.RelPC}
			idx, ok := frames[k]
			if !ok {
				idx = int64(len(p.Frames))
				frames[k] = idx
				p.Frames = append(p.Frames, perfettoFrame(p, f, images))
			}
			indices[i] = idx
			key.WriteString(strconv.FormatInt(idx, 36))
			key.WriteByte(',')
		}
		stack, ok := stacks[key.String()]
		if !ok {
			stack = int64(p.Stacks.Len())
			stacks[key.String()] = stack
			p.Stacks.Append(indices...)
		}
		at, ok := tr.RealtimeNanos(s)
		if !ok {
			at = int64(s.Timestamp) + shift
		}
		tid, ok := threads[s.TID]
		if !ok {
			tid = strconv.FormatUint(uint64(s.TID), 10)
			threads[s.TID] = tid
		}
		p.Samples = append(p.Samples, sentry.Sample{StackID: stack, ThreadID: tid, Timestamp: at})
	}
	if err := androidMeasurements(p, a.Measurements, fallback); err != nil {
		return nil, err
	}
	return p, nil
}

// perfettoFrame maps one resolved frame; a native frame's mapping becomes
// a debug image (once) that the frame's pc is relative to.
func perfettoFrame(p *sentry.Profile, f perfetto.Frame, images map[string]int) sentry.Frame {
	if isRuntimeMapping(f.MappingPath) {
		return sentry.Frame{Function: f.Function, Platform: "java"}
	}
	out := sentry.Frame{Function: f.Function, Package: f.MappingPath, Platform: "native", InstructionAddr: f.RelPC}
	if f.MappingPath == "" {
		return out
	}
	img, ok := images[f.MappingPath]
	if !ok {
		img = len(p.DebugMeta.Images)
		images[f.MappingPath] = img
		p.DebugMeta.Images = append(p.DebugMeta.Images, sentry.Image{Type: "elf", CodeFile: f.MappingPath, CodeID: f.BuildID})
	}
	out.AddrMode = "rel:" + strconv.Itoa(img)
	return out
}

// isRuntimeMapping recognizes the mappings of ART's compiled and
// interpreted Java code.
func isRuntimeMapping(path string) bool {
	for _, suffix := range []string{".oat", ".odex", ".vdex", ".jar", ".apk", ".art", ".dex"} {
		if strings.HasSuffix(path, suffix) {
			return true
		}
	}
	return strings.Contains(path, "jit-cache") || strings.Contains(path, "jit-code-cache")
}

// PerfettoMetaLength reads `meta_length` from an item header line: where
// the JSON metadata of a Perfetto chunk ends and its trace begins.
func PerfettoMetaLength(header []byte) (int, bool) {
	var h struct {
		MetaLength *int `json:"meta_length"`
	}
	if json.Unmarshal(header, &h) != nil || h.MetaLength == nil || *h.MetaLength < 0 {
		return 0, false
	}
	return *h.MetaLength, true
}
