package profilesin

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/translatortest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesout"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// idleCase builds a transaction profile from stacks written as function
// names, leaf first ("d c b a": d called by c … called by a; "" is an
// idle sample), one sample every 10 ms per thread, in payload order.
type idleCase struct {
	name    string
	v2      bool
	threads map[string][]string // thread id → its samples' stacks
	// frames whose function name is not enough: name → frame.
	frames map[string]sentry.Frame
	// when set, the transaction's relative_start_ns and relative_end_ns.
	window [2]uint64
	// want, per thread, each sample's stack as the output shows it, a
	// trailing "*" for a sample marked sentry.sample.idle.
	want map[string][]string
}

func (c idleCase) profile() *sentry.Profile {
	p := &sentry.Profile{
		Version: sentry.VersionV1, EventID: "0123456789abcdef0123456789abcdef", Platform: "javascript",
		Timestamp: time.Unix(1_795_000_000, 0),
		Transactions: []sentry.Transaction{{
			ID: "fedcba9876543210fedcba9876543210", TraceID: "00112233445566778899aabbccddeeff", Name: "t", ActiveThreadID: "0",
			RelativeStartNS: c.window[0], RelativeEndNS: c.window[1],
		}},
	}
	if c.v2 {
		p.Version, p.Transactions, p.ChunkID, p.ProfilerID = sentry.VersionV2, nil, p.EventID, p.EventID
	}
	frameOf := map[string]int64{}
	stackOf := map[string]int64{}
	stack := func(s string) int64 {
		if id, ok := stackOf[s]; ok {
			return id
		}
		var frames []int64
		for _, name := range strings.Fields(s) {
			f, ok := frameOf[name]
			if !ok {
				fr, custom := c.frames[name]
				if !custom {
					fr = sentry.Frame{Function: name, AbsPath: "app.js", Lineno: 1}
				}
				f = int64(len(p.Frames))
				p.Frames = append(p.Frames, fr)
				frameOf[name] = f
			}
			frames = append(frames, f)
		}
		stackOf[s] = int64(p.Stacks.Len())
		p.Stacks.Append(frames...)
		return stackOf[s]
	}
	// Interleave the threads' samples in payload order, by time.
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range c.threads {
			if !yield(id) {
				return
			}
		}
	})
	for i := 0; ; i++ {
		added := false
		for _, id := range ids {
			if i < len(c.threads[id]) {
				added = true
				elapsed := uint64(i) * 10_000_000
				p.Samples = append(p.Samples, sentry.Sample{StackID: stack(c.threads[id][i]), ThreadID: id, ElapsedSinceStartNS: elapsed})
				p.Samples[len(p.Samples)-1].Timestamp = int64(1_795_000_000_000_000_000 + elapsed)
			}
		}
		if !added {
			return p
		}
	}
}

// shownStacks reads each thread's samples back in time order, as idleCase
// writes them; a frame whose column is set shows it ("b:9").
func shownStacks(t *testing.T, pd pprofile.Profiles) map[string][]string {
	t.Helper()
	dict := pd.Dictionary()
	type shown struct {
		ts    uint64
		stack string
	}
	byThread := map[string][]shown{}
	for _, rp := range pd.ResourceProfiles().All() {
		for _, s := range rp.ScopeProfiles().At(0).Profiles().At(0).Samples().All() {
			attrs := translatortest.SampleAttrs(t, pd, s)
			var names []string
			for _, l := range dict.StackTable().At(int(s.StackIndex())).LocationIndices().All() {
				line := dict.LocationTable().At(int(l)).Lines().At(0)
				name := dict.StringTable().At(int(dict.FunctionTable().At(int(line.FunctionIndex())).NameStrindex()))
				if line.Column() != 0 {
					name += fmt.Sprintf(":%d", line.Column())
				}
				names = append(names, name)
			}
			stack := strings.Join(names, " ")
			if idle, ok := attrs[sentryattr.SampleIdle]; ok {
				require.Equal(t, true, idle)
				stack += "*"
			}
			thread := fmt.Sprint(attrs["thread.id"])
			for _, ts := range s.TimestampsUnixNano().All() {
				byThread[thread] = append(byThread[thread], shown{ts, stack})
			}
		}
	}
	out := map[string][]string{}
	for id, samples := range byThread {
		slices.SortStableFunc(samples, func(a, b shown) int { return cmp.Compare(a.ts, b.ts) })
		for _, s := range samples {
			out[id] = append(out[id], s.stack)
		}
	}
	return out
}

