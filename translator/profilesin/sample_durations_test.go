package profilesin

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestSampleDurationsInOneSortedPass: the one pass over threads whose times
// are in order gives what sorting each thread's events by time gives, and
// events out of order on a thread take the sorting path.
func TestSampleDurationsInOneSortedPass(t *testing.T) {
	const period = 10
	ev := func(thread int32, ts uint64) event { return event{thread: thread, ts: ts} }
	tests := []struct {
		name   string
		events []event
		want   []int64
	}{
		{"one thread", []event{ev(0, 100), ev(0, 110), ev(0, 125)}, []int64{10, 15, period}},
		{"threads interleaved", []event{ev(0, 100), ev(1, 100), ev(0, 111), ev(1, 105), ev(1, 130)}, []int64{11, 5, period, 25, period}},
		{"same time: all but the last worth 0", []event{ev(0, 100), ev(0, 100), ev(0, 100), ev(0, 107)}, []int64{0, 0, 7, period}},
		{"a thread out of order", []event{ev(0, 100), ev(1, 50), ev(0, 90), ev(0, 120)}, []int64{20, period, 10, period}},
		{"a gap past int64", []event{ev(0, 1), ev(0, math.MaxUint64)}, []int64{math.MaxInt64, period}},
		{"a thread without events", []event{ev(2, 5), ev(2, 9)}, []int64{4, period}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := builderWithThreads(3)
			if got := b.sampleDurations(tt.events, period); !slices.Equal(got, tt.want) {
				t.Fatalf("sampleDurations = %v, want %v", got, tt.want)
			}
		})
	}
	rng := rand.New(rand.NewPCG(3, 5))
	for round := range 200 {
		events := randomEvents(rng, round%2 == 0)
		b := builderWithThreads(4)
		want := slices.Clone(b.sampleDurationsSorted(events, period))
		if got := b.sampleDurations(events, period); !slices.Equal(got, want) {
			t.Fatalf("round %d: sampleDurations = %v, sorted %v", round, got, want)
		}
	}
}

// builderWithThreads is a builder whose items have n threads.
func builderWithThreads(n int) *ProfilesBuilder {
	b := NewProfilesBuilder(ReceiveOptions{})
	for i := range n {
		b.threads.Lookup(strconv.Itoa(i))
	}
	return b
}

// randomEvents is up to 60 events on four threads, each thread's times
// rising (repeats included) when inOrder, else drawn at random.
func randomEvents(rng *rand.Rand, inOrder bool) []event {
	var at [4]uint64
	events := make([]event, rng.IntN(60))
	for i := range events {
		th := rng.IntN(4)
		if inOrder {
			at[th] += uint64(rng.IntN(3)) * 7
		} else {
			at[th] = uint64(rng.IntN(50))
		}
		events[i] = event{thread: int32(th), ts: at[th]}
	}
	return events
}
