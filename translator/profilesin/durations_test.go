package profilesin_test

// The wall time of every function in the OTLP output, checked against the
// durations Sentry computes from the same payload (vroom's call trees,
// Sentry's flame graphs): on each thread, a sample lasts until the next
// one. The oracle reads the Sentry JSON itself, not the translator's
// decoded model.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtureprofiles"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/itemrules"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// durationFixtures are the shared sample-format payloads (V1 and V2) of real
// SDKs and of Sentry's own repositories that Relay's checks accept. Left
// out: vroom's cocoa.json (the obsolete pre-sample format) and vroomrs's
// V1 cocoa and python and V2 python fixtures (their stacks reach outside
// their frames or stacks: Relay refuses them).
var durationFixtures = []string{
	"relay__relay-profiling_tests_fixtures_sample_v1_valid.json",
	"relay__relay-profiling_tests_fixtures_sample_v2_valid.json",
	"vroomrs__tests_fixtures__sample_v2_valid_cocoa.json",
	"vroomrs__tests_fixtures__sample_v2_valid_android.json",
	"vroom__test_data__node.json",
	"sentry__fixtures_profiles_valid_js_profile.json",
	"sentry-python-2.68.0__captured_http__v1_profile_with_transaction_1.envelope",
	"sentry-python-2.68.0__captured_http__v2_profile_chunk_1.envelope",
	"sentry-python-2.68.0__captured_http__v2_profile_chunk_2.envelope",
	// @sentry/browser 10.75.3 (JS Self-Profiling) in headless Chromium,
	// captured here: an async workload whose awaits leave the thread idle
	// between samples of one function (60 and 150 rounds), and the e2e
	// suite's synchronous page.
	"../testdata/browser10_captured_v1_async.json",
	"../testdata/browser10_captured_v1_async_long.json",
	"../testdata/browser10_captured_v1_sync.json",
}

// readDurationFixture reads a shared fixture, or one of testdata/.
func readDurationFixture(t *testing.T, name string) []byte {
	t.Helper()
	if !strings.HasPrefix(name, "../testdata/") {
		return fixtures.Read(t, name)
	}
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	return data
}

// translateDurationFixture translates a fixture as the receiver does
// (fixturepd's steps, for testdata/ too).
func translateDurationFixture(t *testing.T, name string) pprofile.Profiles {
	t.Helper()
	if !strings.HasPrefix(name, "../testdata/") {
		return fixtureprofiles.Translate(t, profilesin.ReceiveOptions{}, name)[0].Profiles
	}
	return translatePayloads(t, profilePayloads(t, name, readDurationFixture(t, name)))
}

// translatePayloads translates profile items as the receiver does.
func translatePayloads(t *testing.T, payloads [][]byte) pprofile.Profiles {
	t.Helper()
	b := profilesin.NewProfilesBuilder(profilesin.ReceiveOptions{})
	for _, payload := range payloads {
		p, err := sentry.DecodeProfile(payload)
		require.NoError(t, err)
		sentry.Normalize(p)
		_, err = sentry.Check(p, sentry.DefaultLimits(), sentry.ModeLenient)
		require.NoError(t, err)
		b.Add(profilesin.DecodedProfile{Profile: p, Payload: payload})
	}
	return b.Profiles()
}

// functionTimes is wall time per function, in nanoseconds: self (the
// function is the leaf) and total (the function is anywhere on the stack,
// counted once per sample).
type functionTimes map[functionKey]*[2]float64

// functionKey names a function as both formats do. Frames with neither
// function nor file (native addresses, symbolicated later; a location of
// theirs may have no Line) are one key.
type functionKey struct{ name, file string }

var addressOnly = functionKey{name: "<address>"}

func (f functionTimes) add(leaf functionKey, stack []functionKey, d float64) {
	seen := map[functionKey]bool{}
	for i, k := range stack {
		t := f[k]
		if t == nil {
			t = new([2]float64)
			f[k] = t
		}
		if i == 0 && k == leaf {
			t[0] += d
		}
		if !seen[k] {
			t[1] += d
			seen[k] = true
		}
	}
}

func (f functionTimes) sum() (total float64) {
	for _, t := range f {
		total += t[0]
	}
	return total
}

func TestWallTimeMatchesSentry(t *testing.T) {
	for _, name := range durationFixtures {
		t.Run(name, func(t *testing.T) {
			got, period, medianRule := otlpFunctionTimes(t, translateDurationFixture(t, name))
			want := sentryFunctionTimes(t, name, readDurationFixture(t, name), period)
			requireSameTimes(t, want, got)
			t.Logf("%s: OTLP wall time in functions / Sentry's: %.4f (median rule: %.4f); %d functions",
				name, got.sum()/want.sum(), medianRule/want.sum(), len(want))
		})
	}
}

