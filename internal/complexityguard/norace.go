//go:build !race

package complexityguard

const raceEnabled = false
