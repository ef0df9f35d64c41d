// Package complexityguard holds the complexity guard (see its tests).
package complexityguard
