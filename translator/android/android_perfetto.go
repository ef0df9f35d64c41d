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
	a, tr, err := decodePerfettoParts(meta, trace, limits)
	if err != nil {
		return nil, err
	}
	p, err := perfettoMetadata(a)
	if err != nil {
		return nil, err
	}
	c := newPerfettoChunk(p, tr, fallback)
	for _, s := range tr.Samples {
		c.addSample(s)
	}
	if err := androidMeasurements(p, a.Measurements, fallback); err != nil {
		return nil, err
	}
	return p, nil
}

// decodePerfettoParts reads a Perfetto chunk's JSON metadata and its
// binary trace.
func decodePerfettoParts(meta, trace []byte, limits perfetto.Limits) (androidPayload, *perfetto.Trace, error) {
	var a androidPayload
	if err := json.Unmarshal(meta, &a); err != nil {
		return a, nil, sentry.NewError(sentry.ReasonInvalidJSON, "Perfetto chunk metadata: "+err.Error())
	}
	tr, err := perfetto.Decode(trace, limits)
	if err != nil {
		return a, nil, sentry.NewError(sentry.ReasonInvalidSampledProfile, err.Error())
	}
	return a, tr, nil
}

// perfettoMetadata maps a Perfetto chunk's metadata: "chunk_id",
// "profiler_id", "release", "environment", "client_sdk", "debug_meta" and
// "build_id".
func perfettoMetadata(a androidPayload) (*sentry.Profile, error) {
	p := &sentry.Profile{
		Version: sentry.VersionV2, Platform: "android", ChunkID: a.ChunkID, ProfilerID: a.ProfilerID,
		Release: a.Release, Environment: a.Environment,
		ClientSDK: sentry.ClientSDK{Name: a.ClientSDK.Name, Version: a.ClientSDK.Version},
	}
	if err := androidDebugMeta(p, a); err != nil {
		return nil, err
	}
	return p, nil
}

// perfettoChunk builds a chunk's frames, stacks and samples from a
// trace's samples, each frame, image, stack and thread id once.
type perfettoChunk struct {
	p       *sentry.Profile
	trace   *perfetto.Trace
	shift   int64
	frames  map[perfettoFrameKey]int64
	images  map[string]int
	stacks  map[string]int64
	threads threadIDTexts
	key     strings.Builder
}

type perfettoFrameKey struct {
	fn, path string
	pc       uint64
}

func newPerfettoChunk(p *sentry.Profile, tr *perfetto.Trace, fallback time.Time) *perfettoChunk {
	return &perfettoChunk{p: p, trace: tr, shift: perfettoShift(tr, fallback),
		frames: map[perfettoFrameKey]int64{}, images: map[string]int{}, stacks: map[string]int64{}, threads: threadIDTexts{}}
}

// perfettoShift is what moves a trace without realtime so that its
// samples end at fallback; 0 for a trace with clocks.
func perfettoShift(tr *perfetto.Trace, fallback time.Time) int64 {
	if tr.HasClocks || len(tr.Samples) == 0 {
		return 0
	}
	var last uint64
	for _, s := range tr.Samples {
		last = max(last, s.Timestamp)
	}
	return fallback.UnixNano() - int64(last)
}

// addSample: PerfSample → "samples"[] ("stack_id", "thread_id" from its
// tid, "timestamp" on the realtime clock, else shifted).
func (c *perfettoChunk) addSample(s perfetto.Sample) {
	at, ok := c.trace.RealtimeNanos(s)
	if !ok {
		at = int64(s.Timestamp) + c.shift
	}
	c.p.Samples = append(c.p.Samples, sentry.Sample{StackID: c.stack(s.Frames), ThreadID: c.threads.of(s.TID), Timestamp: at})
}

// stack is the "stacks" index of a sample's frames, added once.
func (c *perfettoChunk) stack(frames []perfetto.Frame) int64 {
	c.key.Reset()
	indices := make([]int64, len(frames))
	for i, f := range frames {
		indices[i] = c.frame(f)
		c.key.WriteString(strconv.FormatInt(indices[i], 36))
		c.key.WriteByte(',')
	}
	stack, ok := c.stacks[c.key.String()]
	if !ok {
		stack = int64(c.p.Stacks.Len())
		c.stacks[c.key.String()] = stack
		c.p.Stacks.Append(indices...)
	}
	return stack
}

// frame is the "frames" index of a resolved frame, added once.
func (c *perfettoChunk) frame(f perfetto.Frame) int64 {
	k := perfettoFrameKey{f.Function, f.MappingPath, f.RelPC}
	idx, ok := c.frames[k]
	if !ok {
		idx = int64(len(c.p.Frames))
		c.frames[k] = idx
		c.p.Frames = append(c.p.Frames, perfettoFrame(c.p, f, c.images))
	}
	return idx
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
