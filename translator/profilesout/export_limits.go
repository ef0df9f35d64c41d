package profilesout

// pdata → Sentry: the limits of one conversion. Anyone who can reach the
// collector's OTLP receiver can send any profile, so what a request turns
// into is bounded before it is built: what one sample value expands to,
// the events a request may add beyond those its bytes carry, the length
// of a frame's strings, and the JSON bytes of a chunk and of a request.

import (
	"strconv"
	"unicode/utf8"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/jsontext"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

const (
	// maxSampleEvents is the most events one value makes: an aggregated
	// Sample, or one timestamp's count. A thread sampled at 101 Hz makes
	// 6,666 events in a 66 s chunk; an aggregated sample of a pprof CPU
	// profile stands for every CPU's samples of its stack, hence the room.
	// A larger value is cut to this and counted once, as one sample.
	maxSampleEvents = 1 << 16
	// maxRequestExtraEvents is the most events one FromProfiles call makes
	// beyond one per Sample or timestamp of its input: those cost the
	// sender nothing (a value of 2^62 is 10 bytes), so they share one
	// budget for the whole request instead of one per profiler.
	maxRequestExtraEvents = 1 << 19
	// DefaultMaxRequestChunkBytes is ExportOptions.MaxRequestBytes when
	// unset: the JSON bytes the chunks of one request may hold.
	DefaultMaxRequestChunkBytes = 256 << 20

	// Relay caps a frame's `function`, `raw_function` and `symbol` at 256
	// characters (max_chars "symbol") and `filename` and `abs_path` at 256
	// (max_chars "path") in events. It keeps profile frames as they come,
	// but Sentry shows no more, and a frame is repeated in every chunk that
	// uses it: the same caps apply here, to `module` and `package` too
	// (file paths and dotted names), and 128 (max_chars "enumlike") to the
	// short fields.
	maxFrameSymbolChars = 256
	maxFramePathChars   = 256
	maxFrameEnumChars   = 128
	// maxFrameDataBytes bounds a frame's `data` (symbolicator details, as
	// raw JSON that cannot be cut): a larger one is left out.
	maxFrameDataBytes = 4 << 10
)

// limitFrame cuts the strings of a frame to the caps above.
func limitFrame(f *sentry.Frame) {
	f.Function = truncateChars(f.Function, maxFrameSymbolChars)
	f.RawFunction = truncateChars(f.RawFunction, maxFrameSymbolChars)
	f.Symbol = truncateChars(f.Symbol, maxFrameSymbolChars)
	f.Module = truncateChars(f.Module, maxFramePathChars)
	f.Package = truncateChars(f.Package, maxFramePathChars)
	f.Filename = truncateChars(f.Filename, maxFramePathChars)
	f.AbsPath = truncateChars(f.AbsPath, maxFramePathChars)
	f.Platform = truncateChars(f.Platform, maxFrameEnumChars)
	f.AddrMode = truncateChars(f.AddrMode, maxFrameEnumChars)
	f.Status = truncateChars(f.Status, maxFrameEnumChars)
	if len(f.Data) > maxFrameDataBytes {
		f.Data = ""
	}
}

// truncateChars cuts s to at most limit characters, the last three of
// them "..." as Relay writes a trimmed string. It reads at most limit+1
// characters of s, whatever its length.
func truncateChars(s string, limit int) string {
	if len(s) <= limit {
		return s // at most limit bytes, so at most limit characters
	}
	cut, chars := 0, 0 // cut: the byte offset after limit-3 characters
	for i := 0; i < len(s); chars++ {
		if chars == limit-3 {
			cut = i
		}
		if chars == limit {
			return s[:cut] + "..."
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s
}

// Upper bounds of the JSON the chunk writer (sentry.AppendChunkJSON)
// makes, so that a chunk is measured before anything is written. Each
// counts the names, punctuation and numbers of its object at their widest,
// and its strings exactly.
const (
	// frameFixedBytes: the keys of every frame field, three addresses of
	// 18 characters, two numbers of 10 digits, a boolean.
	frameFixedBytes = 320
	// sampleFixedBytes: `,{"stack_id":` and a stack id of 10 digits,
	// `,"thread_id":` (its value is counted apart), `,"timestamp":` and
	// seconds of 20 characters (int64 nanoseconds), `}`. A chunk of
	// maxProfileEvents samples must stay under Relay's limit: this is
	// tight on purpose.
	sampleFixedBytes = 70
	// sampleQueueKeyBytes, sampleStateKeyBytes: `,"queue_address":`,
	// `,"state":`.
	sampleQueueKeyBytes = 17
	sampleStateKeyBytes = 9
	// stackFrameBytes: one frame index and its comma.
	stackFrameBytes = 21
	// chunkFixedBytes: the top-level fields and every other key.
	chunkFixedBytes = 4 << 10
)

// frameBound bounds the JSON of one frame.
func frameBound(f *sentry.Frame) int64 {
	n := frameFixedBytes + len(f.Data)
	for _, s := range [...]string{f.Function, f.RawFunction, f.Symbol, f.Module, f.Package, f.Filename, f.AbsPath, f.Platform, f.AddrMode, f.Status} {
		if s != "" {
			n += jsontext.StringLen(s)
		}
	}
	return int64(n)
}

// sampleBound bounds the JSON of a sample with the given thread id (its
// JSON length), queue address and state.
func sampleBound(threadIDBytes int, queue, state string) int64 {
	n := sampleFixedBytes + threadIDBytes
	if queue != "" {
		n += sampleQueueKeyBytes + jsontext.StringLen(queue)
	}
	if state != "" {
		n += sampleStateKeyBytes + jsontext.StringLen(state)
	}
	return int64(n)
}

// chunkMetaBound bounds the JSON of everything of a chunk but its samples,
// stacks and frames: the top-level strings, thread and queue metadata,
// images and measurements.
func chunkMetaBound(p *sentry.Profile) int64 {
	n := chunkFixedBytes
	for _, s := range [...]string{p.EventID, p.ProfilerID, p.ChunkID, p.Platform, p.Release, p.Environment, p.Dist,
		p.ClientSDK.Name, p.ClientSDK.Version} {
		n += jsontext.StringLen(s)
	}
	n += metadataBound(p)
	for i := range p.DebugMeta.Images {
		n += imageBound(&p.DebugMeta.Images[i])
	}
	return int64(n + measurementsBound(p.Measurements))
}

// measurementsBound bounds the JSON of "measurements".
func measurementsBound(ms []sentry.Measurement) int {
	n := 0
	for i := range ms {
		n += 40 + jsontext.StringLen(ms[i].Name) + jsontext.StringLen(ms[i].Unit) + 60*len(ms[i].Values)
	}
	return n
}

// metadataBound bounds the JSON of "thread_metadata" and "queue_metadata".
func metadataBound(p *sentry.Profile) int {
	n := 0
	for _, t := range p.ThreadMetadata {
		n += 40 + jsontext.StringLen(t.ThreadID) + jsontext.StringLen(t.Name)
	}
	for _, q := range p.QueueMetadata {
		n += 20 + jsontext.StringLen(q.Address) + jsontext.StringLen(q.Label)
	}
	return n
}

// imageBound bounds the JSON of one debug image.
func imageBound(img *sentry.Image) int {
	n := 200
	for _, s := range [...]string{img.Type, img.CodeFile, img.DebugID, img.DebugFile, img.CodeID, img.UUID, img.Arch} {
		n += jsontext.StringLen(s)
	}
	return n
}

// threadIDBytes is the JSON length of each thread's id, for sampleBound.
func threadIDBytes(threads []threadInfo) []int {
	n := make([]int, len(threads))
	for i := range threads {
		n[i] = jsontext.StringLen(threads[i].id)
	}
	return n
}

// eventBudget tracks what the samples of a group may still expand to, and
// what was lost on the way.
type eventBudget struct {
	left int64 // events the group may still make (maxProfileEvents)
	// extra is the request's budget of events beyond one per Sample or
	// timestamp (maxRequestExtraEvents), shared by every group.
	extra *int64
	// malformed counts the events of samples whose stack is not valid, at
	// most maxSampleEvents per value; cut counts the values (aggregated
	// Samples or timestamps) that made fewer events than they stand for.
	malformed, cut int64
}

// take charges the n events one value stands for to the budgets and
// returns how many it makes. A value cut short counts once in b.cut,
// however many events it lost: the sender chooses values at will, and
// one counted as billions of lost samples would drown every real drop.
func (b *eventBudget) take(n int64) int64 {
	if n <= 0 {
		return 0
	}
	kept := min(n, maxSampleEvents, b.left)
	if kept > 1+*b.extra {
		kept = 1 + *b.extra
	}
	if kept < n {
		b.cut++
	}
	b.left -= kept
	if kept > 1 {
		*b.extra -= kept - 1
	}
	return kept
}

// addMalformed counts the events of a value whose stack is not valid.
func (b *eventBudget) addMalformed(n int64) {
	b.malformed = satAdd(b.malformed, min(n, maxSampleEvents))
}

// budgetError describes the limits a cut value ran into.
func budgetError(where string, cut int64) string {
	return where + ": " + strconv.FormatInt(cut, 10) + " samples cut: one value makes at most " +
		strconv.Itoa(maxSampleEvents) + " events, one profiler at most " + strconv.Itoa(maxProfileEvents) +
		", one request at most " + strconv.Itoa(maxRequestExtraEvents) + " beyond one per sample or timestamp"
}