// TestIdleSamplesAsSentryShowsThem: vroom's ReplaceIdleStacks, case by
// case (its own test cases and the details of its loop).
func TestIdleSamplesAsSentryShowsThem(t *testing.T) {
	tests := []idleCase{
		{
			name:    "between two active samples: the frames they share from the root",
			threads: map[string][]string{"0": {"e d c b a", "", "", "", "e c b a"}},
			want:    map[string][]string{"0": {"e d c b a", "c b a*", "c b a*", "c b a*", "e c b a"}},
		},
		{
			name:    "before the first and after the last active sample: empty, marked idle",
			threads: map[string][]string{"0": {"", "e d c b a", "", "e c b a", ""}},
			want:    map[string][]string{"0": {"*", "e d c b a", "c b a*", "e c b a", "*"}},
		},
		{
			name:    "one active sample: nothing between two",
			threads: map[string][]string{"0": {"", "", "e d c b a", "", ""}},
			want:    map[string][]string{"0": {"*", "*", "e d c b a", "*", "*"}},
		},
		{
			name:    "threads apart",
			threads: map[string][]string{"0": {"e d c b a", "", "e c b a"}, "1": {"y x", "", "z x"}},
			want:    map[string][]string{"0": {"e d c b a", "c b a*", "e c b a"}, "1": {"y x", "x*", "z x"}},
		},
		{
			name:    "several runs, each its own pair",
			threads: map[string][]string{"0": {"", "e d c b a", "", "e c b a", "", "e b a", ""}},
			want:    map[string][]string{"0": {"*", "e d c b a", "c b a*", "e c b a", "b a*", "e b a", "*"}},
		},
		{
			// vroom's loop steps past the active sample that ends a run
			// without remembering it: the next run pairs the sample before
			// the first run with its own end.
			name:    "the active sample that ends a run is not the next run's start",
			threads: map[string][]string{"0": {"d c b a", "", "e a", "", "f c b a"}},
			want:    map[string][]string{"0": {"d c b a", "a*", "e a", "c b a*", "f c b a"}},
		},
		{
			name:    "an active sample between two runs is remembered when it is not a run's end",
			threads: map[string][]string{"0": {"d c b a", "", "e a", "g a", "", "f c b a"}},
			want:    map[string][]string{"0": {"d c b a", "a*", "e a", "g a", "a*", "f c b a"}},
		},
		{
			name:    "no frame in common: empty, marked idle",
			threads: map[string][]string{"0": {"c b a", "", "z y"}},
			want:    map[string][]string{"0": {"c b a", "*", "z y"}},
		},
		{
			// vroom compares file, function, line and address: another
			// column is the same frame, and the earlier sample's is kept.
			name:    "frames that differ in column only are one frame",
			threads: map[string][]string{"0": {"c b1 a", "", "d b9 a"}},
			frames: map[string]sentry.Frame{
				"b1": {Function: "b", AbsPath: "app.js", Lineno: 1, Colno: 1},
				"b9": {Function: "b", AbsPath: "app.js", Lineno: 1, Colno: 9},
			},
			want: map[string][]string{"0": {"c b:1 a", "b:1 a*", "d b:9 a"}},
		},
		{
			name:    "frames on other lines are other frames",
			threads: map[string][]string{"0": {"c b1 a", "", "d b2 a"}},
			frames: map[string]sentry.Frame{
				"b1": {Function: "b", AbsPath: "app.js", Lineno: 1},
				"b2": {Function: "b", AbsPath: "app.js", Lineno: 2},
			},
			want: map[string][]string{"0": {"c b a", "a*", "d b a"}},
		},
		{
			// Relay drops the samples outside [relative_start_ns,
			// relative_end_ns] before vroom sees the profile.
			name:    "samples outside the transaction are not Sentry's",
			threads: map[string][]string{"0": {"c b a", "", "d b a", "", "e b a"}},
			window:  [2]uint64{5_000_000, 35_000_000},
			want:    map[string][]string{"0": {"c b a", "*", "d b a", "*", "e b a"}},
		},
		{
			name:    "continuous-profiling chunks are not treated",
			v2:      true,
			threads: map[string][]string{"0": {"c b a", "", "d b a"}},
			want:    map[string][]string{"0": {"c b a", "", "d b a"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.profile()
			for _, group := range []bool{false, true} {
				pd := toProfiles([]DecodedProfile{{Profile: p}}, ReceiveOptions{GroupSamples: group})
				translatortest.RequireValidPdata(t, pd)
				translatortest.RequireNoDuplicates(t, pd.Dictionary())
				assert.Equal(t, tt.want, shownStacks(t, pd), "GroupSamples %v", group)
			}
		})
	}
}

// TestIdleSamplesBoundedWork: a payload that pairs deep stacks in ever
// new ways costs at most a bounded multiple of its size; the idle samples
// past the bound keep their empty stacks, still marked idle.
func TestIdleSamplesBoundedWork(t *testing.T) {
	const depth, stacks, rounds = 2000, 64, 40
	p := idleCase{}.profile()
	for i := range depth {
		p.Frames = append(p.Frames, sentry.Frame{Function: fmt.Sprintf("f%d", i), AbsPath: "app.js", Lineno: 1})
	}
	empty := int64(0)
	p.Stacks.Append()
	for s := range stacks {
		// Each stack shares all but its leaf with the others.
		frames := []int64{int64(s)}
		for f := stacks; f < depth; f++ {
			frames = append(frames, int64(f))
		}
		p.Stacks.Append(frames...)
	}
	var elapsed uint64
	for r := range rounds {
		for s := range stacks {
			// Active, idle: consecutive runs pair ever other stacks.
			for _, id := range []int64{1 + int64((s*(r+1))%stacks), empty} {
				p.Samples = append(p.Samples, sentry.Sample{StackID: id, ThreadID: "0", ElapsedSinceStartNS: elapsed})
				elapsed += 10_000_000
			}
		}
	}
	b := NewProfilesBuilder(ReceiveOptions{})
	b.Add(DecodedProfile{Profile: p})
	pd := b.Profiles()
	replaced, kept := 0, 0
	for _, s := range pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0).Samples().All() {
		if _, idle := translatortest.SampleAttrs(t, pd, s)[sentryattr.SampleIdle]; !idle {
			continue
		}
		if pd.Dictionary().StackTable().At(int(s.StackIndex())).LocationIndices().Len() > 0 {
			replaced++
		} else {
			kept++
		}
	}
	budget := idleWorkFloor + idleWorkPerInput*(len(p.Stacks.FrameIndices)+len(p.Samples))
	perRun := 2*(depth-stacks) + 1
	assert.Equal(t, rounds*stacks, replaced+kept, "every idle sample is marked")
	assert.Positive(t, kept, "the bound was reached")
	// Past the bound, a run that repeats the last pair computed still
	// gets its stack (at no cost): at most once a round here.
	assert.LessOrEqual(t, replaced, budget/perRun+rounds, "no more runs than the bound pays for")
	assert.Positive(t, replaced, "the runs the bound pays for are replaced")
	t.Logf("%d idle samples replaced, %d kept empty (bound %d frame comparisons)", replaced, kept, budget)
}

// TestIdleSamplesExportEmpty: back to Sentry, an idle sample has the empty
// stack its SDK sent, not the one it was shown with, and the others keep
// theirs.
func TestIdleSamplesExportEmpty(t *testing.T) {
	c := idleCase{threads: map[string][]string{"0": {"", "e d c b a", "", "", "e c b a", "", "e b a", ""}}}
	in := c.profile()
	for _, group := range []bool{false, true} {
		pd := toProfiles([]DecodedProfile{{Profile: in}}, ReceiveOptions{GroupSamples: group})
		chunks, drops := profilesout.FromProfiles(pd, profilesout.ExportOptions{})
		require.Empty(t, drops)
		require.Len(t, chunks, 1)
		out := chunks[0].Profile
		require.Len(t, out.Samples, len(in.Samples))
		for i, s := range out.Samples {
			var names []string
			for _, f := range out.Stacks.At(int(s.StackID)) {
				names = append(names, out.Frames[f].Function)
			}
			assert.Equal(t, c.threads["0"][i], strings.Join(names, " "), "sample %d, GroupSamples %v", i, group)
		}
	}
}
