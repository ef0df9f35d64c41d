package sentry

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func stacksOf(stacks ...[]int64) Stacks {
	var s Stacks
	for _, st := range stacks {
		s.Append(st...)
	}
	return s
}

// validV1 is a V1 profile that passes every rule; each case breaks one.
func validV1() *Profile {
	return &Profile{
		Version:   VersionV1,
		EventID:   "41fed0925670468bb0457f61a74688ec",
		Platform:  "python",
		Timestamp: time.Unix(1724777211, 0).UTC(),
		Device:    Device{Architecture: "x86_64"},
		OS:        OS{Name: "Linux", Version: "6.1"},
		Transactions: []Transaction{{
			ID:              "30976f2ddbe04ac9b6bffe6e35d4710c",
			Name:            "GET /",
			TraceID:         "4b25bc58f14243d8b208d1e22a054164",
			ActiveThreadID:  "1",
			RelativeStartNS: 0,
			RelativeEndNS:   40_000_000_000,
		}},
		Samples: []Sample{
			{StackID: 0, ThreadID: "1", ElapsedSinceStartNS: 10_000_000},
			{StackID: 1, ThreadID: "1", ElapsedSinceStartNS: 20_000_000},
		},
		Stacks: stacksOf([]int64{0}, []int64{1, 0}, nil),
		Frames: []Frame{{Function: "a"}, {Function: "b"}},
	}
}

// validV2 is a V2 chunk that passes every rule.
func validV2() *Profile {
	return &Profile{
		Version:    VersionV2,
		ProfilerID: "4d229f1d3807421ba62a5f8bc295d836",
		ChunkID:    "0432a0a4c25f4697bf9f0a2fcbe6a814",
		Platform:   "python",
		ClientSDK:  ClientSDK{Name: "sentry.python", Version: "2.68.0"},
		Samples: []Sample{
			{StackID: 0, ThreadID: "1", Timestamp: 1724777211_500000000},
			{StackID: 1, ThreadID: "1", Timestamp: 1724777211_510000000},
		},
		Stacks: stacksOf([]int64{0}, []int64{1, 0}, nil),
		Frames: []Frame{{Function: "a"}, {Function: "b"}},
	}
}

// position is where an *Error points: sample, stack, frame.
type position struct{ sample, stack, frame int }

