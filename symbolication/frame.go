package symbolication

import "context"

// Kind names the artifact kind a frame is resolved with; it is also the
// value of the processor's `kind` telemetry attribute.
type Kind string

// The kinds of frames the processor resolves.
const (
	// KindSourceMap: minified JavaScript (browser and Node bundles),
	// resolved with source maps.
	KindSourceMap Kind = "sourcemap"
	// KindProGuard: JVM frames obfuscated by ProGuard or R8, resolved with
	// their mapping.txt.
	KindProGuard Kind = "proguard"
	// KindNative: addresses in a binary identified by its build id,
	// resolved with its debug file.
	KindNative Kind = "native"
)

// Frame is a stack frame as resolvers see it: the fields each kind reads
// from its input and writes in its answers. Line and Column are 1-based, 0
// when unknown.
type Frame struct {
	// Function is the function (method) name.
	Function string
	// Module is what holds the function when the kind has such a thing:
	// the JVM class of a method.
	Module string
	// File is the source file: an original source for an answer, the
	// bundle's URL or path for a JavaScript lookup.
	File   string
	Line   int
	Column int
	// Address is the instruction address in the binary's file address
	// space (native frames).
	Address uint64
	// Inlined is true for a frame a compiler inlined into the next one of
	// the same answer.
	Inlined bool
}

// Lookup is one frame to resolve and what identifies the artifact it needs.
type Lookup struct {
	Frame Frame
	// DebugID identifies the artifact when the producer sent one: the
	// debug id of a JavaScript bundle's source map, the UUID of a ProGuard
	// mapping.
	DebugID string
	// BuildID is the hex build id of the binary of a native frame.
	BuildID string
	// ImageAddr is where the binary of a native frame was loaded: its
	// addresses less ImageAddr are offsets into the file's first loadable
	// segment (a pprof Mapping's memory_start − file_offset).
	ImageAddr uint64
	// Executing says the frame's position is where it was executing (an
	// error's stack frame), not where its function starts (a profiler's
	// JavaScript frame): a source map answers the mapping at or before it.
	Executing bool
}

// Resolver resolves the frames of one kind.
type Resolver interface {
	// Resolve returns the original frames of one frame, innermost (inlined)
	// first, outermost last. It returns an error wrapping ErrNoArtifact
	// when no artifact for the frame is known, ErrNoMatch when the
	// artifact has nothing at the frame's position, ErrMalformed when the
	// artifact could not be parsed, ErrTimeout when fetching it took too
	// long, and any other error (ErrFetch) when it could not be read or
	// fetched. An error wrapping ErrPending
	// says the artifact is still being looked for (a directory scan, a
	// download) and ctx ended first: the frame is to be asked again later.
	// It is safe for concurrent use.
	Resolve(ctx context.Context, in Lookup) ([]Frame, error)
}
