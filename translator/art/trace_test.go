package art_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/art"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/art/arttest"
)

var testMethods = map[uint32]art.Method{
	0x4:  {Class: "android.os.Looper", Name: "loop", Signature: "()V", Source: "Looper.java"},
	0x8:  {Class: "com.example.App", Name: "render", Signature: "(I)V", Source: "App.kt", Line: 42},
	0x10: {Class: "com.example.App", Name: "hash", Signature: "([B)J", Source: "App.kt"},
}

// A main thread: loop from 0 to the end; render 100–600 µs with hash
// 200–300 µs inside; a worker entering hash at 50 µs and never leaving.
func testEvents() []art.Event {
	return []art.Event{
		{Thread: 1, Method: 0x4, Action: art.Enter, Wall: 0, CPU: 0},
		{Thread: 2, Method: 0x10, Action: art.Enter, Wall: 50, CPU: 5},
		{Thread: 1, Method: 0x8, Action: art.Enter, Wall: 100, CPU: 90},
		{Thread: 1, Method: 0x10, Action: art.Enter, Wall: 200, CPU: 180},
		{Thread: 1, Method: 0x10, Action: art.Exit, Wall: 300, CPU: 270},
		{Thread: 1, Method: 0x8, Action: art.Exit, Wall: 600, CPU: 500},
	}
}

// writers are the two forms of a trace file; streaming has no version 1.
var writers = []struct {
	form     string
	write    func(int, art.Clock, []art.Thread, map[uint32]art.Method, []art.Event, uint64) []byte
	versions []int
}{
	{"regular", arttest.Write, []int{1, 2, 3}},
	{"streaming", arttest.WriteStreaming, []int{2, 3}},
}

func TestDecodeVersionsAndClocks(t *testing.T) {
	threads := []art.Thread{{ID: 1, Name: "main"}, {ID: 2, Name: "worker"}}
	for _, w := range writers {
		for _, version := range w.versions {
			for _, clock := range []art.Clock{art.ClockWall, art.ClockThreadCPU, art.ClockDual} {
				if w.form == "streaming" && version == 2 && clock == art.ClockDual {
					continue // ART streams one clock in version 2, both in 3
				}
				t.Run(fmt.Sprintf("%s/v%d/%s", w.form, version, clock), func(t *testing.T) {
					events := testEvents()
					data := w.write(version, clock, threads, testMethods, events, 1000)
					tr, err := art.Decode(data, art.DefaultLimits())
					require.NoError(t, err)
					assert.Equal(t, version, tr.Version)
					assert.Equal(t, clock, tr.Clock)
					assert.Equal(t, uint64(1000), tr.ElapsedMicros)
					assert.Equal(t, uint64(123_456_789), tr.StartMicros)
					assert.Equal(t, threads, tr.Threads)
					assert.Equal(t, testMethods, tr.Methods)
					assert.Empty(t, tr.Undeclared)
					require.Len(t, tr.Events, len(events))
					for i, e := range events {
						got := tr.Events[i]
						assert.Equal(t, e.Thread, got.Thread)
						assert.Equal(t, e.Method, got.Method)
						assert.Equal(t, e.Action, got.Action)
						if clock != art.ClockThreadCPU {
							assert.Equal(t, e.Wall, got.Wall)
						}
						if clock != art.ClockWall {
							assert.Equal(t, e.CPU, got.CPU)
						}
					}
				})
			}
		}
	}
}