// requireSameTimes: every function Sentry shows has its self and total
// time in OTLP, to 1%, and OTLP shows no other.
func requireSameTimes(t *testing.T, want, got functionTimes) {
	t.Helper()
	require.NotEmpty(t, want)
	for k, w := range want {
		g := got[k]
		require.NotNil(t, g, "function %v is missing", k)
		for i, what := range []string{"self", "total"} {
			assert.InDelta(t, w[i], g[i], 0.01*w[i]+1, "%s time of %v", what, k)
		}
	}
	assert.Len(t, got, len(want), "no function that Sentry does not show")
}

// TestWallTimeMatchesSentryIdleRandom: transaction profiles made up of
// random stacks, runs of idle samples on two threads, frames that vroom
// takes as one (another column) or as two (another line), and a
// transaction window or none: OTLP shows each function's time as Sentry
// does.
func TestWallTimeMatchesSentryIdleRandom(t *testing.T) {
	for seed := range uint64(300) {
		payload := randomIdleProfile(seed)
		got, period, _ := otlpFunctionTimes(t, translatePayloads(t, [][]byte{payload}))
		want := sentryFunctionTimes(t, "random.json", payload, period)
		if !t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { requireSameTimes(t, want, got) }) {
			t.Logf("payload: %s", payload)
			return
		}
	}
}

// randomIdleProfile is a V1 javascript profile: two threads, a third of
// the samples idle, about 10 ms apart.
func randomIdleProfile(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	frames := []map[string]any{
		{"function": "main", "abs_path": "app.js", "lineno": 1, "colno": 1},
		{"function": "handle", "abs_path": "app.js", "lineno": 5, "colno": 3},
		{"function": "handle", "abs_path": "app.js", "lineno": 5, "colno": 9}, // one frame for vroom
		{"function": "handle", "abs_path": "app.js", "lineno": 7, "colno": 3}, // another frame
		{"function": "load", "abs_path": "lib.js", "lineno": 2},
		{"function": "parse", "abs_path": "lib.js", "lineno": 9},
		{"function": "render", "abs_path": "app.js", "lineno": 20},
		{"function": "", "abs_path": "app.js", "lineno": 30},
	}
	stacks := [][]int{{}}
	for range 10 {
		stack := []int{0} // built root first
		for range rng.IntN(5) {
			stack = append(stack, 1+rng.IntN(len(frames)-1))
		}
		slices.Reverse(stack)
		stacks = append(stacks, stack)
	}
	type sample struct {
		StackID  int    `json:"stack_id"`
		ThreadID string `json:"thread_id"`
		Elapsed  string `json:"elapsed_since_start_ns"`
	}
	var samples []sample
	var end uint64
	for _, thread := range []string{"0", "7"} {
		at := uint64(rng.IntN(5_000_000))
		for range 20 + rng.IntN(40) {
			stack := 0
			if rng.IntN(3) > 0 {
				stack = 1 + rng.IntN(len(stacks)-1)
			}
			samples = append(samples, sample{StackID: stack, ThreadID: thread, Elapsed: strconv.FormatUint(at, 10)})
			at += 8_000_000 + uint64(rng.IntN(4_000_000))
		}
		end = max(end, at)
	}
	// Payload order: by time, as SDKs send them.
	slices.SortStableFunc(samples, func(a, b sample) int {
		x, _ := strconv.ParseUint(a.Elapsed, 10, 64)
		y, _ := strconv.ParseUint(b.Elapsed, 10, 64)
		return cmp.Compare(x, y)
	})
	var window [2]uint64
	if rng.IntN(2) == 0 {
		window = [2]uint64{uint64(rng.IntN(int(end / 4))), end/2 + uint64(rng.IntN(int(end/2)))}
	}
	doc := map[string]any{
		"version": "1", "platform": "javascript", "event_id": "0123456789abcdef0123456789abcdef",
		"timestamp": "2026-11-28T05:00:00Z", "release": "random@1",
		"device": map[string]any{"architecture": "x86_64"}, "os": map[string]any{"name": "Linux", "version": "6"},
		"transactions": []any{map[string]any{
			"id": "fedcba9876543210fedcba9876543210", "name": "t", "trace_id": "00112233445566778899aabbccddeeff",
			"active_thread_id":  "0",
			"relative_start_ns": strconv.FormatUint(window[0], 10), "relative_end_ns": strconv.FormatUint(window[1], 10),
		}},
		"profile": map[string]any{"samples": samples, "stacks": stacks, "frames": frames},
	}
	out, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return out
}