func TestValidate(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name   string
		base   func() *Profile
		mutate func(p *Profile)
		limits Limits
		want   Reason   // "" for valid
		at     position // for the malformed_samples and malformed_stacks cases
		// unreadable marks the ReasonNotEnoughSamples case that lenient
		// mode refuses too (no samples at all); the other reasons are
		// told apart by readableReasons.
		unreadable bool
	}{
		{name: "V1 valid", base: validV1, mutate: func(*Profile) {}},
		{name: "V2 valid", base: validV2, mutate: func(*Profile) {}},

		{name: "unsupported version", base: validV1, mutate: func(p *Profile) { p.Version = "3" }, want: ReasonUnsupportedVersion},
		{name: "absent version", base: validV2, mutate: func(p *Profile) { p.Version = "" }, want: ReasonUnsupportedVersion},
		{name: "android without version", base: validV1, mutate: func(p *Profile) { p.Version, p.Platform = "", "android" }, want: ReasonPlatformNotSupported},

		// V1 metadata.
		{name: "V1 event_id missing", base: validV1, mutate: func(p *Profile) { p.EventID = "" }, want: ReasonMissingProfileMetadata},
		{name: "V1 event_id not a UUID", base: validV1, mutate: func(p *Profile) { p.EventID = "41fed0925670468bb0457f61a74688e" }, want: ReasonInvalidJSON},
		{name: "V1 event_id dashed upper case", base: validV1, mutate: func(p *Profile) { p.EventID = "41FED092-5670-468B-B045-7F61A74688EC" }},
		{name: "V1 platform missing", base: validV1, mutate: func(p *Profile) { p.Platform = "" }, want: ReasonMissingProfileMetadata},
		{name: "V1 timestamp missing", base: validV1, mutate: func(p *Profile) { p.Timestamp = time.Time{} }, want: ReasonMissingProfileMetadata},
		{name: "V1 device.architecture missing", base: validV1, mutate: func(p *Profile) { p.Device.Architecture = "" }, want: ReasonMissingProfileMetadata},
		{name: "V1 os.name missing", base: validV1, mutate: func(p *Profile) { p.OS.Name = "" }, want: ReasonMissingProfileMetadata},
		{name: "V1 os.version missing", base: validV1, mutate: func(p *Profile) { p.OS.Version = "" }, want: ReasonMissingProfileMetadata},
		{name: "V1 any platform name is accepted", base: validV1, mutate: func(p *Profile) { p.Platform = "elixir" }},
		{name: "V1 cocoa with complete device", base: validV1, mutate: cocoaDevice},
		{name: "V1 cocoa without os.build_number", base: validV1, mutate: func(p *Profile) { cocoaDevice(p); p.OS.BuildNumber = "" }, want: ReasonMissingProfileMetadata},
		{name: "V1 cocoa without device.is_emulator", base: validV1, mutate: func(p *Profile) { cocoaDevice(p); p.Device.IsEmulator = BoolUnset }, want: ReasonMissingProfileMetadata},
		{name: "V1 cocoa without device.model", base: validV1, mutate: func(p *Profile) { cocoaDevice(p); p.Device.Model = "" }, want: ReasonMissingProfileMetadata},

		// V1 transaction.
		{name: "V1 no transaction", base: validV1, mutate: func(p *Profile) { p.Transactions = nil }, want: ReasonNoTransactionAssociated},
		{name: "V1 transaction id missing", base: validV1, mutate: func(p *Profile) { p.Transactions[0].ID = "" }, want: ReasonInvalidTransactionMetadata},
		{name: "V1 transaction id not a UUID", base: validV1, mutate: func(p *Profile) { p.Transactions[0].ID = "xyz" }, want: ReasonInvalidTransactionMetadata},
		{name: "V1 trace_id nil UUID", base: validV1, mutate: func(p *Profile) { p.Transactions[0].TraceID = "00000000-0000-0000-0000-000000000000" }, want: ReasonInvalidTransactionMetadata},
		{name: "V1 transaction name missing", base: validV1, mutate: func(p *Profile) { p.Transactions[0].Name = "" }, want: ReasonInvalidTransactionMetadata},
		{name: "V1 relative range reversed", base: validV1, mutate: func(p *Profile) { p.Transactions[0].RelativeStartNS = 40_000_000_000 }, want: ReasonInvalidTransactionMetadata},
		{name: "V1 relative end missing", base: validV1, mutate: func(p *Profile) { p.Transactions[0].RelativeStartNS, p.Transactions[0].RelativeEndNS = 5, 0 }, want: ReasonInvalidTransactionMetadata},
		{name: "V1 relative range absent", base: validV1, mutate: func(p *Profile) { p.Transactions[0].RelativeEndNS = 0 }},
		{name: "V1 active_thread_id optional as in Relay", base: validV1, mutate: func(p *Profile) { p.Transactions[0].ActiveThreadID = "" }},
		{name: "V1 only the first transaction is checked", base: validV1, mutate: func(p *Profile) { p.Transactions = append(p.Transactions, Transaction{}) }},

		// Samples, stacks, frames.
		{name: "no samples", base: validV1, mutate: func(p *Profile) { p.Samples = nil }, want: ReasonNotEnoughSamples, unreadable: true},
		{name: "stack_id out of range", base: validV1, mutate: func(p *Profile) { p.Samples[1].StackID = 3 }, want: ReasonMalformedSamples, at: position{1, -1, -1}},
		{name: "stack_id negative", base: validV2, mutate: func(p *Profile) { p.Samples[0].StackID = -1 }, want: ReasonMalformedSamples, at: position{0, -1, -1}},
		{name: "stack_id huge", base: validV2, mutate: func(p *Profile) { p.Samples[1].StackID = 1 << 62 }, want: ReasonMalformedSamples, at: position{1, -1, -1}},
		{name: "no stacks", base: validV2, mutate: func(p *Profile) { p.Stacks = Stacks{} }, want: ReasonMalformedSamples, at: position{0, -1, -1}},
		{name: "frame index out of range", base: validV1, mutate: func(p *Profile) { p.Stacks = stacksOf([]int64{0}, []int64{1, 2}) }, want: ReasonMalformedStacks, at: position{-1, 1, 1}},
		{name: "frame index negative", base: validV2, mutate: func(p *Profile) { p.Stacks = stacksOf([]int64{-5}, []int64{1}) }, want: ReasonMalformedStacks, at: position{-1, 0, 0}},
		{name: "no frames", base: validV2, mutate: func(p *Profile) { p.Frames = nil }, want: ReasonMalformedStacks, at: position{-1, 0, 0}},
		{name: "unreferenced bad stack still rejected", base: validV2, mutate: func(p *Profile) { p.Stacks.Append(99) }, want: ReasonMalformedStacks, at: position{-1, 3, 0}},
		{name: "stack offsets inconsistent", base: validV2, mutate: func(p *Profile) { p.Stacks.Offsets[1] = 7 }, want: ReasonMalformedStacks, at: position{-1, 0, -1}},

		// What Relay's lossy clean-up would leave.
		{name: "V1 one sample per thread", base: validV1, mutate: func(p *Profile) { p.Samples[1].ThreadID = "2" }, want: ReasonNotEnoughSamples},
		{name: "V1 idle edges trimmed leave one sample", base: validV1, mutate: func(p *Profile) {
			p.Samples = []Sample{
				{StackID: 2, ThreadID: "1", ElapsedSinceStartNS: 1},
				{StackID: 0, ThreadID: "1", ElapsedSinceStartNS: 2},
				{StackID: 2, ThreadID: "1", ElapsedSinceStartNS: 3},
			}
		}, want: ReasonNotEnoughSamples},
		{name: "V1 idle samples between active ones count", base: validV1, mutate: func(p *Profile) {
			p.Samples = []Sample{
				{StackID: 0, ThreadID: "1", ElapsedSinceStartNS: 1},
				{StackID: 2, ThreadID: "1", ElapsedSinceStartNS: 2},
				{StackID: 0, ThreadID: "1", ElapsedSinceStartNS: 3},
			}
		}},
		{name: "V1 samples outside the transaction do not count", base: validV1, mutate: func(p *Profile) {
			p.Transactions[0].RelativeStartNS, p.Transactions[0].RelativeEndNS = 15_000_000, 40_000_000
		}, want: ReasonNotEnoughSamples},
		{name: "V1 duration too long", base: validV1, mutate: func(p *Profile) { p.Samples[1].ElapsedSinceStartNS = 10_000_000 + uint64(30*s) + 1 }, want: ReasonDurationIsTooLong},
		{name: "V1 duration at the limit", base: validV1, mutate: func(p *Profile) { p.Samples[1].ElapsedSinceStartNS = uint64(30 * s) }},
		{name: "V1 last sample past the limit from the start, as Relay measures", base: validV1, mutate: func(p *Profile) {
			p.Samples[1].ElapsedSinceStartNS = 10_000_000 + uint64(30*s)
		}, want: ReasonDurationIsTooLong},
		{name: "V1 long span outside the transaction is ignored", base: validV1, mutate: func(p *Profile) {
			p.Samples = append(p.Samples, Sample{StackID: 0, ThreadID: "1", ElapsedSinceStartNS: uint64(100 * s)})
		}},
		{name: "V1 custom limit", base: validV1, limits: Limits{MaxDurationV1: 5 * time.Millisecond}, mutate: func(*Profile) {}, want: ReasonDurationIsTooLong},

		// V2 metadata and samples.
		{name: "V2 profiler_id missing", base: validV2, mutate: func(p *Profile) { p.ProfilerID = "" }, want: ReasonMissingProfileMetadata},
		{name: "V2 chunk_id missing", base: validV2, mutate: func(p *Profile) { p.ChunkID = "" }, want: ReasonMissingProfileMetadata},
		{name: "V2 chunk_id not a UUID", base: validV2, mutate: func(p *Profile) { p.ChunkID = "chunk-1" }, want: ReasonInvalidJSON},
		{name: "V2 client_sdk.name missing", base: validV2, mutate: func(p *Profile) { p.ClientSDK.Name = "" }, want: ReasonMissingProfileMetadata},
		{name: "V2 client_sdk.version missing", base: validV2, mutate: func(p *Profile) { p.ClientSDK.Version = "" }, want: ReasonMissingProfileMetadata},
		{name: "V2 platform missing", base: validV2, mutate: func(p *Profile) { p.Platform = "" }, want: ReasonMissingProfileMetadata},
		{name: "V2 needs no transaction", base: validV2, mutate: func(p *Profile) { p.Transactions = nil }},
		{name: "V2 zero timestamp", base: validV2, mutate: func(p *Profile) { p.Samples[1].Timestamp = 0 }, want: ReasonMalformedSamples, at: position{1, -1, -1}},
		{name: "V2 negative timestamp", base: validV2, mutate: func(p *Profile) { p.Samples[0].Timestamp = -1 }, want: ReasonMalformedSamples, at: position{0, -1, -1}},
		{name: "V2 one non-idle sample per thread", base: validV2, mutate: func(p *Profile) { p.Samples[1].StackID = 2 }, want: ReasonNotEnoughSamples},
		{name: "V2 single-sample thread beside a good one", base: validV2, mutate: func(p *Profile) {
			p.Samples = append(p.Samples, Sample{StackID: 0, ThreadID: "2", Timestamp: 1724777999_000000000})
		}},
		{name: "V2 idle sample of a kept thread counts in its span", base: validV2, mutate: func(p *Profile) {
			p.Samples = append(p.Samples, Sample{StackID: 2, ThreadID: "1", Timestamp: p.Samples[1].Timestamp + int64(66*s) + 1})
		}, want: ReasonDurationIsTooLong},
		{name: "V2 span too long", base: validV2, mutate: func(p *Profile) { p.Samples[0].Timestamp = p.Samples[1].Timestamp - int64(66*s) - 1 }, want: ReasonDurationIsTooLong},
		{name: "V2 span at the limit, samples unsorted", base: validV2, mutate: func(p *Profile) { p.Samples[0].Timestamp = p.Samples[1].Timestamp + int64(66*s) }},
		{name: "V2 custom limit", base: validV2, limits: Limits{MaxDurationV2: time.Millisecond}, mutate: func(*Profile) {}, want: ReasonDurationIsTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.base()
			tt.mutate(p)
			before := deepCopy(p)
			err := Validate(p, tt.limits)
			assert.True(t, reflect.DeepEqual(before, p), "Validate changed the profile")
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			e := reasonError(t, err, tt.want)
			want := position{-1, -1, -1}
			if tt.want == ReasonMalformedSamples || tt.want == ReasonMalformedStacks {
				want = tt.at
			}
			assert.Equal(t, want, position{e.Sample, e.Stack, e.Frame}, "positions of %v", e)
			assert.NotEmpty(t, e.Msg)
		})
		// The same case in lenient mode: refused only when the samples
		// cannot be read, else accepted with the rule as a warning.
		t.Run(tt.name+"/lenient", func(t *testing.T) {
			p := tt.base()
			tt.mutate(p)
			warnings, err := Check(p, tt.limits, ModeLenient)
			if tt.want != "" && (tt.unreadable || !readableReasons[tt.want]) {
				assertReason(t, err, tt.want)
				assert.Empty(t, warnings)
				return
			}
			require.NoError(t, err)
			if tt.want == "" {
				assert.Empty(t, warnings)
				return
			}
			// The first warning is the rule Relay mode refuses on; later
			// groups of rules may add theirs.
			require.NotEmpty(t, warnings)
			assert.Equal(t, tt.want, warnings[0].Reason, "%v", warnings)
			assert.NotEmpty(t, warnings[0].Msg)
		})
	}
}

