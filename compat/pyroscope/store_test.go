package pyroscope

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collectorv1 "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	"google.golang.org/protobuf/proto"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// pythonChunk is a profile_chunk shaped as sentry-python 2.68's continuous
// profiler sends it: every thread sampled at each tick (the same
// timestamp), a few stacks, thread_metadata for every thread. seconds and
// hz are the chunk's length (the SDK flushes every 60 s) and the sampling
// rate (101 Hz asked; a run of the real SDK on this busy machine sampled
// 4 threads 4,164 times in 60 s, 69 Hz).
func pythonChunk(t *testing.T, threads int, seconds, hz float64, start float64) []byte {
	t.Helper()
	type sample struct {
		StackID   int     `json:"stack_id"`
		ThreadID  string  `json:"thread_id"`
		Timestamp float64 `json:"timestamp"`
	}
	frames := []map[string]any{
		{"function": "run", "module": "threading", "filename": "threading.py", "abs_path": "/usr/lib/python3.11/threading.py", "lineno": 982},
		{"function": "busy_hash", "module": "__main__", "filename": "app.py", "abs_path": "/srv/app/app.py", "lineno": 8, "in_app": true},
		{"function": "wait", "module": "threading", "filename": "threading.py", "abs_path": "/usr/lib/python3.11/threading.py", "lineno": 327},
	}
	stacks := [][]int{{1, 0}, {2, 0}}
	meta := map[string]any{}
	var samples []sample
	n := int(seconds * hz)
	for th := range threads {
		id := fmt.Sprint(140195255602048 + th*8392704)
		meta[id] = map[string]string{"name": fmt.Sprintf("thread-%d", th)}
		for i := range n {
			samples = append(samples, sample{StackID: th % 2, ThreadID: id, Timestamp: start + float64(i)/hz})
		}
	}
	chunk := map[string]any{
		"version": "2", "platform": "python", "release": "worker@1.0.0", "environment": "production",
		"profiler_id": "0d8cbd6ad85b4b5fb5b8a4c3d0e1f2a3", "chunk_id": fmt.Sprintf("%032x", int64(start*1000)),
		"client_sdk": map[string]string{"name": "sentry.python", "version": "2.68.0"},
		"profile":    map[string]any{"samples": samples, "stacks": stacks, "frames": frames, "thread_metadata": meta},
	}
	out, err := json.Marshal(chunk)
	require.NoError(t, err)
	return out
}

// exportRequest is the receiver's output for the chunks, as the OTLP
// exporter sends it and Pyroscope decodes it (proto v0.3.0).
func exportRequest(t *testing.T, chunks ...[]byte) *collectorv1.ExportProfilesServiceRequest {
	t.Helper()
	b := profilesin.NewProfilesBuilder(profilesin.ReceiveOptions{})
	for _, payload := range chunks {
		p, err := sentry.DecodeProfile(payload)
		require.NoError(t, err)
		sentry.Normalize(p)
		_, err = sentry.Check(p, sentry.DefaultLimits(), sentry.ModeRelay)
		require.NoError(t, err)
		b.Add(profilesin.DecodedProfile{Profile: p, Payload: payload})
	}
	var req collectorv1.ExportProfilesServiceRequest
	require.NoError(t, proto.Unmarshal(marshal(t, b.Profiles()), &req))
	return &req
}

// TestStoreRefusesProfilesOverTheSampleLimit: Pyroscope refuses, whole, a
// profile of more samples than max_profile_stacktrace_samples, and a
// sentry-python chunk of 60 s holds one sample per thread per tick: 4
// threads at the 69 Hz measured, or 3 at the 101 Hz asked, are over
// Pyroscope's default 16,000. The shares are of the wall time the
// receiver sends (Sentry's, TestPyroscopeReadsV030); with the limit off
// (the setting docs/pyroscope-time.md gives) Pyroscope shows all of it.
func TestStoreRefusesProfilesOverTheSampleLimit(t *testing.T) {
	const t0 = 1795845303.0
	measuredRun := [][]byte{ // the real SDK's run: a full chunk, then the last 10 s
		pythonChunk(t, 4, 60, 69.4, t0),
		pythonChunk(t, 5, 10, 58.8, t0+60),
	}
	tests := []struct {
		name        string
		chunks      [][]byte
		maxSamples  int
		wantRefused int
		wantShare   float64
	}{
		{"sentry-python run as measured, Pyroscope's default", measuredRun, DefaultMaxSamples, 1, 0.172},
		{"sentry-python run as measured, limit off", measuredRun, 0, 0, 1},
		{"3 threads at 101 Hz, Pyroscope's default", [][]byte{pythonChunk(t, 3, 60, 101, t0)}, DefaultMaxSamples, 1, 0},
		{"3 threads at 101 Hz, limit sized for 4 threads", [][]byte{pythonChunk(t, 3, 60, 101, t0)}, 4 * 60 * 101, 0, 1},
		{"one thread (Node's shape) at 101 Hz, Pyroscope's default", [][]byte{pythonChunk(t, 1, 60, 101, t0)}, DefaultMaxSamples, 0, 1},
		{"the sentry-python captures' 3-s chunks, Pyroscope's default", [][]byte{pythonChunk(t, 3, 3, 101, t0)}, DefaultMaxSamples, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent int64
			store := NewStore(tt.maxSamples)
			for _, chunk := range tt.chunks {
				req := exportRequest(t, chunk)
				series, err := Read(req)
				require.NoError(t, err)
				for _, s := range series {
					sent += s.Total
				}
				err = store.Push(req)
				if tt.wantRefused > 0 && err != nil {
					assert.ErrorContains(t, err, "max_profile_stacktrace_samples")
				} else {
					assert.NoError(t, err)
				}
			}
			assert.Len(t, store.Refused(), tt.wantRefused)
			share := float64(store.Totals()["worker"]) / float64(sent)
			t.Logf("Pyroscope shows %.3f of the wall time sent; refused %d profile(s)", share, len(store.Refused()))
			assert.InDelta(t, tt.wantShare, share, 0.001)
		})
	}
}