// TestDecodeUndeclaredMethods: records of methods the trace does not
// declare (ART leaves out runtime-generated proxy classes) are kept, their
// ids listed once in order of first use, named unknown.<id>, and their
// time is on the stacks like any other method's.
func TestDecodeUndeclaredMethods(t *testing.T) {
	events := []art.Event{
		{Thread: 1, Method: 0x4, Action: art.Enter, Wall: 0},
		{Thread: 1, Method: 0xf0, Action: art.Enter, Wall: 10}, // a proxy's invoke
		{Thread: 1, Method: 0x8, Action: art.Enter, Wall: 20},
		{Thread: 1, Method: 0x8, Action: art.Exit, Wall: 30},
		{Thread: 1, Method: 0xf0, Action: art.Exit, Wall: 40},
		{Thread: 1, Method: 0x1a4, Action: art.Enter, Wall: 50},
	}
	for _, w := range writers {
		t.Run(w.form, func(t *testing.T) {
			data := w.write(3, art.ClockDual, []art.Thread{{ID: 1, Name: "main"}}, testMethods, events, 100)
			tr, err := art.Decode(data, art.DefaultLimits())
			require.NoError(t, err)
			require.Len(t, tr.Events, len(events))
			assert.Equal(t, []uint32{0xf0, 0x1a4}, tr.Undeclared)
			assert.Equal(t, 3, tr.UndeclaredRecords)
			assert.Equal(t, art.Method{Class: art.UnknownClass, Name: "0xf0"}, tr.Method(0xf0))
			assert.Equal(t, testMethods[0x8], tr.Method(0x8))
			assert.Equal(t, []string{"0+10 loop", "10+10 0xf0<loop", "20+10 render<0xf0<loop", "30+10 0xf0<loop", "40+10 loop", "50+50 0x1a4<loop"},
				sliceNames(tr))

			_, err = art.Decode(data, art.Limits{MaxEvents: 100, MaxMethods: 3, MaxThreads: 10})
			assert.ErrorIs(t, err, art.ErrTooLarge, "undeclared methods count against MaxMethods")
		})
	}
}

// sliceNames lists a trace's slices as "start+wall stack", the stack's
// method names leaf first.
func sliceNames(tr *art.Trace) []string {
	sl := tr.Slices()
	var out []string
	for _, s := range sl.Slices {
		var names []string
		for _, m := range sl.Stacks[s.Stack] {
			names = append(names, tr.Method(m).Name)
		}
		out = append(out, fmt.Sprintf("%d+%d %s", s.Start, s.Wall, strings.Join(names, "<")))
	}
	return out
}

// TestSlicesEndOnTheTraceClock: methods open at the end of the trace run
// to `elapsed-time-usec` on the wall clock; on the thread-cpu clock, whose
// times are each thread's CPU time, they end at the thread's last record.
func TestSlicesEndOnTheTraceClock(t *testing.T) {
	// loop from 0, render 5–12 (on whichever clock the trace uses).
	events := []art.Event{
		{Thread: 1, Method: 0x4, Action: art.Enter, Wall: 0, CPU: 0},
		{Thread: 1, Method: 0x8, Action: art.Enter, Wall: 5, CPU: 5},
		{Thread: 1, Method: 0x8, Action: art.Exit, Wall: 12, CPU: 12},
	}
	tests := []struct {
		clock art.Clock
		want  []string
	}{
		{art.ClockWall, []string{"0+5 loop", "5+7 render<loop", "12+29 loop"}},
		{art.ClockDual, []string{"0+5 loop", "5+7 render<loop", "12+29 loop"}},
		{art.ClockThreadCPU, []string{"0+5 loop", "5+7 render<loop"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.clock), func(t *testing.T) {
			tr, err := art.Decode(arttest.Write(3, tt.clock, []art.Thread{{ID: 1, Name: "main"}}, testMethods, events, 41), art.DefaultLimits())
			require.NoError(t, err)
			assert.Equal(t, tt.want, sliceNames(tr))
		})
	}
}

// TestSlicesReproduceTheTimes: the time of each stack is exactly what the
// records say; open methods run to the end of the trace.
func TestSlicesReproduceTheTimes(t *testing.T) {
	data := arttest.Write(3, art.ClockDual, []art.Thread{{ID: 1, Name: "main"}, {ID: 2, Name: "worker"}}, testMethods, testEvents(), 1000)
	tr, err := art.Decode(data, art.DefaultLimits())
	require.NoError(t, err)
	sl := tr.Slices()
	type key struct {
		thread uint32
		stack  string
	}
	got := map[key][2]uint32{}
	for _, s := range sl.Slices {
		var names []string
		for _, m := range sl.Stacks[s.Stack] {
			names = append(names, tr.Methods[m].Name)
		}
		k := key{s.Thread, strings.Join(names, "<")}
		v := got[k]
		got[k] = [2]uint32{v[0] + s.Wall, v[1] + s.CPU}
	}
	assert.Equal(t, map[key][2]uint32{
		{1, "loop"}:             {100 + 400, 90 + 0}, // 0–100, then 600–1000 (no CPU time after the last record)
		{1, "render<loop"}:      {100 + 300, 90 + 230},
		{1, "hash<render<loop"}: {100, 90},
		{2, "hash"}:             {950, 0},
	}, got)
	for _, th := range []uint32{1, 2} {
		var total uint32
		for _, s := range sl.Slices {
			if s.Thread == th {
				total += s.Wall
			}
		}
		first := map[uint32]uint32{1: 0, 2: 50}[th]
		assert.Equal(t, 1000-first, total, "thread %d: every µs from its first record to the end", th)
	}
}

