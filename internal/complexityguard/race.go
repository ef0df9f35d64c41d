//go:build race

package complexityguard

// raceEnabled: the race detector multiplies CPU time by 2–20 depending on
// the code's memory accesses, so a CPU-time ratio under it says nothing
// about the code's complexity; allocation counts are unaffected.
const raceEnabled = true
