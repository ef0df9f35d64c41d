package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/itemrules"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// convertibleFixtures are the shared fixtures that hold complete V1 or V2
// profiles as an SDK sends them (the Android trace formats and the fragments
// of serialization tests are not profiles this tool converts).
var convertibleFixtures = []string{
	"sentry-python-2.68.0__captured_http__v2_profile_chunk_1.envelope",
	"sentry-python-2.68.0__captured_http__v2_profile_chunk_2.envelope",
	"sentry-python-2.68.0__captured_http__v1_profile_with_transaction_1.envelope",
	"sentry-python-2.68.0__captured_http__v2_profile_chunk_1.request.gz",
	"sentry-python-2.68.0__captured_http__v1_profile_with_transaction_1.request.gz",
	"relay__relay-profiling_tests_fixtures_sample_v1_valid.json",
	"relay__relay-profiling_tests_fixtures_sample_v2_valid.json",
	"vroomrs__tests_fixtures__sample_v2_valid_cocoa.json",
	"vroom__test_data__node.json",
}

// rejectedFixtures are post-Relay fixtures that break a rule Relay applies to
// what SDKs send; convert must refuse them with Relay's reason.
var rejectedFixtures = []struct {
	name       string
	reason     sentry.Reason
	detail     string
	validation string // the -validation the row is about
}{
	{"sentry__fixtures_profiles_valid_js_profile.json", sentry.ReasonMissingProfileMetadata, "device.architecture", "relay"},
	{"vroomrs__tests_fixtures__sample_v1_valid_cocoa.json", sentry.ReasonMissingProfileMetadata, "device.is_emulator", "relay"},
	// Lenient refuses the same file for its one unreadable sample.
	{"vroomrs__tests_fixtures__sample_v1_valid_cocoa.json", sentry.ReasonMalformedSamples, "stack_id 4 is out of range", "lenient"},
	{"vroomrs__tests_fixtures__sample_v1_valid_python.json", sentry.ReasonMalformedStacks, "stack 0 frame 4", "lenient"},
	{"vroomrs__tests_fixtures__android_chunk_valid.json", sentry.ReasonPlatformNotSupported, "Android", "lenient"},
}

func TestConvertRejectedFixtures(t *testing.T) {
	dir := fixtures.Dir(t)
	for _, tt := range rejectedFixtures {
		t.Run(tt.name+"/"+tt.validation, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.pb")
			r := runCLI(t, nil, "convert", "-validation", tt.validation, "-in", filepath.Join(dir, tt.name), "-out", out)
			assert.Equal(t, exitError, r.code)
			assert.Contains(t, r.stderr, string(tt.reason))
			assert.Contains(t, r.stderr, tt.detail)
			assert.NoFileExists(t, out)
		})
	}
}

// TestConvertLenientWarns converts a fixture Relay refuses for its metadata:
// the default keeps every sample and says which rule Relay would apply.
func TestConvertLenientWarns(t *testing.T) {
	const name = "sentry__fixtures_profiles_valid_js_profile.json"
	path := filepath.Join(fixtures.Dir(t), name)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "out.pb")
	r := runCLI(t, nil, "convert", "-in", path, "-out", out)
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	assert.Contains(t, r.stderr, "warning: accepted, but Relay would refuse it: "+string(sentry.ReasonMissingProfileMetadata))
	raw, err := os.ReadFile(out)
	require.NoError(t, err)
	pd, err := (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles(raw)
	require.NoError(t, err)
	assertOTLP(t, pd, fixtureSamples(t, data))
}

type result struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, stdin []byte, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, bytes.NewReader(stdin), &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// fixtureSamples is the number of Sentry samples the fixture holds after the
// receiver's normalization: what every output must account for.
func fixtureSamples(t *testing.T, data []byte) int {
	t.Helper()
	n := 0
	for _, p := range fixtureProfiles(t, data) {
		n += len(p.Samples)
	}
	return n
}