func TestSlicesUnbalanced(t *testing.T) {
	events := []art.Event{
		{Thread: 1, Method: 0x8, Action: art.Exit, Wall: 0},    // exit without enter: ignored
		{Thread: 1, Method: 0x4, Action: art.Enter, Wall: 10},  // loop
		{Thread: 1, Method: 0x8, Action: art.Enter, Wall: 20},  // render
		{Thread: 1, Method: 0x10, Action: art.Enter, Wall: 30}, // hash
		{Thread: 1, Method: 0x8, Action: art.Unwind, Wall: 40}, // render unwinds: hash goes too
		{Thread: 1, Method: 0x4, Action: art.Exit, Wall: 50},
	}
	tr, err := art.Decode(arttest.Write(2, art.ClockWall, []art.Thread{{ID: 1, Name: "main"}}, testMethods, events, 60), art.DefaultLimits())
	require.NoError(t, err)
	assert.Equal(t, []string{"10+10 loop", "20+10 render<loop", "30+10 hash<render<loop", "40+10 loop"}, sliceNames(tr))
}

func TestDecodeMalformed(t *testing.T) {
	good := arttest.Write(3, art.ClockDual, []art.Thread{{ID: 1, Name: "main"}}, testMethods, testEvents(), 1000)
	slow := bytes.Index(good, []byte("SLOW"))
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"no binary part", good[:slow], art.ErrHeader},
		{"truncated records", good[:len(good)-20], nil}, // whole records are read, the cut one is not
		{"no records", good[:slow+32], art.ErrNoRecords},
		{"an undeclared method", bytes.Replace(good, []byte("0x10\t"), []byte("0x14\t"), 1), nil}, // kept, named unknown
		{"a header that lies about the record size", func() []byte {
			b := bytes.Clone(good)
			binary.LittleEndian.PutUint16(b[slow+16:], 4)
			return b
		}(), art.ErrBinary},
		{"an offset past the end", func() []byte {
			b := bytes.Clone(good)
			binary.LittleEndian.PutUint16(b[slow+6:], 0xffff)
			return b
		}(), art.ErrBinary},
		{"version 4", bytes.Replace(good, []byte("*version\n3"), []byte("*version\n4"), 1), art.ErrVersion},
		{"a method line of two fields", bytes.Replace(good, []byte("*methods\n"), []byte("*methods\n0x20\tx\n"), 1), art.ErrHeader},
		{"unknown clock", bytes.Replace(good, []byte("clock=dual"), []byte("clock=sundial"), 1), art.ErrHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := art.Decode(tt.data, art.DefaultLimits())
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.want)
		})
	}
	_, err := art.DecodeBase64("not*base64")
	assert.ErrorIs(t, err, art.ErrBase64)
	var corrupt base64.CorruptInputError
	require.ErrorAs(t, err, &corrupt, "the base64 decoder's error stays in the chain")
	assert.Equal(t, base64.CorruptInputError(3), corrupt, "the offset of the first bad byte")
	raw, err := art.DecodeBase64(strings.TrimRight(base64.StdEncoding.EncodeToString(good), "="))
	require.NoError(t, err, "unpadded, as sentry-java writes it")
	assert.Equal(t, good, raw)
}

