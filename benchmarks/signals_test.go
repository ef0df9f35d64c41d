package benchmarks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/loadgen"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"
)

// signalSink counts the records and data points that reach the end of the
// pipeline, and keeps the first request's as OTLP protobuf: the receiver's
// own output, which the OTLP side of the comparison sends.
type signalSink struct {
	records atomic.Int64
	mu      sync.Mutex
	first   []byte
}

func (s *signalSink) keep(marshal func() ([]byte, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first != nil {
		return nil
	}
	b, err := marshal()
	s.first = b
	return err
}

func (s *signalSink) consumeLogs(_ context.Context, ld plog.Logs) error {
	s.records.Add(int64(ld.LogRecordCount()))
	return s.keep(func() ([]byte, error) { return (&plog.ProtoMarshaler{}).MarshalLogs(ld) })
}

func (s *signalSink) consumeMetrics(_ context.Context, md pmetric.Metrics) error {
	s.records.Add(int64(md.DataPointCount()))
	return s.keep(func() ([]byte, error) { return (&pmetric.ProtoMarshaler{}).MarshalMetrics(md) })
}

// startSignalReceiver starts the sentryprofile receiver, built by its
// factory, for the logs or the metrics signal, on a loopback address.
func startSignalReceiver(tb testing.TB, metrics bool, sink *signalSink) string {
	tb.Helper()
	f := sentryprofilereceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*sentryprofilereceiver.Config)
	addr := testnet.FreeLoopbackAddr(tb)
	cfg.ServerConfig.NetAddr.Endpoint = addr
	set := receivertest.NewNopSettings(f.Type())
	var start func() error
	var shutdown func() error
	if metrics {
		next, err := consumer.NewMetrics(sink.consumeMetrics)
		if err != nil {
			tb.Fatal(err)
		}
		r, err := f.CreateMetrics(context.Background(), set, cfg, next)
		if err != nil {
			tb.Fatal(err)
		}
		start = func() error { return r.Start(context.Background(), componenttest.NewNopHost()) }
		shutdown = func() error { return r.Shutdown(context.Background()) }
	} else {
		next, err := consumer.NewLogs(sink.consumeLogs)
		if err != nil {
			tb.Fatal(err)
		}
		r, err := f.CreateLogs(context.Background(), set, cfg, next)
		if err != nil {
			tb.Fatal(err)
		}
		start = func() error { return r.Start(context.Background(), componenttest.NewNopHost()) }
		shutdown = func() error { return r.Shutdown(context.Background()) }
	}
	if err := start(); err != nil {
		tb.Fatalf("start receiver: %v", err)
	}
	tb.Cleanup(func() {
		if err := shutdown(); err != nil {
			tb.Errorf("shutdown receiver: %v", err)
		}
	})
	return "http://" + addr + "/api/42/envelope/?sentry_key=0123456789abcdef0123456789abcdef&sentry_version=7"
}

// otlpHandler does what the collector's otlp receiver does with an HTTP
// protobuf request (its handler is not exported; the built-collector
// comparison in make load runs the real one): inflate, read, unmarshal the
// export request, consume, answer with the marshalled export response.
func otlpHandler(metrics bool, sink *signalSink) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		raw, err := testnet.RequestBody(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var answer []byte
		if metrics {
			req := pmetricotlp.NewExportRequest()
			if err = req.UnmarshalProto(raw); err == nil {
				if err = sink.consumeMetrics(r.Context(), req.Metrics()); err == nil {
					answer, err = pmetricotlp.NewExportResponse().MarshalProto()
				}
			}
		} else {
			req := plogotlp.NewExportRequest()
			if err = req.UnmarshalProto(raw); err == nil {
				if err = sink.consumeLogs(r.Context(), req.Logs()); err == nil {
					answer, err = plogotlp.NewExportResponse().MarshalProto()
				}
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(answer)
	}
}

func startOTLPHandler(tb testing.TB, metrics bool, sink *signalSink) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: otlpHandler(metrics, sink), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	tb.Cleanup(func() { _ = srv.Close() })
	path := "/v1/logs"
	if metrics {
		path = "/v1/metrics"
	}
	return "http://" + l.Addr().String() + path
}

// postSignal posts body and fails unless the answer is 200.
func postSignal(client *http.Client, url string, body []byte, gzipped bool) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if gzipped {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	answer, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d: %.200s", url, resp.StatusCode, answer)
	}
	return nil
}

// BenchmarkSignalsVsOTLP posts real @sentry/node 11 signal items (the
// chained error event, a log and a trace_metric container of 100 items)
// to the sentryprofile receiver, built by its factory, and the same
// records (the receiver's own output) as OTLP protobuf to a handler doing
// what the otlp receiver's does, over loopback HTTP in the same process.
// Each iteration sends one request to each, alternating which goes first,
// so both see the same machine: sentry-µs and otlp-µs are their times per
// request and vs-otlp is otlp ÷ sentry (≥ 1: the receiver is at least as
// fast as the OTLP path for the same records). Every record must arrive.
func BenchmarkSignalsVsOTLP(b *testing.B) {
	signals, err := loadgen.Signals(filepath.Join("..", "translator"), 100)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range signals {
		b.Run(s.Name, func(b *testing.B) {
			metrics := s.ItemType == "trace_metric"
			sentrySink, otlpSink := &signalSink{}, &signalSink{}
			sentryURL := startSignalReceiver(b, metrics, sentrySink)
			otlpURL := startOTLPHandler(b, metrics, otlpSink)
			client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			envelope := s.Envelope
			if err := postSignal(client, sentryURL, envelope, false); err != nil {
				b.Fatal(err)
			}
			perRequest := sentrySink.records.Load()
			otlp := sentrySink.first
			if s.Gzip {
				envelope = compresstest.Bytes(b, "gzip", envelope)
				otlp = compresstest.Bytes(b, "gzip", otlp)
			}
			if err := postSignal(client, otlpURL, otlp, s.Gzip); err != nil {
				b.Fatal(err)
			}
			sentrySink.records.Store(0)
			otlpSink.records.Store(0)
			var sentryTime, otlpTime time.Duration
			timed := func(url string, body []byte, total *time.Duration) {
				start := time.Now()
				if err := postSignal(client, url, body, s.Gzip); err != nil {
					b.Fatal(err)
				}
				*total += time.Since(start)
			}
			b.SetBytes(int64(len(s.Envelope)))
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					timed(sentryURL, envelope, &sentryTime)
					timed(otlpURL, otlp, &otlpTime)
				} else {
					timed(otlpURL, otlp, &otlpTime)
					timed(sentryURL, envelope, &sentryTime)
				}
				i++
			}
			b.ReportMetric(float64(sentryTime.Microseconds())/float64(i), "sentry-µs")
			b.ReportMetric(float64(otlpTime.Microseconds())/float64(i), "otlp-µs")
			b.ReportMetric(float64(otlpTime)/float64(sentryTime), "vs-otlp")
			if got, want := sentrySink.records.Load(), int64(i)*perRequest; got != want {
				b.Fatalf("receiver delivered %d records, want %d", got, want)
			}
			if got, want := otlpSink.records.Load(), int64(i)*perRequest; got != want {
				b.Fatalf("OTLP handler delivered %d records, want %d", got, want)
			}
		})
	}
}
