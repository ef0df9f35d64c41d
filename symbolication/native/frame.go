package native

// Frame is one source-level frame of a native address.
type Frame struct {
	Function string // demangled; "" when nothing names the code
	File     string // source path as the compiler recorded it; "" without DWARF
	Line     int    // 0 when unknown
	// Inlined is true for a frame whose code the compiler inlined into the
	// next frame of the same address (every frame but the last).
	Inlined bool
}
