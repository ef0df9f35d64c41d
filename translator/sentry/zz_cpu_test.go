package sentry

import (
	"encoding/json"
	"syscall"
	"testing"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZCPU(t *testing.T) {
	type frame struct {
		AbsPath  string `json:"abs_path"`
		Module   string `json:"module"`
		Filename string `json:"filename"`
		Function string `json:"function"`
		Lineno   uint32 `json:"lineno"`
		InApp    *bool  `json:"in_app"`
	}
	type sample struct {
		Timestamp float64 `json:"timestamp"`
		ThreadID  string  `json:"thread_id"`
		StackID   int     `json:"stack_id"`
	}
	type chunk struct {
		Profile struct {
			Frames         []frame                      `json:"frames"`
			Stacks         [][]int                      `json:"stacks"`
			Samples        []sample                     `json:"samples"`
			ThreadMetadata map[string]map[string]string `json:"thread_metadata"`
		} `json:"profile"`
		ProfilerID string `json:"profiler_id"`
		Version    string `json:"version"`
	}
	data := largeChunk(48000, 5000, 2000)
	for round := 0; round < 3; round++ {
		c0 := cpuTime()
		for i := 0; i < 20; i++ {
			DecodeProfile(data)
		}
		c1 := cpuTime()
		for i := 0; i < 5; i++ {
			var c chunk
			json.Unmarshal(data, &c)
		}
		c2 := cpuTime()
		mine, ref := (c1-c0)/20, (c2-c1)/5
		t.Logf("cpu/op: DecodeProfile %v, encoding/json %v, ratio %.1f", mine, ref, float64(ref)/float64(mine))
	}
}
