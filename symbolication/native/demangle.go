package native

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// demangleName turns a C++ (Itanium ABI) or Rust (legacy or v0) linkage
// name into the source-level name; any other name is returned as is.
// C++ keeps its parameter list, which tells overloads apart in a flame
// graph; GCC's clone suffixes (".constprop.0", ".isra.0", ".cold") are
// dropped because they name the same source function. A legacy Rust name's
// trailing "::h<16 hex>" hash is dropped, as Sentry shows Rust functions.
func demangleName(name string) string {
	if !isMangled(name) {
		return name
	}
	out, err := demangle.ToString(name, demangle.NoClones, demangle.MaxLength(16))
	if err != nil {
		return name
	}
	return stripRustHash(out)
}

// isMangled: an Itanium C++ name (_Z, or __Z with Mach-O's extra
// underscore) or a Rust v0 name (_R).
func isMangled(name string) bool {
	return strings.HasPrefix(name, "_Z") || strings.HasPrefix(name, "_R") || strings.HasPrefix(name, "__Z")
}

// stripRustHash drops the "::h" + 16 hex digits that legacy Rust mangling
// appends to every path.
func stripRustHash(s string) string {
	const hashLen = len("::h") + 16
	if len(s) <= hashLen || !strings.HasPrefix(s[len(s)-hashLen:], "::h") {
		return s
	}
	if !isLowerHex(s[len(s)-16:]) {
		return s
	}
	return s[:len(s)-hashLen]
}

// isLowerHex reports whether s is lower-case hex digits only.
func isLowerHex(s string) bool {
	return strings.IndexFunc(s, func(c rune) bool { return (c < '0' || c > '9') && (c < 'a' || c > 'f') }) < 0
}