// fixtureProfiles decodes the profiles of a fixture (a profile document or
// an envelope, gzipped or not), normalized as the receiver does.
func fixtureProfiles(t *testing.T, data []byte) []*sentry.Profile {
	t.Helper()
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		require.NoError(t, err)
		var buf bytes.Buffer
		_, err = buf.ReadFrom(zr)
		require.NoError(t, err)
		data = buf.Bytes()
	}
	decode := func(payload []byte) *sentry.Profile {
		p, err := sentry.DecodeProfile(payload)
		require.NoError(t, err)
		sentry.Normalize(p)
		return p
	}
	if !isEnvelope(data) {
		return []*sentry.Profile{decode(data)}
	}
	_, items, err := envelope.Parse(data, envelope.Limits{})
	require.NoError(t, err)
	var out []*sentry.Profile
	for _, it := range items {
		switch it.Header.Type {
		case itemrules.ItemTypeProfile, itemrules.ItemTypeProfileChunk, itemrules.ItemTypeProfileChunkUI:
			out = append(out, decode(it.Payload))
		}
	}
	return out
}

// sentryWall is the wall time Sentry gives the samples of profiles: on each
// thread a sample lasts until the next one, the last one period (the
// converted profile's). Over a thread that adds up to its last sample time
// minus its first, plus period.
func sentryWall(profiles []*sentry.Profile, period int64) int64 {
	var wall int64
	for _, p := range profiles {
		first, last := map[string]int64{}, map[string]int64{}
		for _, s := range p.Samples {
			at := s.Timestamp
			if p.Version != sentry.VersionV2 {
				at = int64(s.ElapsedSinceStartNS)
			}
			if f, ok := first[s.ThreadID]; !ok || at < f {
				first[s.ThreadID] = at
			}
			last[s.ThreadID] = max(last[s.ThreadID], at)
		}
		for id, f := range first {
			wall += last[id] - f + period
		}
	}
	return wall
}

