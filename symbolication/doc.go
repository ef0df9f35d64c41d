// Package symbolication is the core shared by every kind of symbolication
// this repository does: the Frame a resolver reads and writes, the
// Resolver contract each artifact kind implements (JavaScript source maps
// in sourcemap, ProGuard/R8 mappings in proguard, native debug files in
// native), the sentinel errors that say why a frame was not resolved, and
// Cache, the one cache every kind and the processor's resolved frames use:
// bounded in bytes, one load per key, contexts honoured (a caller that
// gives up never poisons the key for others), each Failure remembered for
// its own retry time, loads in the background when asked.
//
// Finding artifacts (directories, the .build-id layout, debuginfod,
// rescans on a miss) is package sources; parsing and lookup are each
// kind's package.
//
// It knows nothing about pdata or the collector: the profiles processor (and,
// once logs carry exception stack traces, a logs processor) reads frames out
// of its own signal, asks the resolver of the frame's kind, and writes the
// answer back.
package symbolication
