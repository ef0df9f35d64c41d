package profilesout

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

func TestForeignProfilerID(t *testing.T) {
	ebpf := map[string]any{"process.pid": int64(1), "process.executable.name": "python3.11", "process.executable.path": "/usr/bin/python3.11"}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range ebpf {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name       string
		a, b       map[string]any
		instA, inB string
		same       bool
	}{
		{name: "pid 1 seen by two collectors", a: ebpf, b: ebpf, instA: "collector-a", inB: "collector-b", same: false},
		{name: "pid 1 seen by one collector across requests", a: ebpf, b: ebpf, instA: "collector-a", inB: "collector-a", same: true},
		{name: "pid 1 on two hosts", a: with(map[string]any{"host.id": "h1"}), b: with(map[string]any{"host.id": "h2"}), instA: "c", inB: "c", same: false},
		{name: "host.name identifies, the collector is left out", a: with(map[string]any{"host.name": "web-1"}), b: with(map[string]any{"host.name": "web-1"}), instA: "collector-a", inB: "collector-b", same: true},
		{name: "two pods", a: with(map[string]any{"k8s.pod.uid": "p1"}), b: with(map[string]any{"k8s.pod.uid": "p2"}), instA: "c", inB: "c", same: false},
		{name: "container.id identifies", a: with(map[string]any{"container.id": "abc"}), b: with(map[string]any{"container.id": "abc"}), instA: "collector-a", inB: "collector-b", same: true},
		{name: "two containers", a: with(map[string]any{"container.id": "abc"}), b: with(map[string]any{"container.id": "def"}), instA: "c", inB: "c", same: false},
		{name: "service.instance.id identifies", a: with(map[string]any{"service.instance.id": "i-1"}), b: with(map[string]any{"service.instance.id": "i-1"}), instA: "collector-a", inB: "collector-b", same: true},
		{name: "a per-item Sentry id is not identity", a: with(map[string]any{"host.id": "h1", sentryattr.ChunkID: "0123456789abcdef0123456789abcdef"}), b: with(map[string]any{"host.id": "h1", sentryattr.ChunkID: "fedcba9876543210fedcba9876543210"}), instA: "c", inB: "c", same: true},
		{name: "two processes on one host", a: with(map[string]any{"host.id": "h1"}), b: with(map[string]any{"host.id": "h1", "process.pid": int64(2)}), instA: "c", inB: "c", same: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := pcommon.NewMap(), pcommon.NewMap()
			require.NoError(t, a.FromRaw(tt.a))
			require.NoError(t, b.FromRaw(tt.b))
			idA, idB := foreignProfilerID(a, tt.instA), foreignProfilerID(b, tt.inB)
			assert.Len(t, idA, 32)
			if tt.same {
				assert.Equal(t, idA, idB)
			} else {
				assert.NotEqual(t, idA, idB)
			}
		})
	}
}

func TestFromProfilesReleaseAndEnvironment(t *testing.T) {
	tests := []struct {
		name             string
		resource         map[string]any
		defRel, defEnv   string
		wantRel, wantEnv string
	}{
		{name: "defaults fill in", resource: map[string]any{"process.pid": int64(7)}, defRel: "1.0", defEnv: "prod", wantRel: "1.0", wantEnv: "prod"},
		{name: "resource wins", resource: map[string]any{"service.version": "2.3.4", "deployment.environment.name": "staging"}, defRel: "1.0", defEnv: "prod", wantRel: "2.3.4", wantEnv: "staging"},
		{name: "older environment key", resource: map[string]any{"deployment.environment": "qa"}, defEnv: "prod", wantEnv: "qa"},
		{name: "empty resource value falls back", resource: map[string]any{"service.version": ""}, defRel: "1.0", wantRel: "1.0"},
		{name: "nothing at all", resource: map[string]any{"process.pid": int64(7)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOTLPBuilder()
			sp := o.resource(tt.resource)
			p := o.profile(sp, "samples", "count", t0, 1e9, "cpu", "nanoseconds", 50e6)
			addSample(p, o.stack(o.location(0, 0, "", testLine{fn: "work"})), nil, nil, []uint64{t0 + 1e6, t0 + 2e6})
			chunks, drops := FromProfiles(o.pd, ExportOptions{DefaultRelease: tt.defRel, DefaultEnvironment: tt.defEnv})
			require.Empty(t, drops)
			require.Len(t, chunks, 1)
			requireValidChunks(t, chunks)
			assert.Equal(t, tt.wantRel, chunks[0].Profile.Release)
			assert.Equal(t, tt.wantEnv, chunks[0].Profile.Environment)
		})
	}
}