// readableReasons are the Relay rules about metadata, not about reading the
// samples: lenient mode warns instead of refusing.
var readableReasons = map[Reason]bool{
	ReasonMissingProfileMetadata:     true,
	ReasonInvalidJSON:                true, // ids that are not UUIDs
	ReasonNoTransactionAssociated:    true,
	ReasonInvalidTransactionMetadata: true,
	ReasonNotEnoughSamples:           true, // what Relay's clean-up would leave
	ReasonDurationIsTooLong:          true,
}

// TestCheckPresence decodes metadata as real SDKs write it: an empty string
// is a value (Relay deserializes it), an absent field is not.
func TestCheckPresence(t *testing.T) {
	const samples = `"profile":{"samples":[{"stack_id":0,"thread_id":1,"elapsed_since_start_ns":0},{"stack_id":0,"thread_id":1,"elapsed_since_start_ns":10000000}],` +
		`"stacks":[[0]],"frames":[{"function":"work"}]}`
	const tx = `"transaction":{"id":"41fed0925670468bb0457f61a74688ec","trace_id":"cb8c53a4e3e24c73a9ff8e5ba7e0ac3c","name":"GET /","active_thread_id":1}`
	tests := []struct {
		name     string
		metadata string
		relay    Reason // "" when Relay accepts
	}{
		// sentry-go v0.30.0 writes its structs whole, empty fields included.
		{"sentry-go empty strings", `"device":{"architecture":"amd64","classification":"","locale":"","manufacturer":"","model":""},"os":{"build_number":"","name":"linux","version":""},"runtime":{"name":"go","version":"go1.26"}`, ""},
		{"every string empty", `"device":{"architecture":""},"os":{"name":"","version":""}`, ""},
		{"os.version absent", `"device":{"architecture":"amd64"},"os":{"name":"linux"}`, ReasonMissingProfileMetadata},
		{"os.version null", `"device":{"architecture":"amd64"},"os":{"name":"linux","version":null}`, ReasonMissingProfileMetadata},
		{"no device", `"os":{"name":"linux","version":"6"}`, ReasonMissingProfileMetadata},
		{"runtime without version", `"device":{"architecture":"x"},"os":{"name":"linux","version":"6"},"runtime":{"name":"go"}`, ReasonMissingProfileMetadata},
		{"runtime with empty version", `"device":{"architecture":"x"},"os":{"name":"linux","version":"6"},"runtime":{"name":"go","version":""}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := `{"version":"1","event_id":"41fed0925670468bb0457f61a74688ec","platform":"go","timestamp":"2024-08-27T16:00:00Z",` +
				tt.metadata + "," + tx + "," + samples + "}"
			p, err := DecodeProfile([]byte(payload))
			require.NoError(t, err)
			err = Validate(p, DefaultLimits())
			warnings, lenientErr := Check(p, DefaultLimits(), ModeLenient)
			require.NoError(t, lenientErr, "lenient mode reads every sample")
			if tt.relay == "" {
				require.NoError(t, err)
				assert.Empty(t, warnings)
				return
			}
			assertReason(t, err, tt.relay)
			require.Len(t, warnings, 1)
			assert.Equal(t, tt.relay, warnings[0].Reason)
		})
	}
}

func cocoaDevice(p *Profile) {
	p.Platform = "cocoa"
	p.Device = Device{Architecture: "arm64e", IsEmulator: BoolFalse, Locale: "en_US", Manufacturer: "Apple", Model: "iPhone14,3"}
	p.OS = OS{Name: "iOS", Version: "16.0", BuildNumber: "19H253"}
}

// deepCopy copies the parts of p that Validate could change.
func deepCopy(p *Profile) *Profile {
	c := *p
	c.Samples = slices.Clone(p.Samples)
	c.Stacks = Stacks{FrameIndices: slices.Clone(p.Stacks.FrameIndices), Offsets: slices.Clone(p.Stacks.Offsets)}
	c.Frames = slices.Clone(p.Frames)
	c.Transactions = slices.Clone(p.Transactions)
	c.ThreadMetadata = slices.Clone(p.ThreadMetadata)
	return &c
}

func TestValidateFixtures(t *testing.T) {
	tests := []struct {
		name    string
		load    func(*testing.T, string) *Profile
		want    Reason // what Relay mode refuses with; "" accepted
		lenient Reason // what lenient mode refuses with; "" accepted
	}{
		{"relay__relay-profiling_tests_fixtures_sample_v1_valid.json", decodeFixture, "", ""},
		{"relay__relay-profiling_tests_fixtures_sample_v2_valid.json", decodeFixture, "", ""},
		{"vroom__test_data__node.json", decodeFixture, "", ""},
		{"vroomrs__tests_fixtures__sample_v2_valid_android.json", decodeFixture, "", ""},
		{"vroomrs__tests_fixtures__sample_v2_valid_cocoa.json", decodeFixture, "", ""},
		{"sentry-python-2.68.0__captured_http__v1_profile_with_transaction_1.envelope", decodeEnvelopeProfile, "", ""},
		{"sentry-python-2.68.0__captured_http__v2_profile_chunk_1.envelope", decodeEnvelopeProfile, "", ""},
		{"sentry-python-2.68.0__captured_http__v2_profile_chunk_2.envelope", decodeEnvelopeProfile, "", ""},
		// Trimmed test fixtures whose stacks name frames that were cut: the
		// samples cannot be read in either mode.
		{"vroomrs__tests_fixtures__sample_v1_valid_python.json", decodeFixture, ReasonMalformedStacks, ReasonMalformedStacks},
		{"vroomrs__tests_fixtures__sample_v2_valid_python.json", decodeFixture, ReasonMalformedStacks, ReasonMalformedStacks},
		// Re-serialized by vroomrs, which drops device.is_emulator that
		// Relay requires of cocoa; trimmed too, so one sample names a stack
		// that was cut.
		{"vroomrs__tests_fixtures__sample_v1_valid_cocoa.json", decodeFixture, ReasonMissingProfileMetadata, ReasonMalformedSamples},
		// A post-processing fixture without device metadata: Relay refuses
		// it, lenient mode reads every sample.
		{"sentry__fixtures_profiles_valid_js_profile.json", decodeFixture, ReasonMissingProfileMetadata, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.load(t, tt.name)
			err := Validate(p, DefaultLimits())
			Normalize(p)
			errAfter := Validate(p, DefaultLimits())
			warnings, lenientErr := Check(p, DefaultLimits(), ModeLenient)
			if tt.want == "" {
				assert.NoError(t, err)
				assert.NoError(t, errAfter)
			} else {
				assertReason(t, err, tt.want)
				assertReason(t, errAfter, tt.want)
			}
			switch {
			case tt.lenient != "":
				assertReason(t, lenientErr, tt.lenient)
			case tt.want != "":
				require.NoError(t, lenientErr)
				require.NotEmpty(t, warnings)
				assert.Equal(t, tt.want, warnings[0].Reason, "the rule Relay refuses on is the first warning")
			default:
				require.NoError(t, lenientErr)
				assert.Empty(t, warnings)
			}
		})
	}
}

func TestDefaultLimits(t *testing.T) {
	assert.Equal(t, Limits{MaxDurationV1: 30 * time.Second, MaxDurationV2: 66 * time.Second}, DefaultLimits())
	assert.Equal(t, DefaultLimits(), Limits{}.withDefaults())
	assert.Equal(t, Limits{MaxDurationV1: time.Second, MaxDurationV2: 66 * time.Second}, Limits{MaxDurationV1: time.Second}.withDefaults())
}
