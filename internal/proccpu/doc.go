// Package proccpu reads the CPU time a process has used, user and system,
// every thread: on a machine shared with other work, benchmarks and load
// tests compare paths by it, since it does not count the time a process
// waited for a core, which wall time does.
package proccpu
