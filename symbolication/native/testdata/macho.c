// A tiny library for Mach-O tests: a loop with an inlined helper, called
// from an exported entry point. Built with clang for macOS and linked with
// ld64.lld; dsymutil writes its dSYM.
static inline int square(int x) { return x * x; }

__attribute__((noinline)) int sum_squares(int n) {
	int s = 0;
	for (int i = 0; i < n; i++)
		s += square(i ^ s); /* sum_squares: call square */
	return s;
}

int entry(int n) { return sum_squares(n) + 1; /* entry: call sum_squares */ }
