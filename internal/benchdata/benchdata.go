// Package benchdata generates Sentry profiling payloads for benchmarks and
// load tests. Every generator is deterministic: the same seed and
// configuration yield the same bytes, so benchmark results compare across
// runs and machines. The JSON is written by hand into a byte slice rather
// than through encoding/json so that generating a 5 MB chunk costs little
// next to the code being measured.
package benchdata

import (
	"encoding/hex"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
)

// Epoch of generated V2 sample timestamps, in microseconds: 2026-11-18, the
// same era as the chunks captured from real SDKs on these machines.
const epochMicros = 1_795_000_000_000_000

// ChunkConfig shapes a generated V2 profile chunk.
//
// Non-positive values take the smallest sensible setting (1 thread, 1
// stack, 1 frame, depth 1; Hz 101, Seconds 1), and MaxDepth below MinDepth
// is raised to MinDepth, so every configuration yields a valid chunk.
type ChunkConfig struct {
	Seed     uint64  // seeds the PCG generator; also derives chunk_id and profiler_id
	Seconds  float64 // span of the chunk
	Hz       float64 // sampling rate; every thread is sampled at every tick
	Threads  int     // distinct thread_id values
	Stacks   int     // len(profile.stacks)
	MinDepth int     // frames per stack, inclusive bounds
	MaxDepth int
	Frames   int    // len(profile.frames)
	Platform string // "python" (default) or "node"/"javascript" for JS-shaped frames
	// DuplicateFrames is the share of frames that repeat an earlier frame
	// byte for byte: the node SDK sends one frame per V8 call-tree node,
	// so about half of its frames are duplicates.
	DuplicateFrames float64
}

// Samples is the number of samples ChunkV2 writes for c:
// Threads × round(Seconds × Hz).
func (c ChunkConfig) Samples() int {
	c = c.normalized()
	return c.Threads * c.ticks()
}

func (c ChunkConfig) ticks() int { return int(math.Round(c.Seconds * c.Hz)) }

func (c ChunkConfig) normalized() ChunkConfig {
	if c.Seconds <= 0 {
		c.Seconds = 1
	}
	if c.Hz <= 0 {
		c.Hz = 101
	}
	c.Threads = max(c.Threads, 1)
	c.Stacks = max(c.Stacks, 1)
	c.Frames = max(c.Frames, 1)
	c.MinDepth = max(c.MinDepth, 1)
	c.MaxDepth = max(c.MaxDepth, c.MinDepth)
	if c.Platform == "" {
		c.Platform = "python"
	}
	return c
}

// LargeChunkConfig is a busy 60 s python chunk: 8 threads at 101 Hz (48,480
// samples), 5,000 stacks 20–80 frames deep over 2,000 frames; about 5.25 MB.
func LargeChunkConfig() ChunkConfig {
	return ChunkConfig{
		Seed: 1, Seconds: 60, Hz: 101, Threads: 8,
		Stacks: 5000, MinDepth: 20, MaxDepth: 80, Frames: 2000,
		Platform: "python",
	}
}

// SmallChunkConfig is the size a real SDK sends for a lightly loaded
// service: about 250 samples and 70 KB.
func SmallChunkConfig() ChunkConfig {
	return ChunkConfig{
		Seed: 2, Seconds: 1.24, Hz: 101, Threads: 2,
		Stacks: 70, MinDepth: 8, MaxDepth: 40, Frames: 240,
		Platform: "python",
	}
}

// NodeSDKChunkConfig is shaped like what @sentry/node 11 sends for a busy
// service (measured on real captures): one thread sampled for 7 s at about
// 100 Hz (707 samples), deep stacks (20–110 frames) over 260 frames of
// which half are duplicates, long node_modules paths; about 135 KB, the size
// of the real chunk issue 18 measured, and 11–12 KB gzip'd.
func NodeSDKChunkConfig() ChunkConfig {
	return ChunkConfig{
		Seed: 3, Seconds: 7, Hz: 101, Threads: 1,
		Stacks: 160, MinDepth: 20, MaxDepth: 110, Frames: 260,
		Platform: "node", DuplicateFrames: 0.5,
	}
}