func TestConvertFixtures(t *testing.T) {
	dir := fixtures.Dir(t)
	for _, name := range convertibleFixtures {
		in := filepath.Join(dir, name)
		data, err := os.ReadFile(in)
		require.NoError(t, err)
		want := fixtureSamples(t, data)
		require.Positive(t, want, "%s has no samples left after normalization", name)

		t.Run(name, func(t *testing.T) {
			out := t.TempDir()

			t.Run("pprof", func(t *testing.T) {
				path := filepath.Join(out, "profile.pb.gz")
				r := runCLI(t, nil, "convert", "-in", in, "-out", path)
				require.Equal(t, exitOK, r.code, r.stderr)
				f, err := os.Open(path)
				require.NoError(t, err)
				defer f.Close()
				p, err := profile.Parse(f)
				require.NoError(t, err)
				require.NoError(t, p.CheckValid())
				assert.Equal(t, sentryWall(fixtureProfiles(t, data), p.Period), pprofWall(p), "pprof wall time: Sentry's")
				assert.Equal(t, []*profile.ValueType{{Type: "wall", Unit: "nanoseconds"}}, p.SampleType)
			})

			t.Run("otlp-json", func(t *testing.T) {
				path := filepath.Join(out, "profiles.json")
				r := runCLI(t, nil, "convert", "-in", in, "-out", path, "-service", "fixture")
				require.Equal(t, exitOK, r.code, r.stderr)
				raw, err := os.ReadFile(path)
				require.NoError(t, err)
				pd, err := (&pprofile.JSONUnmarshaler{}).UnmarshalProfiles(raw)
				require.NoError(t, err)
				assertOTLP(t, pd, want)
				svc, ok := pd.ResourceProfiles().At(0).Resource().Attributes().Get("service.name")
				require.True(t, ok)
				assert.Equal(t, "fixture", svc.Str())
			})

			t.Run("otlp-proto and export", func(t *testing.T) {
				path := filepath.Join(out, "profiles.pb")
				r := runCLI(t, nil, "convert", "-in", in, "-out", path)
				require.Equal(t, exitOK, r.code, r.stderr)
				raw, err := os.ReadFile(path)
				require.NoError(t, err)
				pd, err := (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles(raw)
				require.NoError(t, err)
				assertOTLP(t, pd, want)

				r = runCLI(t, raw, "export")
				require.Equal(t, exitOK, r.code, r.stderr)
				assertChunks(t, r.stdout, want)
			})

			t.Run("stdin to stdout", func(t *testing.T) {
				r := runCLI(t, data, "convert", "-format", "otlp-proto")
				require.Equal(t, exitOK, r.code, r.stderr)
				pd, err := (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles([]byte(r.stdout))
				require.NoError(t, err)
				assertOTLP(t, pd, want)
			})
		})
	}
}

// assertOTLP checks what every OTLP output must satisfy: every index in
// range (MergeTo bounds-checks them all) and one event per Sentry sample.
func assertOTLP(t *testing.T, pd pprofile.Profiles, wantSamples int) {
	t.Helper()
	require.Positive(t, pd.ProfileCount())
	// MergeTo moves its input: check a copy.
	scratch := pprofile.NewProfiles()
	pd.CopyTo(scratch)
	require.NoError(t, scratch.MergeTo(pprofile.NewProfiles()))
	assert.Equal(t, wantSamples, profilestest.SampleEvents(pd), "sample events in OTLP")
}

// assertChunks checks export output: one V2 chunk per line, each passing
// the validation the receiver applies, together holding every sample.
func assertChunks(t *testing.T, out string, wantSamples int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.NotEmpty(t, lines)
	total := 0
	for i, line := range lines {
		p, err := sentry.DecodeProfile([]byte(line))
		require.NoError(t, err, "chunk %d", i)
		assert.Equal(t, sentry.VersionV2, p.Version, "chunk %d", i)
		require.NoError(t, sentry.Validate(p, sentry.DefaultLimits()), "chunk %d", i)
		total += len(p.Samples)
	}
	assert.Equal(t, wantSamples, total, "samples across exported chunks")
}

func TestConvertSplitPprof(t *testing.T) {
	dir := fixtures.Dir(t)
	// Two chunk envelopes back to back are not one envelope; build one with
	// both payloads instead.
	var env []byte
	env = append(env, "{}\n"...)
	var inputs [][]byte // the chunks' envelopes, in the order of the files
	for _, name := range []string{
		"sentry-python-2.68.0__captured_http__v2_profile_chunk_1.envelope",
		"sentry-python-2.68.0__captured_http__v2_profile_chunk_2.envelope",
	} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		_, items, err := envelope.Parse(data, envelope.Limits{})
		require.NoError(t, err)
		for _, it := range items {
			env = envelope.AppendItem(env, it.Header, it.Payload)
		}
		inputs = append(inputs, data)
	}

	out := filepath.Join(t.TempDir(), "chunks.pb.gz")
	r := runCLI(t, env, "convert", "-out", out, "-split")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "wrote 2 pprof profiles: "+out+", "+out+".1")

	var want, wall int64
	for i, path := range []string{out, out + ".1"} {
		f, err := os.Open(path)
		require.NoError(t, err)
		p, err := profile.Parse(f)
		f.Close()
		require.NoError(t, err, path)
		require.NoError(t, p.CheckValid(), path)
		want += sentryWall(fixtureProfiles(t, inputs[i]), p.Period)
		wall += pprofWall(p)
	}
	assert.Equal(t, want, wall, "each chunk's wall time: Sentry's")
	assert.NoFileExists(t, out+".2")

	// Merged (the default), one file holds the same total.
	merged := filepath.Join(t.TempDir(), "merged.pprof")
	r = runCLI(t, env, "convert", "-out", merged)
	require.Equal(t, exitOK, r.code, r.stderr)
	f, err := os.Open(merged)
	require.NoError(t, err)
	defer f.Close()
	p, err := profile.Parse(f)
	require.NoError(t, err)
	// The chunks' periods differ and a pprof file has one: the merged file
	// keeps the wall time of each sample.
	assert.Equal(t, wall, pprofWall(p))
}

// pprofWall is the wall time a profile holds, in nanoseconds.
func pprofWall(p *profile.Profile) int64 {
	var n int64
	for _, s := range p.Sample {
		n += s.Value[0]
	}
	return n
}

