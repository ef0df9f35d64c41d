// Package symbolication is the core shared by every kind of symbolication
// this repository does: the Frame a resolver reads and writes, the Resolver
// contract each artifact kind implements (JavaScript source maps, ProGuard/R8
// mappings, native debug files), and a cache bounded in bytes that holds
// parsed artifacts so that each is parsed once.
//
// It knows nothing about pdata or the collector: the profiles processor (and,
// once logs carry exception stack traces, a logs processor) reads frames out
// of its own signal, asks the resolver of the frame's kind, and writes the
// answer back.
package symbolication
