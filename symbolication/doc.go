// Package symbolication is the core shared by every kind of symbolication
// this repository does: the Frame a resolver reads and writes, the Resolver
// contract each artifact kind implements (JavaScript source maps, ProGuard/R8
// mappings, native debug files), a cache bounded in bytes that holds
// parsed artifacts so that each is parsed once, and what every resolver
// reads files through: OpenRegular and ReadRegular (regular files only,
// never blocking on a FIFO, bounded by size before reading), Roots (a
// configured directory by its real path, links checked to stay within it,
// and the walk of its files) and Scans (background scans of the
// directories, waited for only while the caller's context allows).
//
// It knows nothing about pdata or the collector: the profiles processor (and,
// once logs carry exception stack traces, a logs processor) reads frames out
// of its own signal, asks the resolver of the frame's kind, and writes the
// answer back.
package symbolication
