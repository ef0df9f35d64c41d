package benchdata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// chunk is the part of a V2 chunk the tests check, decoded with the
// standard library so that the hand-written JSON is judged independently.
type chunk struct {
	ChunkID    string `json:"chunk_id"`
	ProfilerID string `json:"profiler_id"`
	Version    string `json:"version"`
	Platform   string `json:"platform"`
	Release    string `json:"release"`
	ClientSDK  struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"client_sdk"`
	Profile struct {
		Samples []struct {
			StackID   int         `json:"stack_id"`
			ThreadID  string      `json:"thread_id"`
			Timestamp json.Number `json:"timestamp"`
		} `json:"samples"`
		Stacks         [][]int                          `json:"stacks"`
		Frames         []map[string]any                 `json:"frames"`
		ThreadMetadata map[string]struct{ Name string } `json:"thread_metadata"`
	} `json:"profile"`
}

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

func decodeChunk(t *testing.T, data []byte) chunk {
	t.Helper()
	require.True(t, json.Valid(data), "generated chunk is not valid JSON")
	var c chunk
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&c))
	return c
}

func TestChunkV2Shape(t *testing.T) {
	tests := []struct {
		name      string
		cfg       ChunkConfig
		size      int // target bytes, ±10%; 0 = not checked
		samples   int
		frameKeys []string
		sdkName   string
		// duplicates is the expected share of frames that repeat an
		// earlier one byte for byte, ±0.1.
		duplicates float64
	}{
		{
			name: "large", cfg: LargeChunkConfig(), size: 5_250_000, samples: 48_480,
			frameKeys: []string{"abs_path", "filename", "function", "in_app", "lineno", "module"},
			sdkName:   "sentry.python.django",
		},
		{
			name: "small", cfg: SmallChunkConfig(), size: 70_000, samples: 250,
			frameKeys: []string{"abs_path", "filename", "function", "in_app", "lineno", "module"},
			sdkName:   "sentry.python.django",
		},
		{
			name: "node", cfg: ChunkConfig{Seed: 9, Seconds: 0.5, Hz: 99, Threads: 3, Stacks: 7, MinDepth: 2, MaxDepth: 5, Frames: 11, Platform: "node"},
			samples:   3 * 50,
			frameKeys: []string{"abs_path", "colno", "filename", "function", "in_app", "lineno", "module"},
			sdkName:   "sentry.javascript.node",
		},
		{
			name: "node SDK shaped", cfg: NodeSDKChunkConfig(), size: 135_000, samples: 707, duplicates: 0.5,
			frameKeys: []string{"abs_path", "colno", "filename", "function", "in_app", "lineno", "module"},
			sdkName:   "sentry.javascript.node",
		},
		{
			name: "zero config is made valid", cfg: ChunkConfig{}, samples: 101,
			frameKeys: []string{"abs_path", "filename", "function", "in_app", "lineno", "module"},
			sdkName:   "sentry.python.django",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := ChunkV2(tt.cfg)
			if tt.size > 0 {
				assert.InDelta(t, tt.size, len(data), float64(tt.size)/10, "payload size")
			}
			c := decodeChunk(t, data)
			cfg := tt.cfg.normalized()

			assert.Equal(t, "2", c.Version)
			assert.Equal(t, cfg.Platform, c.Platform)
			assert.Regexp(t, hex32, c.ChunkID)
			assert.Regexp(t, hex32, c.ProfilerID)
			assert.NotEqual(t, c.ChunkID, c.ProfilerID)
			assert.Equal(t, tt.sdkName, c.ClientSDK.Name)
			assert.NotEmpty(t, c.ClientSDK.Version)
			assert.NotEmpty(t, c.Release)

			require.Equal(t, tt.samples, tt.cfg.Samples())
			require.Len(t, c.Profile.Samples, tt.samples)
			require.Len(t, c.Profile.Stacks, cfg.Stacks)
			require.Len(t, c.Profile.Frames, cfg.Frames)
			require.Len(t, c.Profile.ThreadMetadata, cfg.Threads)

			for i, s := range c.Profile.Stacks {
				require.GreaterOrEqual(t, len(s), cfg.MinDepth, "stack %d", i)
				require.LessOrEqual(t, len(s), cfg.MaxDepth, "stack %d", i)
				for _, f := range s {
					require.True(t, f >= 0 && f < cfg.Frames, "stack %d frame %d", i, f)
				}
			}
			for i, f := range c.Profile.Frames {
				keys := make([]string, 0, len(f))
				for k := range f {
					keys = append(keys, k)
				}
				require.ElementsMatch(t, tt.frameKeys, keys, "frame %d", i)
			}

			seen, dups := map[string]bool{}, 0
			for _, f := range c.Profile.Frames {
				key := fmt.Sprint(f)
				if seen[key] {
					dups++
				}
				seen[key] = true
			}
			assert.InDelta(t, tt.duplicates, float64(dups)/float64(len(c.Profile.Frames)), 0.1, "share of duplicate frames")

			threads := map[string]bool{}
			prev := 0.0
			for i, s := range c.Profile.Samples {
				require.True(t, s.StackID >= 0 && s.StackID < cfg.Stacks, "sample %d stack %d", i, s.StackID)
				_, named := c.Profile.ThreadMetadata[s.ThreadID]
				require.True(t, named, "sample %d thread %s has no metadata", i, s.ThreadID)
				threads[s.ThreadID] = true

				text := s.Timestamp.String()
				require.Regexp(t, `^1795\d{6}\.\d{6}$`, text, "sample %d timestamp", i)
				ts, err := strconv.ParseFloat(text, 64)
				require.NoError(t, err)
				require.GreaterOrEqual(t, ts, prev, "sample %d out of order", i)
				prev = ts
			}
			assert.Len(t, threads, cfg.Threads)
			first, _ := strconv.ParseFloat(c.Profile.Samples[0].Timestamp.String(), 64)
			assert.InDelta(t, cfg.Seconds, prev-first, 2/cfg.Hz, "chunk span")
		})
	}
}

func TestDeterminism(t *testing.T) {
	small := SmallChunkConfig()
	other := small
	other.Seed++

	// Each generator is called twice: the second call must rebuild the
	// same bytes from the same seed.
	first, second := ChunkV2(small), ChunkV2(small)
	assert.Equal(t, first, second)
	assert.NotEqual(t, first, ChunkV2(other))
	cocoa, cocoaAgain := ProfileV1Cocoa(7), ProfileV1Cocoa(7)
	assert.Equal(t, cocoa, cocoaAgain)
	assert.NotEqual(t, cocoa, ProfileV1Cocoa(8))
	env, envAgain := Envelope("profile_chunk", "python", first), Envelope("profile_chunk", "python", first)
	assert.Equal(t, env, envAgain)
}

func TestProfileV1Cocoa(t *testing.T) {
	data := ProfileV1Cocoa(3)
	require.True(t, json.Valid(data))

	var p struct {
		Version   string `json:"version"`
		Platform  string `json:"platform"`
		EventID   string `json:"event_id"`
		Timestamp string `json:"timestamp"`
		Device    struct {
			Architecture string `json:"architecture"`
		} `json:"device"`
		OS struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"os"`
		DebugMeta struct {
			Images []struct {
				Type      string `json:"type"`
				CodeFile  string `json:"code_file"`
				DebugID   string `json:"debug_id"`
				ImageAddr string `json:"image_addr"`
				ImageSize uint64 `json:"image_size"`
			} `json:"images"`
		} `json:"debug_meta"`
		Transaction struct {
			ID              string `json:"id"`
			TraceID         string `json:"trace_id"`
			Name            string `json:"name"`
			ActiveThreadID  string `json:"active_thread_id"`
			RelativeStartNS string `json:"relative_start_ns"`
			RelativeEndNS   string `json:"relative_end_ns"`
		} `json:"transaction"`
		Profile struct {
			Samples []struct {
				StackID             int    `json:"stack_id"`
				ThreadID            string `json:"thread_id"`
				ElapsedSinceStartNS string `json:"elapsed_since_start_ns"`
			} `json:"samples"`
			Stacks         [][]int                      `json:"stacks"`
			Frames         []map[string]string          `json:"frames"`
			ThreadMetadata map[string]map[string]any    `json:"thread_metadata"`
			QueueMetadata  map[string]map[string]string `json:"queue_metadata"`
		} `json:"profile"`
	}
	require.NoError(t, json.Unmarshal(data, &p))

	assert.Equal(t, "1", p.Version)
	assert.Equal(t, "cocoa", p.Platform)
	assert.Regexp(t, hex32, p.EventID)
	assert.NotEmpty(t, p.Timestamp)
	assert.Equal(t, "arm64e", p.Device.Architecture)
	assert.Equal(t, "iOS", p.OS.Name)
	assert.Regexp(t, hex32, p.Transaction.ID)
	assert.Regexp(t, hex32, p.Transaction.TraceID)
	assert.NotEmpty(t, p.Transaction.Name)
	assert.Contains(t, p.Profile.ThreadMetadata, p.Transaction.ActiveThreadID)
	assert.Len(t, p.Profile.QueueMetadata, 2)

	require.Len(t, p.DebugMeta.Images, 60)
	type span struct{ lo, hi uint64 }
	var images []span
	files := map[string]bool{}
	for i, im := range p.DebugMeta.Images {
		assert.Equal(t, "macho", im.Type, "image %d", i)
		assert.Regexp(t, `^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$`, im.DebugID, "image %d", i)
		addr, err := strconv.ParseUint(im.ImageAddr, 0, 64)
		require.NoError(t, err, "image %d", i)
		require.NotZero(t, im.ImageSize, "image %d", i)
		images = append(images, span{addr, addr + im.ImageSize})
		files[im.CodeFile] = true
	}
	assert.Len(t, files, 60, "code_file values are distinct")

	require.Len(t, p.Profile.Frames, 3000)
	for i, f := range p.Profile.Frames {
		require.Len(t, f, 1, "frame %d has only instruction_addr", i)
		addr, err := strconv.ParseUint(f["instruction_addr"], 0, 64)
		require.NoError(t, err, "frame %d", i)
		inside := false
		for _, im := range images {
			inside = inside || (addr >= im.lo && addr < im.hi)
		}
		require.True(t, inside, "frame %d address %#x is in no image", i, addr)
	}

	require.Len(t, p.Profile.Samples, 24_000)
	end, err := strconv.ParseUint(p.Transaction.RelativeEndNS, 10, 64)
	require.NoError(t, err)
	assert.LessOrEqual(t, end, uint64(30_000_000_000), "Relay rejects V1 profiles over 30 s")
	for i, s := range p.Profile.Samples {
		ns, err := strconv.ParseUint(s.ElapsedSinceStartNS, 10, 64)
		require.NoError(t, err, "sample %d", i)
		require.Less(t, ns, end, "sample %d after the transaction", i)
		require.True(t, s.StackID >= 0 && s.StackID < len(p.Profile.Stacks), "sample %d", i)
		require.Contains(t, p.Profile.ThreadMetadata, s.ThreadID, "sample %d", i)
	}
	for i, s := range p.Profile.Stacks {
		for _, f := range s {
			require.True(t, f >= 0 && f < 3000, "stack %d frame %d", i, f)
		}
	}
}