// convertAndTop converts a shared fixture to pprof with the CLI and returns
// what `go tool pprof -top` prints of it.
func convertAndTop(t *testing.T, fixture string, pprofFlags ...string) []byte {
	t.Helper()
	goTool := testenv.LookPath(t, "go", "golang")
	in := filepath.Join(fixtures.Dir(t), fixture)
	out := filepath.Join(t.TempDir(), "profile.pb.gz")
	r := runCLI(t, nil, "convert", "-in", in, "-out", out)
	require.Equal(t, exitOK, r.code, r.stderr)
	args := append(append([]string{"tool", "pprof", "-top"}, pprofFlags...), out)
	cmd := exec.Command(goTool, args...)
	// No symbolization: the profile carries its function names.
	cmd.Env = append(os.Environ(), "PPROF_BINARY_PATH="+t.TempDir())
	top, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", top)
	return top
}

func TestGoToolPprofTop(t *testing.T) {
	top := convertAndTop(t, "sentry-python-2.68.0__captured_http__v1_profile_with_transaction_1.envelope", "-nodecount=500")
	// busy_hash is the CPU-bound function the capture script ran.
	assert.Contains(t, string(top), "busy_hash")
	// Wall time, not a count: the V1 profile ran 1.5 s on three threads.
	assert.Contains(t, string(top), "Type: wall")
	assert.Regexp(t, `Total samples = [0-9.]+(ms|s) `, string(top))
}

func TestConvertLargeInputReportsProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and converts 10 MB")
	}
	cfg := benchdata.LargeChunkConfig()
	first := benchdata.ChunkV2(cfg)
	cfg.Seed++
	second := benchdata.ChunkV2(cfg)
	env := []byte("{}\n")
	env = envelope.AppendItem(env, envelope.ItemHeader{Type: itemrules.ItemTypeProfileChunk, Length: int64(len(first)), Platform: "python"}, first)
	env = envelope.AppendItem(env, envelope.ItemHeader{Type: itemrules.ItemTypeProfileChunk, Length: int64(len(second)), Platform: "python"}, second)
	require.Greater(t, len(env), progressStep)

	out := filepath.Join(t.TempDir(), "large.pb")
	r := runCLI(t, env, "convert", "-out", out)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "sentryprof convert: read 8 MiB\n")
	assert.Contains(t, r.stderr, "converted item 1 (profile_chunk, 48480 samples)")
	assert.Regexp(t, `done: \d+\.\d MiB read, 2 items, 96960 samples converted\n$`, r.stderr)

	// A small input converts silently.
	small := benchdata.Envelope(itemrules.ItemTypeProfileChunk, "python", benchdata.ChunkV2(benchdata.SmallChunkConfig()))
	r = runCLI(t, small, "convert", "-out", filepath.Join(t.TempDir(), "small.pb"))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Empty(t, r.stderr)
}

func TestConvertBenchdataCocoa(t *testing.T) {
	env := benchdata.Envelope(itemrules.ItemTypeProfile, "cocoa", benchdata.ProfileV1Cocoa(1))
	out := filepath.Join(t.TempDir(), "cocoa.pb.gz")
	r := runCLI(t, env, "convert", "-out", out)
	require.Equal(t, exitOK, r.code, r.stderr)
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	p, err := profile.Parse(f)
	require.NoError(t, err)
	require.NoError(t, p.CheckValid())
	assert.Equal(t, sentryWall(fixtureProfiles(t, env), p.Period), pprofWall(p), "wall time: Sentry's")
	// Cocoa frames are native addresses inside debug_meta images.
	assert.NotEmpty(t, p.Mapping)
}

