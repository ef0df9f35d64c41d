package benchmarks

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"
)

// eventSink counts the sample events that reach the end of the pipeline
// and keeps nothing, so that a long benchmark does not grow the heap.
type eventSink struct {
	events atomic.Int64
}

func (s *eventSink) consume(_ context.Context, pd pprofile.Profiles) error {
	s.events.Add(int64(profilestest.SampleEvents(pd)))
	return nil
}

// startReceiver starts the sentryprofile receiver, built by its factory,
// on a loopback address, feeding sink; it is shut down when tb ends.
func startReceiver(tb testing.TB, sink *eventSink) string {
	tb.Helper()
	f := sentryprofilereceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*sentryprofilereceiver.Config)
	addr := testnet.FreeLoopbackAddr(tb)
	cfg.ServerConfig.NetAddr.Endpoint = addr
	// Chunks go straight through: holding them for span links (the
	// default, 5 s) would measure the wait, and the sink would count
	// nothing by the end of an iteration.
	cfg.Links.Wait = 0
	next, err := xconsumer.NewProfiles(sink.consume, consumer.WithCapabilities(consumer.Capabilities{MutatesData: false}))
	if err != nil {
		tb.Fatal(err)
	}
	r, err := f.CreateProfiles(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, next)
	if err != nil {
		tb.Fatalf("create receiver: %v", err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		tb.Fatalf("start receiver: %v", err)
	}
	tb.Cleanup(func() {
		if err := r.Shutdown(context.Background()); err != nil {
			tb.Errorf("shutdown receiver: %v", err)
		}
	})
	return "http://" + addr + "/api/42/envelope/?sentry_key=0123456789abcdef0123456789abcdef&sentry_version=7"
}

// BenchmarkHandler posts SDK-sized chunks, gzip'd in an envelope, to the
// receiver over loopback HTTP with keep-alive connections, and reports
// envelopes per second across all cores (target: ≥ 2,000 on 2 cores).
// SmallChunkGzip is the synthetic python chunk (70 KB); NodeSDKChunkGzip is
// shaped like a real @sentry/node 11 chunk (135 KB: deep stacks, long
// paths, half the frames duplicates), sent as that SDK sends it: no length
// headers. Every sample event must reach the sink.
func BenchmarkHandler(b *testing.B) {
	inputs := []struct {
		name     string
		platform string
		chunk    []byte
		envelope func(itemType, platform string, payload []byte) []byte
	}{
		{"SmallChunkGzip", "python", benchdata.ChunkV2(benchdata.SmallChunkConfig()), benchdata.Envelope},
		{"NodeSDKChunkGzip", "node", benchdata.ChunkV2(benchdata.NodeSDKChunkConfig()), benchdata.EnvelopeUnsized},
	}
	for _, in := range inputs {
		_, perEnvelope, err := translate(in.chunk)
		if err != nil {
			b.Fatal(err)
		}
		body := compresstest.Bytes(b, "gzip", in.envelope("profile_chunk", in.platform, in.chunk))
		b.Run(in.name, func(b *testing.B) {
			benchmarkHandler(b, body, int64(len(in.chunk)), perEnvelope)
		})
	}
}

func benchmarkHandler(b *testing.B, body []byte, chunkBytes int64, perEnvelope int) {
	sink := &eventSink{}
	url := startReceiver(b, sink)
	transport := &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}

	b.SetBytes(chunkBytes)
	b.ReportAllocs()
	// Two client goroutines per core keep the server busy while a
	// response is in flight.
	b.SetParallelism(2)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			req.Header.Set("Content-Encoding", "gzip")
			req.Header.Set("Content-Type", "application/x-sentry-envelope")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "envelopes/s")
	if got, want := sink.events.Load(), int64(b.N)*int64(perEnvelope); got != want {
		b.Fatalf("sink got %d sample events, want %d (%d envelopes × %d)", got, want, b.N, perEnvelope)
	}
}