// TestDecodeStreamingMalformed: a streaming trace that is cut, lies about
// its sizes or has entries of no known kind is refused with the reason.
func TestDecodeStreamingMalformed(t *testing.T) {
	good := arttest.WriteStreaming(3, art.ClockDual, []art.Thread{{ID: 1, Name: "main"}}, testMethods, testEvents(), 1000)
	summary := bytes.Index(good, []byte("*version")) - 7
	setU16 := func(at int, v uint16) []byte {
		b := bytes.Clone(good)
		binary.LittleEndian.PutUint16(b[at:], v)
		return b
	}
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"the header alone", good[:32], art.ErrHeader},
		{"cut before the summary", good[:summary], art.ErrHeader},
		{"a summary longer than the file", good[:len(good)-1], art.ErrBinary},
		{"version 1", setU16(4, 0xF1), art.ErrVersion},
		{"version 4", setU16(4, 0xF4), art.ErrVersion},
		{"a version without the streaming bits", setU16(4, 3), art.ErrHeader},
		{"records smaller than the clock's", setU16(16, 10), art.ErrBinary},
		{"an entry of kind 9", func() []byte {
			b := bytes.Clone(good)
			b[32+2] = 9
			return b
		}(), art.ErrBinary},
		{"a summary of another version", bytes.Replace(good, []byte("*version\n3"), []byte("*version\n2"), 1), art.ErrBinary},
		{"a summary without records", append(bytes.Clone(good[:32]), good[summary:]...), art.ErrNoRecords},
		{"a header of 8 bytes", good[:8], art.ErrBinary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := art.Decode(tt.data, art.DefaultLimits())
			assert.ErrorIs(t, err, tt.want)
		})
	}
	_, err := art.Decode(good, art.Limits{MaxEvents: len(testEvents()) - 1, MaxMethods: 10, MaxThreads: 10})
	assert.ErrorIs(t, err, art.ErrTooLarge, "records over the limit")
}

// TestDecodeMillionEvents: 10^6 records decode within the limits, and one
// more than the limit is refused before anything is kept.
func TestDecodeMillionEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 14 MB trace")
	}
	events := make([]art.Event, 1_000_000)
	for i := range events {
		events[i] = art.Event{Thread: uint32(1 + i%20), Method: 0x8, Action: art.Action(i / 20 % 2), Wall: uint32(i), CPU: uint32(i / 2)}
	}
	data := arttest.Write(3, art.ClockDual, nil, testMethods, events, 1_000_001)
	tr, err := art.Decode(data, art.DefaultLimits())
	require.NoError(t, err)
	assert.Len(t, tr.Events, len(events))
	_, err = art.Decode(data, art.Limits{MaxEvents: 999_999, MaxMethods: 10, MaxThreads: 10})
	assert.ErrorIs(t, err, art.ErrTooLarge)
}

// headerCounts reads num-method-calls and the thread and method lines of a
// trace's text header with nothing of the decoder.
func headerCounts(t *testing.T, data []byte) (calls, threads, methods int, names map[string]string) {
	t.Helper()
	text := string(data[:bytes.Index(data, []byte("SLOW"))])
	names = map[string]string{}
	section := ""
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "*"):
			section = line
		case strings.HasPrefix(line, "num-method-calls="):
			_, err := fmt.Sscanf(line, "num-method-calls=%d", &calls)
			require.NoError(t, err, "header line %q", line)
		case section == "*threads" && line != "":
			threads++
			id, name, _ := strings.Cut(line, "\t")
			names[id] = name
		case section == "*methods" && line != "":
			methods++
		}
	}
	return calls, threads, methods, names
}