// ChunkV2 returns a V2 `profile_chunk` payload shaped by cfg.
//
// Samples are in timestamp order; at every tick each thread is sampled once
// with the same timestamp, as the python and node SDKs do. Stack ids are
// skewed so that a few stacks are hot, and the root-most frames of all stacks
// come from a small set so that flame graphs share their base.
func ChunkV2(cfg ChunkConfig) []byte {
	cfg = cfg.normalized()
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5e47c0de))
	chunkID, profilerID := hexID(rng), hexID(rng)
	threads := threadIDs(cfg.Threads)
	sdkName, sdkVersion := clientSDK(cfg.Platform)

	frames := make([][]byte, cfg.Frames)
	for i := range frames {
		if cfg.DuplicateFrames > 0 && i > 0 && rng.Float64() < cfg.DuplicateFrames {
			frames[i] = frames[rng.IntN(i)]
			continue
		}
		frames[i] = appendScriptFrame(nil, rng, i, cfg.Platform)
	}
	stacks := randomStacks(rng, cfg.Stacks, cfg.MinDepth, cfg.MaxDepth, cfg.Frames, cfg.Threads)

	ticks := cfg.ticks()
	b := make([]byte, 0, estimateChunkSize(cfg))
	b = append(b, `{"chunk_id":"`...)
	b = append(b, chunkID...)
	b = append(b, `","client_sdk":{"name":`...)
	b = strconv.AppendQuote(b, sdkName)
	b = append(b, `,"version":`...)
	b = strconv.AppendQuote(b, sdkVersion)
	b = append(b, `},"environment":"production","platform":`...)
	b = strconv.AppendQuote(b, cfg.Platform)
	b = append(b, `,"profile":{"frames":[`...)
	for i, f := range frames {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, f...)
	}
	b = append(b, `],"samples":[`...)
	tickMicros := 1e6 / cfg.Hz
	for k := range ticks {
		// Sampler wake-ups drift by up to a third of a millisecond.
		ts := epochMicros + int64(math.Round(float64(k)*tickMicros)) + rng.Int64N(300)
		for t, tid := range threads {
			if k > 0 || t > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"stack_id":`...)
			b = strconv.AppendInt(b, int64(threadStack(rng, t, cfg.Threads, cfg.Stacks)), 10)
			b = append(b, `,"thread_id":"`...)
			b = append(b, tid...)
			b = append(b, `","timestamp":`...)
			b = appendMicros(b, ts)
			b = append(b, '}')
		}
	}
	b = append(b, `],"stacks":`...)
	b = appendStacks(b, stacks)
	b = append(b, `,"thread_metadata":{`...)
	for t, tid := range threads {
		if t > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, tid...)
		b = append(b, `":{"name":`...)
		b = strconv.AppendQuote(b, scriptThreadName(t, cfg.Platform))
		b = append(b, '}')
	}
	b = append(b, `}},"profiler_id":"`...)
	b = append(b, profilerID...)
	b = append(b, `","release":"checkout-service@2.14.3","version":"2"}`...)
	return b
}

func estimateChunkSize(cfg ChunkConfig) int {
	avgDepth := (cfg.MinDepth + cfg.MaxDepth) / 2
	return cfg.Frames*260 + cfg.Stacks*(avgDepth*5+2) + cfg.Samples()*80 + 1024
}

