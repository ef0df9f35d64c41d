// Package jsscope names JavaScript frames the way Sentry's Symbolicator
// does (26.4.1 and later): by the scope that encloses the frame's position
// in the minified source, not by the nearest name a source map has before
// it.
//
// Parse scans a minified bundle into its scopes — every function, arrow,
// method, getter, setter and class body, with its extent — and gives each
// the name tokens of the minified source that name it: a declaration's
// identifier, a method's or property's key, the variable or member an
// anonymous function is assigned to, a class's name before its methods'.
// Index.Lookup finds the innermost scope around a generated position;
// ResolveName turns its name tokens into the original identifiers through
// a source map lookup the caller passes (so that this package does not
// depend on a source map implementation); FunctionName does both and
// answers as Sentry shows a frame: the resolved name, "<anonymous>" for a
// callback nothing names, or nothing for top-level code.
//
// The scanner is this package's own, a tokenizer with bracket matching
// rather than a parser: see README.md for why, what it reads, and its
// limits.
package jsscope
