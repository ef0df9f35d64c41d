//go:build linux

package proccpu

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// clockTicks is the unit of utime and stime in /proc/<pid>/stat (Linux's
// USER_HZ, 100 on every architecture Go supports).
const clockTicks = 100

// Self is the CPU time this process has used (the garbage collector's
// threads count).
func Self() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(fmt.Sprintf("getrusage: %v", err)) // cannot fail for RUSAGE_SELF
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Of is the CPU time process pid has used, from /proc/<pid>/stat, in
// clock ticks of 10 ms.
func Of(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("CPU time of %d: %w", pid, err)
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')'. utime and stime are fields 14 and 15 of stat,
	// 12 and 13 after the name.
	fields := bytes.Fields(raw[bytes.LastIndexByte(raw, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("CPU time of %d: %d fields in %q", pid, len(fields), raw)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("CPU time of %d: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