func TestConvertBadInput(t *testing.T) {
	chunk := benchdata.ChunkV2(benchdata.ChunkConfig{Seed: 1, Seconds: 0.2, Hz: 101, Threads: 1, Stacks: 3, MinDepth: 2, MaxDepth: 4, Frames: 5})
	badStack := bytes.Replace(chunk, []byte(`"stacks":[[`), []byte(`"stacks":[[99,`), 1)
	require.NotEqual(t, chunk, badStack)
	gz := compresstest.Bytes(t, "gzip", benchdata.Envelope(itemrules.ItemTypeProfileChunk, "python", chunk))
	v1 := benchdata.ProfileV1Cocoa(1)

	tests := []struct {
		name  string
		input []byte
		want  []string
	}{
		{name: "empty", input: nil, want: []string{"input is empty"}},
		{name: "blank lines", input: []byte("\n \n"), want: []string{"input is empty"}},
		{name: "garbage", input: []byte("this is not a profile"), want: []string{"neither a Sentry envelope, a profile JSON document nor an ART method trace"}},
		{name: "invalid JSON", input: []byte("{\"version\":"), want: []string{string(sentry.ReasonInvalidJSON)}},
		{name: "truncated gzip", input: gz[:len(gz)/2], want: []string{"gzip stream is truncated"}},
		{name: "gzip magic then garbage", input: []byte{0x1f, 0x8b, 'n', 'o', 'p', 'e'}, want: []string{"gzip"}},
		{
			name:  "invalid bare profile",
			input: badStack,
			want:  []string{string(sentry.ReasonMalformedStacks), "stack 0", "frame"},
		},
		{
			name: "invalid profile names its item",
			input: append(
				benchdata.Envelope(itemrules.ItemTypeProfileChunk, "python", chunk),
				envelope.AppendItem(nil, envelope.ItemHeader{Type: itemrules.ItemTypeProfileChunk, Length: -1, Platform: "python"}, badStack)...),
			want: []string{string(sentry.ReasonMalformedStacks), "item 1"},
		},
		{
			name: "a second V1 profile is invalid, as in Relay",
			input: append(
				benchdata.Envelope(itemrules.ItemTypeProfile, "cocoa", v1),
				envelope.AppendItem(nil, envelope.ItemHeader{Type: itemrules.ItemTypeProfile, Length: int64(len(v1))}, v1)...),
			want: []string{string(sentry.ReasonTooManyProfiles), "item 1", "a transaction has one profile"},
		},
		{
			name:  "every invalid item is listed",
			input: []byte("{}\n{\"type\":\"profile_chunk\"}\n{\"version\":\"2\"}\n{\"type\":\"profile\",\"length\":2}\n{}\n"),
			want: []string{
				"2 profile items are invalid:\n",
				"\n  " + string(sentry.ReasonNotEnoughSamples) + " item 0: profile has no samples",
				"\n  " + string(sentry.ReasonUnsupportedVersion) + " item 1: ",
			},
		},
		{
			name:  "envelope without profiles",
			input: []byte("{}\n{\"type\":\"transaction\"}\n{}\n{\"type\":\"session\"}\n{}\n"),
			want:  []string{"no profile or profile_chunk item", "session×1", "transaction×1"},
		},
		{
			name:  "envelope cut short",
			input: []byte("{}\n{\"type\":\"profile_chunk\",\"length\":500}\n{\"version\":\"2\"}"),
			want:  []string{"item 0"},
		},
		{
			name:  "invalid JSON payload in an envelope",
			input: []byte("{}\n{\"type\":\"profile_chunk\"}\n{\"version\":\n"),
			want:  []string{string(sentry.ReasonInvalidJSON), "item 0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.pb")
			r := runCLI(t, tt.input, "convert", "-out", out)
			assert.Equal(t, exitError, r.code)
			assert.True(t, strings.HasPrefix(r.stderr, "sentryprof convert: "), r.stderr)
			for _, w := range tt.want {
				assert.Contains(t, r.stderr, w)
			}
			assert.Empty(t, r.stdout)
			assert.NoFileExists(t, out, "a failed conversion leaves no output")
		})
	}
}

func TestExportBadInput(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{name: "empty", input: nil, want: "input is empty"},
		{name: "not protobuf", input: []byte("\xff\xff\xff\xff"), want: "decoding OTLP protobuf"},
		{name: "broken JSON", input: []byte(`{"resourceProfiles": [`), want: "OTLP JSON request 0"},
		{name: "second JSON line broken", input: []byte("{}\n{\"resourceProfiles\":7}\n"), want: "OTLP JSON request 1"},
		{name: "no profiles", input: []byte(`{}`), want: "no profiles with samples"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.input, "export")
			assert.Equal(t, exitError, r.code)
			assert.Contains(t, r.stderr, tt.want)
			assert.Empty(t, r.stdout)
		})
	}
}