// TestDecodeSharedFixtures decodes the real ART traces of Sentry's Android
// fixtures and checks them against their own text header.
func TestDecodeSharedFixtures(t *testing.T) {
	for _, name := range []string{
		"relay__relay-profiling_tests_fixtures_android_legacy_valid.json",
		"relay__relay-profiling_tests_fixtures_android_chunk_valid.json",
		"relay__relay-profiling_tests_fixtures_android_chunk_valid_rn.json",
	} {
		t.Run(name, func(t *testing.T) {
			var payload struct {
				SampledProfile string `json:"sampled_profile"`
			}
			require.NoError(t, json.Unmarshal(fixtures.Read(t, name), &payload))
			data, err := art.DecodeBase64(payload.SampledProfile)
			require.NoError(t, err)
			tr, err := art.Decode(data, art.DefaultLimits())
			require.NoError(t, err)
			calls, threads, methods, names := headerCounts(t, data)
			assert.Len(t, tr.Events, calls, "num-method-calls")
			assert.Len(t, tr.Threads, threads)
			assert.Len(t, tr.Methods, methods)
			for _, th := range tr.Threads {
				assert.Equal(t, names[fmt.Sprint(th.ID)], th.Name)
			}
			assert.Equal(t, art.ClockDual, tr.Clock)
			sl := tr.Slices()
			var mainWall uint64
			for _, s := range sl.Slices {
				if tr.Threads[0].ID == s.Thread {
					mainWall += uint64(s.Wall)
				}
				assert.LessOrEqual(t, uint64(s.Start)+uint64(s.Wall), tr.ElapsedMicros, "inside the trace")
			}
			assert.Positive(t, mainWall)
			assert.LessOrEqual(t, mainWall, tr.ElapsedMicros)
			t.Logf("%d records, %d threads, %d methods, %d slices, %d stacks; main thread %d of %d µs in a method",
				len(tr.Events), len(tr.Threads), len(tr.Methods), len(sl.Slices), len(sl.Stacks), mainWall, tr.ElapsedMicros)
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(arttest.Write(3, art.ClockDual, []art.Thread{{ID: 1, Name: "main"}}, testMethods, testEvents(), 1000))
	f.Add(arttest.Write(1, art.ClockWall, nil, testMethods, testEvents(), 10))
	f.Add(arttest.Write(2, art.ClockThreadCPU, nil, testMethods, testEvents()[:2], 0))
	f.Add(arttest.WriteStreaming(3, art.ClockDual, []art.Thread{{ID: 1, Name: "main"}}, testMethods, testEvents(), 1000))
	f.Add(arttest.WriteStreaming(2, art.ClockWall, nil, map[uint32]art.Method{0x4: testMethods[0x4]}, testEvents(), 10))
	f.Fuzz(func(t *testing.T, data []byte) {
		limits := art.Limits{MaxEvents: 10_000, MaxMethods: 1000, MaxThreads: 1000}
		tr, err := art.Decode(data, limits)
		if err != nil {
			return
		}
		if len(tr.Events) > limits.MaxEvents || len(tr.Methods)+len(tr.Undeclared) > limits.MaxMethods || len(tr.Threads) > limits.MaxThreads {
			t.Fatalf("over the limits: %d events, %d+%d methods, %d threads", len(tr.Events), len(tr.Methods), len(tr.Undeclared), len(tr.Threads))
		}
		sl := tr.Slices()
		for _, s := range sl.Slices {
			if s.Stack < 0 || s.Stack >= len(sl.Stacks) || s.Wall == 0 {
				t.Fatalf("slice %+v of %d stacks", s, len(sl.Stacks))
			}
			for _, m := range sl.Stacks[s.Stack] {
				if _, ok := tr.Methods[m]; !ok && !slices.Contains(tr.Undeclared, m) {
					t.Fatalf("stack names method %#x, neither declared nor listed as undeclared", m)
				}
			}
		}
	})
}

// BenchmarkDecode reads a trace of 10^6 dual-clock records (20 threads,
// calls 4 deep) and replays it into slices: the ART part of an Android
// chunk's translation.
func BenchmarkDecode(b *testing.B) {
	const n = 1_000_000
	events := make([]art.Event, n)
	depth := make([]int, 20)
	for i := range events {
		th := i % 20
		e := art.Event{Thread: uint32(100 + th), Wall: uint32(i * 60), CPU: uint32(i * 30)}
		if depth[th] > 0 && (depth[th] == 4 || (i/20)%8 >= 4) {
			depth[th]--
			e.Method, e.Action = uint32(4+4*depth[th]), art.Exit
		} else {
			e.Method, e.Action = uint32(4+4*depth[th]), art.Enter
			depth[th]++
		}
		events[i] = e
	}
	methods := map[uint32]art.Method{4: testMethods[4], 8: testMethods[8], 12: testMethods[4], 16: testMethods[8]}
	data := arttest.Write(3, art.ClockDual, nil, methods, events, 60*n)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		tr, err := art.Decode(data, art.DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		_ = tr.Slices()
	}
}