// otlpFunctionTimes reads the translator's output: per function, the sum of
// the values of the samples it is on. It also returns the period and the
// wall time each sample worth one period would give.
func otlpFunctionTimes(t *testing.T, pd pprofile.Profiles) (functionTimes, int64, float64) {
	t.Helper()
	dict := pd.Dictionary()
	str := func(i int32) string { return dict.StringTable().At(int(i)) }
	out := functionTimes{}
	var period int64
	var medianRule float64
	for _, rp := range pd.ResourceProfiles().All() {
		for _, sp := range rp.ScopeProfiles().All() {
			for _, prof := range sp.Profiles().All() {
				require.Equal(t, "wall", str(prof.SampleType().TypeStrindex()))
				period = prof.Period()
				for _, s := range prof.Samples().All() {
					require.Equal(t, s.TimestampsUnixNano().Len(), s.Values().Len())
					var stack []functionKey
					for _, loc := range dict.StackTable().At(int(s.StackIndex())).LocationIndices().All() {
						if dict.LocationTable().At(int(loc)).Lines().Len() == 0 {
							stack = append(stack, addressOnly)
						}
						for _, line := range dict.LocationTable().At(int(loc)).Lines().All() {
							fn := dict.FunctionTable().At(int(line.FunctionIndex()))
							name := str(fn.NameStrindex())
							if name == "<anonymous>" {
								name = ""
							}
							k := functionKey{name: name, file: str(fn.FilenameStrindex())}
							if k == (functionKey{}) {
								k = addressOnly
							}
							stack = append(stack, k)
						}
					}
					for _, v := range s.Values().All() {
						medianRule += float64(period)
						if len(stack) > 0 {
							out.add(stack[0], stack, float64(v))
						}
					}
				}
			}
		}
	}
	return out, period, medianRule
}

// sentryPayload is what the oracle reads of a sample-format profile.
type sentryPayload struct {
	Version string `json:"version"`
	// V1: the transaction whose window Relay keeps samples in.
	Transaction  *payloadTransaction  `json:"transaction"`
	Transactions []payloadTransaction `json:"transactions"`
	Profile      struct {
		Samples []struct {
			StackID   int             `json:"stack_id"`
			ThreadID  json.RawMessage `json:"thread_id"`
			Elapsed   json.RawMessage `json:"elapsed_since_start_ns"`
			Timestamp json.Number     `json:"timestamp"`
		} `json:"samples"`
		Stacks [][]int `json:"stacks"`
		Frames []struct {
			Function        string          `json:"function"`
			AbsPath         string          `json:"abs_path"`
			Filename        string          `json:"filename"`
			Lineno          uint32          `json:"lineno"`
			InstructionAddr json.RawMessage `json:"instruction_addr"`
		} `json:"frames"`
	} `json:"profile"`
}

type payloadTransaction struct {
	RelativeStartNS json.RawMessage `json:"relative_start_ns"`
	RelativeEndNS   json.RawMessage `json:"relative_end_ns"`
}

// sentryFunctionTimes is Sentry's rule, from the payload: per thread, the
// samples sorted by time, each lasting until the next one, the last one
// period.
func sentryFunctionTimes(t *testing.T, name string, data []byte, period int64) functionTimes {
	t.Helper()
	out := functionTimes{}
	for _, payload := range profilePayloads(t, name, data) {
		var p sentryPayload
		require.NoError(t, json.Unmarshal(payload, &p))
		type sample struct {
			at    float64
			stack int
		}
		if p.Version != "2" {
			replaceIdleStacksAsVroom(t, &p)
		}
		threads := map[string][]sample{}
		for _, s := range p.Profile.Samples {
			var at float64
			if p.Version == "2" {
				sec, err := s.Timestamp.Float64()
				require.NoError(t, err)
				at = sec * 1e9
			} else {
				ns, err := strconv.ParseUint(unquote(s.Elapsed), 10, 64)
				require.NoError(t, err)
				at = float64(ns)
			}
			id := unquote(s.ThreadID)
			threads[id] = append(threads[id], sample{at: at, stack: s.StackID})
		}
		for _, samples := range threads {
			slices.SortStableFunc(samples, func(a, b sample) int { return cmp.Compare(a.at, b.at) })
			for i, s := range samples {
				d := float64(period)
				if i+1 < len(samples) {
					d = samples[i+1].at - s.at
				}
				var stack []functionKey
				for _, f := range p.Profile.Stacks[s.stack] {
					fr := p.Profile.Frames[f]
					k := functionKey{name: fr.Function, file: cmp.Or(fr.AbsPath, fr.Filename)}
					if k == (functionKey{}) {
						k = addressOnly
					}
					stack = append(stack, k)
				}
				if len(stack) > 0 {
					out.add(stack[0], stack, d)
				}
			}
		}
	}
	return out
}