// ProfileV1Cocoa returns a V1 `profile` payload shaped like one from the
// Cocoa SDK before symbolication: 3,000 native frames that carry only an
// instruction_addr inside one of 60 macho images, 24,000 samples over 8
// threads at 101 Hz (29.7 s, under Relay's 30 s limit), queue metadata and
// the transaction the profile belongs to.
func ProfileV1Cocoa(seed uint64) []byte {
	const (
		images   = 60
		frames   = 3000
		stacks   = 2500
		threads  = 8
		ticks    = 3000 // × 8 threads = 24,000 samples
		tickNS   = 1_000_000_000 / 101
		minDepth = 8
		maxDepth = 48
	)
	rng := rand.New(rand.NewPCG(seed, 0xc0c0a))
	eventID, txID, traceID := hexID(rng), hexID(rng), hexID(rng)

	type image struct{ addr, size uint64 }
	imgs := make([]image, images)
	addr := uint64(0x1_0258_c000)
	for i := range imgs {
		size := (uint64(rng.IntN(4096)) + 16) << 12 // 64 KB to 16 MB, page aligned
		imgs[i] = image{addr: addr, size: size}
		addr += size + uint64(rng.IntN(64)+1)<<14
	}

	b := make([]byte, 0, 3<<20)
	b = append(b, `{"debug_meta":{"images":[`...)
	for i, im := range imgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"code_file":`...)
		b = strconv.AppendQuote(b, cocoaImagePath(i))
		b = append(b, `,"debug_id":"`...)
		b = appendDebugID(b, rng)
		b = append(b, `","image_addr":"`...)
		b = appendHexAddr(b, im.addr)
		b = append(b, `","image_size":`...)
		b = strconv.AppendUint(b, im.size, 10)
		b = append(b, `,"image_vmaddr":"0x0000000100000000","type":"macho"}`...)
	}
	b = append(b, `]},"device":{"architecture":"arm64e","is_emulator":false,"locale":"en_US","manufacturer":"Apple","model":"iPhone16,1"},"environment":"production","event_id":"`...)
	b = append(b, eventID...)
	b = append(b, `","os":{"build_number":"22C152","name":"iOS","version":"18.2"},"platform":"cocoa","profile":{"frames":[`...)
	for i := range frames {
		if i > 0 {
			b = append(b, ',')
		}
		// Hot code clusters in a few images (the app, UIKit, libobjc).
		im := imgs[hotIndex(rng, images)]
		b = append(b, `{"instruction_addr":"`...)
		b = appendHexAddr(b, im.addr+uint64(rng.Int64N(int64(im.size)))&^3)
		b = append(b, `"}`...)
	}
	b = append(b, `],"queue_metadata":{"0x0000000102adc700":{"label":"com.apple.main-thread"},"0x000000016d8fb180":{"label":"com.apple.root.default-qos"}},"samples":[`...)
	for k := range ticks {
		elapsed := uint64(k)*tickNS + uint64(rng.IntN(200_000))
		for t := range threads {
			if k > 0 || t > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"elapsed_since_start_ns":"`...)
			b = strconv.AppendUint(b, elapsed, 10)
			b = append(b, `","queue_address":"`...)
			if t == 0 {
				b = append(b, "0x0000000102adc700"...)
			} else {
				b = append(b, "0x000000016d8fb180"...)
			}
			b = append(b, `","stack_id":`...)
			b = strconv.AppendInt(b, int64(threadStack(rng, t, threads, stacks)), 10)
			b = append(b, `,"thread_id":"`...)
			b = strconv.AppendInt(b, int64(cocoaThreadID(t)), 10)
			b = append(b, `"}`...)
		}
	}
	b = append(b, `],"stacks":`...)
	b = appendStacks(b, randomStacks(rng, stacks, minDepth, maxDepth, frames, threads))
	b = append(b, `,"thread_metadata":{`...)
	for t := range threads {
		if t > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(cocoaThreadID(t)), 10)
		b = append(b, `":{`...)
		if t == 0 {
			b = append(b, `"name":"main",`...)
		}
		b = append(b, `"priority":31}`...)
	}
	endNS := uint64(ticks)*tickNS + 1_000_000
	b = append(b, `}},"release":"TrendingMovies@2.3.1+417","timestamp":"2026-11-18T09:46:40.000Z","transaction":{"active_thread_id":"`...)
	b = strconv.AppendInt(b, int64(cocoaThreadID(0)), 10)
	b = append(b, `","id":"`...)
	b = append(b, txID...)
	b = append(b, `","name":"MoviesViewController","relative_end_ns":"`...)
	b = strconv.AppendUint(b, endNS, 10)
	b = append(b, `","relative_start_ns":"0","trace_id":"`...)
	b = append(b, traceID...)
	b = append(b, `"},"version":"1"}`...)
	return b
}

