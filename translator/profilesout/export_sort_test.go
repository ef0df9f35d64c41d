package profilesout

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSortEvents(t *testing.T) {
	const threads = 8
	// Events arrive by sample, each sample on one thread with its times
	// in order, like collectEvents makes them.
	bySample := func(samples, perSample int, at func(sample, i int) uint64) []exportEvent {
		var events []exportEvent
		for s := range samples {
			for i := range perSample {
				events = append(events, exportEvent{ts: at(s, i), sample: int32(s), thread: int32(s % threads)})
			}
		}
		return events
	}
	rng := rand.New(rand.NewPCG(7, 11))
	tests := []struct {
		name   string
		events []exportEvent
	}{
		{"empty", nil},
		{"one", bySample(1, 1, func(int, int) uint64 { return t0 })},
		{"few, below the bucket sort", bySample(5, 3, func(s, i int) uint64 { return t0 + uint64((3-i)*s) })},
		{"ticks shared by every thread", bySample(800, 7, func(s, i int) uint64 {
			return t0 + uint64(rng.IntN(6000))*9_900_990
		})},
		{"already in order", bySample(1, 500, func(_, i int) uint64 { return t0 + uint64(i) })},
		{"all at one time: one bucket sorted by comparison", bySample(300, 4, func(int, int) uint64 { return t0 })},
		{"a burst among sparse times", bySample(200, 10, func(s, i int) uint64 {
			if s%2 == 0 {
				return t0 + uint64(i)
			}
			return t0 + uint64(rng.Int64N(60e9))
		})},
		{"the whole range of times", bySample(100, 10, func(int, int) uint64 { return rng.Uint64() })},
		{"extremes", bySample(50, 2, func(s, i int) uint64 {
			return []uint64{0, math.MaxUint64, 1, math.MaxUint64 - 1}[(s+i)%4]
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := slices.Clone(tt.events)
			slices.SortFunc(want, compareEvents)
			x := &groupConverter{events: slices.Clone(tt.events), threads: make([]threadInfo, threads)}
			x.sortEvents()
			assert.Equal(t, want, x.events)
		})
	}
}

func TestSplitWindows(t *testing.T) {
	at := func(times ...uint64) []exportEvent {
		events := make([]exportEvent, len(times))
		for i, ts := range times {
			events[i].ts = ts
		}
		return events
	}
	tests := []struct {
		name   string
		events []exportEvent
		want   [][]uint64 // the times of each window
	}{
		{"one window up to 66 s", at(t0, t0+66e9), [][]uint64{{t0, t0 + 66e9}}},
		{"equal windows beyond", at(t0, t0+43e9, t0+66e9, t0+130e9), [][]uint64{{t0, t0 + 43e9}, {t0 + 66e9, t0 + 130e9}}},
		{"no short tail", at(t0, t0+60e9, t0+67e9), [][]uint64{{t0}, {t0 + 60e9, t0 + 67e9}}},
		{
			// The window of the last time would end past the largest
			// time: it takes the rest instead of wrapping around.
			"near the largest time", at(0, math.MaxUint64-1e9, math.MaxUint64),
			[][]uint64{{0}, {math.MaxUint64 - 1e9, math.MaxUint64}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got [][]uint64
			for _, w := range splitWindows(tt.events, maxChunkSpanNanos) {
				require.NotEmpty(t, w)
				var times []uint64
				for _, e := range w {
					times = append(times, e.ts)
				}
				got = append(got, times)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