func TestPlatformMemorySettle(t *testing.T) {
	tests := []struct {
		name  string
		voted []string // what each window's frames voted for, in order
		want  []string // the platform each window is sent with
	}{
		{name: "a kernel-only window of a node process", voted: []string{"node", "native", "node"}, want: []string{"node", "node", "node"}},
		{name: "native first, then the runtime shows", voted: []string{"native", "python", "native"}, want: []string{"native", "python", "python"}},
		{name: "a native process stays native", voted: []string{"native", "native"}, want: []string{"native", "native"}},
		{name: "the first runtime sticks", voted: []string{"go", "python"}, want: []string{"go", "go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewPlatformMemory(4)
			for i, v := range tt.voted {
				assert.Equal(t, tt.want[i], m.settle("profiler-1", v), "window %d", i)
			}
		})
	}
	t.Run("bounded: the oldest profiler is forgotten", func(t *testing.T) {
		m := NewPlatformMemory(2)
		m.settle("a", "go")
		m.settle("b", "go")
		m.settle("c", "go")
		assert.Equal(t, "python", m.settle("a", "python"), "a was forgotten")
		assert.Equal(t, "go", m.settle("c", "python"), "c is remembered")
		assert.LessOrEqual(t, len(m.byID), 2)
	})
}

// TestFromProfilesLonelyThreads: Relay removes the samples of a thread with
// fewer than two non-idle samples in a chunk; the exporter drops them first
// and counts them, so that what it counts as sent is what Sentry keeps.
func TestFromProfilesLonelyThreads(t *testing.T) {
	type threadSamples struct {
		thread     int64
		busy, idle int // samples with a stack, with an empty stack
	}
	tests := []struct {
		name        string
		threads     []threadSamples
		wantThreads []string // threads left in the chunk; nil: no chunk
		wantDropped int
	}{
		{name: "every thread has two samples", threads: []threadSamples{{1, 2, 0}, {2, 3, 0}}, wantThreads: []string{"1", "2"}},
		{name: "a thread with one sample", threads: []threadSamples{{1, 3, 0}, {2, 1, 0}}, wantThreads: []string{"1"}, wantDropped: 1},
		{name: "idle samples do not count", threads: []threadSamples{{1, 2, 0}, {2, 1, 4}}, wantThreads: []string{"1"}, wantDropped: 5},
		{name: "no thread with two samples", threads: []threadSamples{{1, 1, 0}, {2, 1, 1}}, wantDropped: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOTLPBuilder()
			sp := o.resource(map[string]any{"process.pid": int64(7)})
			p := o.profile(sp, "samples", "count", t0, 10e9, "cpu", "nanoseconds", 50e6)
			busy := o.stack(o.location(0, 0, "", testLine{fn: "work"}))
			idle := o.stack()
			ts := t0
			total := 0
			for _, th := range tt.threads {
				attr := o.attr("thread.id", th.thread)
				for range th.busy {
					ts += 10e6
					addSample(p, busy, []int32{attr}, nil, []uint64{ts})
				}
				for range th.idle {
					ts += 10e6
					addSample(p, idle, []int32{attr}, nil, []uint64{ts})
				}
				total += th.busy + th.idle
			}
			chunks, drops := FromProfiles(o.pd, ExportOptions{})
			requireValidChunks(t, chunks)
			assert.Equal(t, total, sentOrDropped(chunks, drops), "every sample sent or dropped")
			dropped := 0
			for _, d := range drops {
				assert.Equal(t, sentry.ReasonNotEnoughSamples, d.Reason)
				dropped += d.Samples
			}
			assert.Equal(t, tt.wantDropped, dropped)
			if tt.wantThreads == nil {
				assert.Empty(t, chunks)
				return
			}
			require.Len(t, chunks, 1)
			var threads []string
			for _, s := range chunks[0].Profile.Samples {
				if !slices.Contains(threads, s.ThreadID) {
					threads = append(threads, s.ThreadID)
				}
			}
			slices.Sort(threads)
			assert.Equal(t, tt.wantThreads, threads)
		})
	}
}