// Envelope wraps one payload in a Sentry envelope with an explicit length, as
// the python and go SDKs send it. The event_id is derived from the payload so
// the result is as deterministic as the payload. An empty platform leaves the
// item header without one.
func Envelope(itemType, platform string, payload []byte) []byte {
	return envelope(itemType, platform, payload, true)
}

// EnvelopeUnsized is Envelope without the item's `length`, as @sentry/node
// and the browser SDKs send it: the payload runs to its newline.
func EnvelopeUnsized(itemType, platform string, payload []byte) []byte {
	return envelope(itemType, platform, payload, false)
}

func envelope(itemType, platform string, payload []byte, sized bool) []byte {
	h := fnv.New128a()
	h.Write(payload)
	b := make([]byte, 0, len(payload)+160)
	b = append(b, `{"event_id":"`...)
	b = hex.AppendEncode(b, h.Sum(nil))
	b = append(b, `"}`+"\n"+`{"type":`...)
	b = strconv.AppendQuote(b, itemType)
	if sized {
		b = append(b, `,"length":`...)
		b = strconv.AppendInt(b, int64(len(payload)), 10)
	}
	if platform != "" {
		b = append(b, `,"platform":`...)
		b = strconv.AppendQuote(b, platform)
	}
	b = append(b, "}\n"...)
	b = append(b, payload...)
	return append(b, '\n')
}

// randomStacks returns stacks as frame-index lists, leaf first. Stack s
// belongs to thread s mod threads, as in real SDK data, where every stack
// ends in its thread's root frames: the main thread's (frames 0-2) or the
// worker pool's (frames 3-5, shared by identical workers). Above the roots,
// frames are drawn from the whole table.
func randomStacks(rng *rand.Rand, n, minDepth, maxDepth, frames, threads int) [][]int {
	const rootDepth = 3
	out := make([][]int, n)
	for i := range out {
		depth := minDepth + rng.IntN(maxDepth-minDepth+1)
		s := make([]int, depth)
		root := 0
		if threads > 1 && i%threads != 0 {
			root = rootDepth
		}
		for j := range depth {
			if fromRoot := depth - 1 - j; fromRoot < rootDepth && frames >= 2*rootDepth {
				s[j] = root + fromRoot
				continue
			}
			s[j] = rng.IntN(frames)
		}
		out[i] = s
	}
	return out
}

// threadStack picks the stack that thread t is sampled in: one of its own
// stacks (those ≡ t mod threads, see randomStacks), skewed towards a few hot
// ones. One worker sample in ten is in the pool's common code (waiting for
// work, the executor loop), whose stacks the first worker owns.
func threadStack(rng *rand.Rand, t, threads, stacks int) int {
	owner := t
	if t > 1 && rng.IntN(10) == 0 {
		owner = 1
	}
	if owner >= stacks {
		return hotIndex(rng, stacks)
	}
	own := (stacks - owner + threads - 1) / threads
	return owner + threads*hotIndex(rng, own)
}

func appendStacks(b []byte, stacks [][]int) []byte {
	b = append(b, '[')
	for i, s := range stacks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j, f := range s {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(f), 10)
		}
		b = append(b, ']')
	}
	return append(b, ']')
}

