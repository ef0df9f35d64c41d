package android

import (
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/art"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/art/arttest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
)

// largeAndroidChunk is a continuous chunk carrying a generated ART trace of
// 60 s, 20 threads and 10^6 records (nested calls 4 deep, dual clock).
func largeAndroidChunk() []byte {
	methods := map[uint32]art.Method{}
	for i := range 64 {
		methods[uint32(4+4*i)] = art.Method{Class: fmt.Sprintf("com.example.app.Module%d", i%8),
			Name: fmt.Sprintf("work%d", i), Signature: "(I)V", Source: "Module.kt", Line: uint32(10 + i)}
	}
	var threads []art.Thread
	for th := range 20 {
		threads = append(threads, art.Thread{ID: uint32(100 + th), Name: fmt.Sprintf("worker-%d", th)})
	}
	const n = 1_000_000
	events := make([]art.Event, 0, n)
	depth := make([][]uint32, 20)
	for i := range n {
		th := i % 20
		wall := uint32(uint64(i) * 60_000_000 / n)
		e := art.Event{Thread: uint32(100 + th), Wall: wall, CPU: wall / 2}
		if len(depth[th]) < 4 && (i/20)%8 < 4 {
			e.Method, e.Action = uint32(4+4*((i/20+len(depth[th]))%64)), art.Enter
			depth[th] = append(depth[th], e.Method)
		} else if len(depth[th]) > 0 {
			e.Method, e.Action = depth[th][len(depth[th])-1], art.Exit
			depth[th] = depth[th][:len(depth[th])-1]
		} else {
			e.Method, e.Action = 4, art.Enter
			depth[th] = append(depth[th], 4)
		}
		events = append(events, e)
	}
	trace := arttest.Write(3, art.ClockDual, threads, methods, events, 60_000_000)
	return []byte(`{"chunk_id":"0432a0a4c25f4697bf9f0a2fcbe6a814","profiler_id":"071bfc9a1f8e4cb4a0a2e0bd1c5bde55",` +
		`"platform":"android","release":"app@1.0","timestamp":1795000000.0,"sampled_profile":"` +
		base64.RawStdEncoding.EncodeToString(trace) + `"}`)
}

// BenchmarkTranslateAndroid is an Android chunk's way through the receiver:
// base64, ART decode, slices, the sample model and the pdata build. MB/s
// count the payload as it arrives (base64 JSON).
func BenchmarkTranslateAndroid(b *testing.B) {
	payload := largeAndroidChunk()
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	builder := profilesin.NewProfilesBuilder(profilesin.ReceiveOptions{})
	samples := 0
	for b.Loop() {
		p, _, err := DecodeAndroid(payload, time.Now(), art.DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		builder.Reset(profilesin.ReceiveOptions{})
		if samples = builder.Add(profilesin.DecodedProfile{Profile: p}); samples == 0 {
			b.Fatal("no samples")
		}
		_ = builder.Profiles()
	}
	b.ReportMetric(float64(samples), "slices/op")
}