func TestEnvelope(t *testing.T) {
	tests := []struct {
		name, itemType, platform string
		payload                  []byte
		unsized                  bool
		wantHeader               string
	}{
		{"chunk", "profile_chunk", "python", []byte(`{"version":"2"}`), false, `{"type":"profile_chunk","length":15,"platform":"python"}`},
		{"no platform", "profile", "", []byte(`{}`), false, `{"type":"profile","length":2}`},
		{"payload with newlines", "profile", "cocoa", []byte("{\n}"), false, `{"type":"profile","length":3,"platform":"cocoa"}`},
		{"unsized, as node sends it", "profile_chunk", "node", []byte(`{"version":"2"}`), true, `{"type":"profile_chunk","platform":"node"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := Envelope(tt.itemType, tt.platform, tt.payload)
			if tt.unsized {
				env = EnvelopeUnsized(tt.itemType, tt.platform, tt.payload)
			}
			header, rest, ok := bytes.Cut(env, []byte("\n"))
			require.True(t, ok)
			var h struct {
				EventID string `json:"event_id"`
			}
			require.NoError(t, json.Unmarshal(header, &h))
			assert.Regexp(t, hex32, h.EventID)

			item, rest, ok := bytes.Cut(rest, []byte("\n"))
			require.True(t, ok)
			assert.JSONEq(t, tt.wantHeader, string(item))
			assert.Equal(t, tt.wantHeader, string(item), "key order is type, length, platform")
			assert.Equal(t, append(append([]byte(nil), tt.payload...), '\n'), rest)
		})
	}
}

func TestAppendMicros(t *testing.T) {
	tests := []struct {
		us   int64
		want string
	}{
		{1_795_000_000_000_000, "1795000000.000000"},
		{1_795_000_000_000_007, "1795000000.000007"},
		{1_795_000_001_123_456, "1795000001.123456"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, string(appendMicros(nil, tt.us)))
	}
}

func BenchmarkChunkV2Large(b *testing.B) {
	cfg := LargeChunkConfig()
	for b.Loop() {
		b.SetBytes(int64(len(ChunkV2(cfg))))
	}
}

// TestPayloadsPassValidation runs every generator's output through the
// receiver's own decode, normalize and validate steps: benchmark data that
// the receiver would reject measures the wrong code path.
func TestPayloadsPassValidation(t *testing.T) {
	tests := []struct {
		name    string
		payload []byte
		samples int
	}{
		{"large chunk", ChunkV2(LargeChunkConfig()), 48_480},
		{"small chunk", ChunkV2(SmallChunkConfig()), 250},
		{"node chunk", ChunkV2(ChunkConfig{Seed: 4, Seconds: 2, Hz: 101, Threads: 2, Stacks: 20, MinDepth: 3, MaxDepth: 9, Frames: 40, Platform: "node"}), 404},
		{"cocoa V1", ProfileV1Cocoa(5), 24_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := sentry.DecodeProfile(tt.payload)
			require.NoError(t, err)
			sentry.Normalize(p)
			require.NoError(t, sentry.Validate(p, sentry.DefaultLimits()))
			assert.Len(t, p.Samples, tt.samples, "normalization must not drop generated samples")
		})
	}
}

// Real SDK stacks end in their thread's root frames, so a stack is sampled
// on the thread that owns it (or on an identical pool worker): the number of
// distinct (stack, thread) pairs stays close to the number of stacks, which
// is what the translate benchmarks must see.
func TestChunkV2StacksBelongToThreads(t *testing.T) {
	cfg := LargeChunkConfig()
	var chunk struct {
		Profile struct {
			Samples []struct {
				StackID  int    `json:"stack_id"`
				ThreadID string `json:"thread_id"`
			} `json:"samples"`
			Stacks [][]int `json:"stacks"`
		} `json:"profile"`
	}
	if err := json.Unmarshal(ChunkV2(cfg), &chunk); err != nil {
		t.Fatal(err)
	}
	type pair struct {
		stack  int
		thread string
	}
	pairs := map[pair]bool{}
	stacksUsed := map[int]bool{}
	mainThread := chunk.Profile.Samples[0].ThreadID
	for i, s := range chunk.Profile.Samples {
		pairs[pair{s.StackID, s.ThreadID}] = true
		stacksUsed[s.StackID] = true
		if s.ThreadID == mainThread && s.StackID%cfg.Threads != 0 {
			t.Fatalf("sample %d: the main thread runs stack %d, which a worker owns", i, s.StackID)
		}
	}
	if len(pairs) > len(stacksUsed)*3/2 {
		t.Fatalf("%d distinct (stack, thread) pairs for %d stacks: stacks are not thread-owned", len(pairs), len(stacksUsed))
	}
	mainRoot := chunk.Profile.Stacks[0][len(chunk.Profile.Stacks[0])-1]
	workerRoot := chunk.Profile.Stacks[1][len(chunk.Profile.Stacks[1])-1]
	if mainRoot == workerRoot {
		t.Fatalf("main and worker stacks share the root frame %d", mainRoot)
	}
	t.Logf("%d samples, %d stacks used, %d (stack, thread) pairs", len(chunk.Profile.Samples), len(stacksUsed), len(pairs))
}
