package reliability

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"
)

// fuzzRequestVariant shapes the request around the fuzzed body: the SDKs'
// auth forms and encodings, and a few that must be refused.
type fuzzRequestVariant struct {
	name    string
	query   string // appended to the endpoint path
	headers map[string]string
}

var fuzzRequestVariants = []fuzzRequestVariant{
	{name: "query auth (node, browser)", query: "?sentry_key=" + testKey + "&sentry_version=7"},
	{name: "x-sentry-auth (python, go)", headers: map[string]string{"X-Sentry-Auth": "Sentry sentry_key=" + testKey + ", sentry_version=7, sentry_client=sentry.python/2.68.0"}},
	{name: "gzip label", query: "?sentry_key=" + testKey, headers: map[string]string{"Content-Encoding": "gzip"}},
	{name: "br label", query: "?sentry_key=" + testKey, headers: map[string]string{"Content-Encoding": "br"}},
	{name: "zstd label", query: "?sentry_key=" + testKey, headers: map[string]string{"Content-Encoding": "zstd"}},
	{name: "basic auth, text/plain", headers: map[string]string{
		"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(testKey+":")),
		"Content-Type":  "text/plain;charset=UTF-8",
	}},
	{name: "no auth (the envelope dsn may carry it)"},
	{name: "disagreeing auth", query: "?sentry_key=" + wrongKey, headers: map[string]string{"X-Sentry-Auth": "Sentry sentry_key=" + testKey}},
}

// FuzzReceiverHTTP posts arbitrary bodies under each request variant to a
// running receiver. Whatever the input, the receiver answers over HTTP (a
// handler panic would drop the connection and fail the request), and never
// with a 5xx: the downstream here always accepts, so the only 5xx the
// receiver may send (503 from a refusing pipeline) cannot happen either.
func FuzzReceiverHTTP(f *testing.F) {
	oneChunk := envelopeOf(`{}`, chunkItem(validChunk))
	seeds := [][]byte{
		oneChunk,
		envelopeOf(`{"event_id":"a2c6f3cc518c44719ee95a36f07cda36","dsn":"https://`+testKey+`@o1.ingest.example.com/42"}`,
			sizedItem("transaction", transactionEvent), sizedItem("profile", validV1), chunkItem(validChunk)),
		envelopeOf(`{}`, sizedItem("profile_chunk", chunk(chunkParts{stacks: `[[0,1],[-1,9]]`}))),
		[]byte("{}\n{\"type\":\"profile_chunk\",\"length\":4294967296}\n{}"),
		[]byte("{}\n{\"type\":\"attachment\"}\n\n{\"type\":\"profile\"}\n{\"version\":\"1\"}"),
		compresstest.Bytes(f, "gzip", oneChunk),
		compresstest.Bytes(f, "br", oneChunk),
		compresstest.Bytes(f, "zstd", oneChunk),
		{},
	}
	for _, s := range seeds {
		for v := range fuzzRequestVariants {
			f.Add(s, uint8(v))
		}
	}

	sink := new(consumertest.ProfilesSink)
	rut := startReceiver(f, sink, func(c *sentryprofilereceiver.Config) {
		// Small limits let the fuzzer reach every size branch with small
		// inputs.
		c.ServerConfig.MaxRequestBodySize = 1 << 20
		c.MaxProfileItemSize = 256 << 10
		c.MaxItemsPerEnvelope = 50
	})
	// One connection per request, and every goroutine of a request gone
	// before the next: the coverage the fuzzer sees then belongs to one
	// input, not to a connection left over from the last one.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

	f.Fuzz(func(t *testing.T, body []byte, variant uint8) {
		idle := runtime.NumGoroutine()
		v := fuzzRequestVariants[int(variant)%len(fuzzRequestVariants)]
		req, err := http.NewRequest(http.MethodPost, rut.url+"/api/"+testProject+"/envelope/"+v.query, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, val := range v.headers {
			req.Header.Set(k, val)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: no HTTP answer (handler panic or hang?): %v", v.name, err)
		}
		answer, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: reading the answer: %v", v.name, err)
		}
		if resp.StatusCode >= 500 {
			t.Fatalf("%s: status %d for a body of %d bytes: %s", v.name, resp.StatusCode, len(body), answer)
		}
		if bytes.Contains(answer, []byte(testKey)) || bytes.Contains(answer, []byte(wrongKey)) {
			t.Fatalf("%s: the answer echoes a key: %s", v.name, answer)
		}
		// The sink's data is not needed; dropping it keeps a long campaign's
		// memory flat.
		sink.Reset()
		waitForGoroutines(t, idle)
	})
}

// waitForGoroutines waits until no more than n goroutines run: the request's
// server and client goroutines have ended. One that never ends is a leak.
func waitForGoroutines(t *testing.T, n int) {
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines still run after the request, %d before it:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Microsecond)
	}
}