// profilePayloads are the profile items of an envelope (a .envelope
// fixture), or the document.
func profilePayloads(t *testing.T, name string, data []byte) [][]byte {
	t.Helper()
	if strings.HasSuffix(name, ".envelope") {
		r := envelope.NewReader(bytes.NewReader(data), envelope.Limits{})
		_, err := r.Header()
		require.NoError(t, err)
		var out [][]byte
		for {
			item, err := r.Next()
			if errors.Is(err, io.EOF) {
				return out
			}
			require.NoError(t, err)
			if itemrules.IsProfileItem(item.Header.Type) {
				out = append(out, bytes.Clone(item.Payload))
			}
		}
	}
	return [][]byte{data}
}

func unquote(raw json.RawMessage) string { return strings.Trim(string(raw), `"`) }

// replaceIdleStacksAsVroom is Sentry's treatment of a transaction
// profile's idle samples, as vroom's sample.Profile.Normalize →
// ReplaceIdleStacks does it, applied to the samples Relay keeps (those in
// the transaction's window when it has an end): per thread, in payload
// order, an empty stack between two non-empty ones becomes the frames the
// two share counting from the root (frames compared by filename, function,
// line and instruction address), taken from the earlier stack. vroom's
// loop does not remember the non-empty sample that ends a run of empty
// ones as the start of the next run.
func replaceIdleStacksAsVroom(t *testing.T, p *sentryPayload) {
	t.Helper()
	tx := p.Transaction
	if tx == nil && len(p.Transactions) > 0 {
		tx = &p.Transactions[0]
	}
	var lo, hi uint64
	if tx != nil {
		var err error
		lo, err = strconv.ParseUint(cmp.Or(unquote(tx.RelativeStartNS), "0"), 10, 64)
		require.NoError(t, err)
		hi, err = strconv.ParseUint(cmp.Or(unquote(tx.RelativeEndNS), "0"), 10, 64)
		require.NoError(t, err)
	}
	frameID := func(f int) string {
		fr := p.Profile.Frames[f]
		return fmt.Sprintf("%s|%s|%d|%s", fr.Filename, fr.Function, fr.Lineno, unquote(fr.InstructionAddr))
	}
	byThread := map[string][]int{}
	var order []string
	for i, s := range p.Profile.Samples {
		ns, err := strconv.ParseUint(unquote(s.Elapsed), 10, 64)
		require.NoError(t, err)
		if hi > 0 && (ns < lo || ns > hi) {
			continue
		}
		id := unquote(s.ThreadID)
		if _, seen := byThread[id]; !seen {
			order = append(order, id)
		}
		byThread[id] = append(byThread[id], i)
	}
	active := func(i int) bool { return len(p.Profile.Stacks[p.Profile.Samples[i].StackID]) > 0 }
	for _, id := range order {
		samples := byThread[id]
		prev, nextAt, next := -1, 0, -1
		for i := 0; i < len(samples); i++ {
			if active(samples[i]) {
				prev = p.Profile.Samples[samples[i]].StackID
				continue
			}
			if prev < 0 {
				continue
			}
			if i >= nextAt {
				nextAt = slices.IndexFunc(samples[i:], active)
				if nextAt < 0 {
					break
				}
				nextAt += i
				next = p.Profile.Samples[samples[nextAt]].StackID
			}
			a, b := p.Profile.Stacks[prev], p.Profile.Stacks[next]
			var common []int
			for j, k := len(a)-1, len(b)-1; j >= 0 && k >= 0 && frameID(a[j]) == frameID(b[k]); j, k = j-1, k-1 {
				common = append([]int{a[j]}, common...)
			}
			p.Profile.Stacks = append(p.Profile.Stacks, common)
			for ; i < nextAt; i++ {
				p.Profile.Samples[samples[i]].StackID = len(p.Profile.Stacks) - 1
			}
		}
	}
}