func TestExportJSONLines(t *testing.T) {
	// Two OTLP JSON requests, one per line, as the file exporter writes them.
	var lines []byte
	want := 0
	for seed := uint64(1); seed <= 2; seed++ {
		chunk := benchdata.ChunkV2(benchdata.ChunkConfig{Seed: seed, Seconds: 0.5, Hz: 101, Threads: 2, Stacks: 4, MinDepth: 2, MaxDepth: 6, Frames: 9})
		r := runCLI(t, chunk, "convert", "-format", "otlp-json")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Equal(t, 1, strings.Count(r.stdout, "\n"), "one request per line")
		lines = append(lines, r.stdout...)
		want += fixtureSamples(t, chunk)
	}
	r := runCLI(t, lines, "export", "-platform", "python")
	require.Equal(t, exitOK, r.code, r.stderr)
	assertChunks(t, r.stdout, want)
	assert.Equal(t, 2, strings.Count(r.stdout, "\n"))
}

func TestUsage(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "no command", args: nil, code: exitUsage, stderr: "Usage:"},
		{name: "help", args: []string{"-h"}, code: exitOK, stdout: "Examples:"},
		{name: "unknown command", args: []string{"transmogrify"}, code: exitUsage, stderr: `unknown command "transmogrify"`},
		{name: "convert help", args: []string{"convert", "-h"}, code: exitOK, stderr: "go tool pprof -top chunk.pb.gz"},
		{name: "export help", args: []string{"export", "-help"}, code: exitOK, stderr: "-platform"},
		{name: "unknown flag", args: []string{"convert", "-frobnicate"}, code: exitUsage, stderr: "flag provided but not defined: -frobnicate"},
		{name: "bad format", args: []string{"convert", "-format", "svg"}, code: exitUsage, stderr: `unknown -format "svg"`},
		{name: "positional input", args: []string{"convert", "file.envelope"}, code: exitUsage, stderr: `unexpected argument "file.envelope"`},
		{name: "split to stdout", args: []string{"convert", "-format", "pprof", "-split"}, code: exitUsage, stderr: "-split needs"},
		{name: "missing input file", args: []string{"convert", "-in", "/nonexistent/x.envelope"}, code: exitError, stderr: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, nil, tt.args...)
			assert.Equal(t, tt.code, r.code, r.stderr)
			assert.Contains(t, r.stdout, tt.stdout)
			assert.Contains(t, r.stderr, tt.stderr)
		})
	}
}

func TestFormatFromPath(t *testing.T) {
	tests := map[string]string{
		"out.pb.gz":    formatPprof,
		"cpu.pprof":    formatPprof,
		"profile.json": formatOTLPJSON,
		"profiles.pb":  formatOTLPProto,
		"-":            formatOTLPProto,
		"":             formatOTLPProto,
	}
	for path, want := range tests {
		assert.Equal(t, want, formatFromPath(path), path)
	}
}

func TestIsEnvelope(t *testing.T) {
	tests := []struct {
		name string
		data string
		want bool
	}{
		{"empty header and item", "{}\n{\"type\":\"profile_chunk\"}\n{}", true},
		{"blank line before item header", "{\"event_id\":\"ab\"}\n\n{\"type\":\"profile\",\"length\":2}\n{}", true},
		{"compact bare profile", "{\"version\":\"2\",\"profile\":{}}", false},
		{"compact bare profile with newline", "{\"version\":\"2\"}\n", false},
		{"pretty-printed profile", "{\n  \"version\": \"2\"\n}\n", false},
		{"second line without type", "{}\n{\"length\":3}\n", false},
		{"garbage", "hello\nworld", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, isEnvelope([]byte(tt.data)))
		})
	}
}

// TestGoToolPprofTopAndroid converts a real Android transaction profile (an
// ART method trace) and reads it with go tool pprof: wall time, the app's
// own methods and the main thread's looper.
func TestGoToolPprofTopAndroid(t *testing.T) {
	top := convertAndTop(t, "relay__relay-profiling_tests_fixtures_android_legacy_valid.json", "-nodecount=100000", "-nodefraction=0")
	assert.Contains(t, string(top), "Type: wall")
	assert.Regexp(t, `[0-9.]+m?s +[0-9.]+% +io\.sentry\.samples\.android\.MainActivity\.onCreate`, string(top), "the app's own methods, with their time")
	assert.Contains(t, string(top), "android.os.Looper.loop")
	// Some 40 threads over the trace's 10 s: minutes of thread time.
	assert.Regexp(t, `Total samples = [0-9.]+s `, string(top))
}