// hotIndex picks an index in [0, n) with a quadratic skew towards 0: the
// first tenth of the range receives about a third of the picks.
func hotIndex(rng *rand.Rand, n int) int {
	u := rng.Float64()
	return min(int(u*u*float64(n)), n-1)
}

// hexID is a 32-hex-digit id (chunk_id, profiler_id, event_id, trace_id).
func hexID(rng *rand.Rand) []byte {
	var raw [16]byte
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	return hex.AppendEncode(nil, raw[:])
}

// appendDebugID writes a dashed, upper-case UUID as macho debug ids appear.
func appendDebugID(b []byte, rng *rand.Rand) []byte {
	const digits = "0123456789ABCDEF"
	for i := range 32 {
		if i == 8 || i == 12 || i == 16 || i == 20 {
			b = append(b, '-')
		}
		b = append(b, digits[rng.IntN(16)])
	}
	return b
}

// appendHexAddr writes a 64-bit address as 0x and 16 hex digits.
func appendHexAddr(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	b = append(b, '0', 'x')
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, digits[(v>>uint(shift))&0xf])
	}
	return b
}

// appendMicros writes Unix microseconds as float seconds with exactly six
// decimals.
func appendMicros(b []byte, us int64) []byte {
	b = strconv.AppendInt(b, us/1_000_000, 10)
	b = append(b, '.')
	frac := us % 1_000_000
	for d := int64(100_000); d > 0; d /= 10 {
		b = append(b, byte('0'+frac/d%10))
	}
	return b
}

// threadIDs are pthread_self values as CPython reports them: large numbers,
// one stack size apart, sent as strings.
func threadIDs(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = strconv.AppendUint(nil, 140195255602048-uint64(i)*8392704, 10)
	}
	return out
}

func cocoaThreadID(t int) int {
	if t == 0 {
		return 259 // the main thread's mach port, as in real cocoa profiles
	}
	return 5635 + t*1024
}

func scriptThreadName(t int, platform string) string {
	switch {
	case t == 0 && isJS(platform):
		return "main"
	case t == 0:
		return "MainThread"
	case isJS(platform):
		return "worker-" + strconv.Itoa(t)
	default:
		return "ThreadPoolExecutor-0_" + strconv.Itoa(t-1)
	}
}

func clientSDK(platform string) (name, version string) {
	switch {
	case platform == "python":
		return "sentry.python.django", "2.68.0"
	case isJS(platform):
		return "sentry.javascript.node", "11.1.0"
	default:
		return "sentry." + platform, "1.0.0"
	}
}

func isJS(platform string) bool { return platform == "node" || platform == "javascript" }

// cocoaImagePath names image i; the first three are the ones real cocoa
// profiles spend most samples in, the rest are distinct system libraries.
func cocoaImagePath(i int) string {
	switch i {
	case 0:
		return "/private/var/containers/Bundle/Application/C3511752-DD67-4FE8-9DA2-ACE18ADFAA61/TrendingMovies.app/TrendingMovies"
	case 1:
		return "/System/Library/PrivateFrameworks/UIKitCore.framework/UIKitCore"
	case 2:
		return "/usr/lib/libobjc.A.dylib"
	}
	names := [...]string{"Foundation", "CoreFoundation", "QuartzCore", "CoreGraphics", "Metal", "CFNetwork", "Security", "AVFoundation", "CoreData", "SwiftUI", "Combine", "Network"}
	name := names[i%len(names)]
	switch i / len(names) % 5 {
	case 0:
		return "/System/Library/Frameworks/" + name + ".framework/" + name
	case 1:
		return "/System/Library/PrivateFrameworks/" + name + "Services.framework/" + name + "Services"
	case 2:
		return "/usr/lib/swift/libswift" + name + ".dylib"
	case 3:
		return "/usr/lib/system/libsystem_" + name + ".dylib"
	default:
		return "/System/Library/Frameworks/" + name + ".framework/Support/" + name + "Support"
	}
}
