package sentryprofilereceiver

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadatatest"
)

// startPacedReceiver starts a receiver with public_keys [testKey] (or none)
// whose bodies are paced by pace instead of the defaults, so that a test
// sees slow clients cut off within seconds.
func startPacedReceiver(t *testing.T, publicKeys bool, pace pacing) *testReceiver {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
	cfg.Links.Wait = 0
	if publicKeys {
		cfg.PublicKeys = []configopaque.String{testKey}
	}
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := metadatatest.NewSettings(tel)
	set.Logger = zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel))
	r, err := NewFactory().CreateProfiles(context.Background(), set, cfg, new(consumertest.ProfilesSink))
	require.NoError(t, err)
	rcvr := r.(*handle).shared.inner
	pace.limit = cfg.ServerConfig.ReadTimeout
	rcvr.handler.pace = pace // before Start, which wraps the server's handler with it
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	return &testReceiver{url: "http://" + rcvr.listener.Addr().String(), telemetry: tel, rcvr: rcvr}
}

// slowClient opens a TCP connection and writes head (a request's line,
// headers and whatever of its body it sends), then nothing more.
func slowClient(t *testing.T, addr, head string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = conn.Write([]byte(head))
	require.NoError(t, err)
	return conn
}

// TestSlowClientsHoldNoSlot opens more slow connections than there are
// slots (max_concurrent_envelopes, 16), each sending a request's headers and
// then nothing, and checks that a correct-key envelope and /store/ request
// are answered at once: on main every slow envelope request held a slot
// until read_timeout (2 min), and the good requests waited for it. Only a
// request whose key is accepted takes a slot, and then its body must keep
// the pace (here: within 2 s), so with any key accepted the good requests
// wait at most that long.
func TestSlowClientsHoldNoSlot(t *testing.T) {
	const (
		slow     = 20
		grace    = 2 * time.Second
		wrongKey = "ffffffffffffffffffffffffffffffff"
		// dsnOnly is how a tunnel posts: no key outside the body.
		dsnOnly = "POST /api/42/envelope/ HTTP/1.1\r\nHost: collector\r\nContent-Length: 100000\r\n\r\n"
	)
	tests := []struct {
		name       string
		publicKeys bool
		head       string
		// wantSlow is what a slow client is answered.
		wantSlow int
		// wantWait is whether the good requests wait for the slow ones'
		// slots, which their pace frees.
		wantWait bool
	}{
		{name: "wrong key in X-Sentry-Auth, no body", publicKeys: true,
			head:     "POST /api/42/envelope/ HTTP/1.1\r\nHost: collector\r\nX-Sentry-Auth: Sentry sentry_key=" + wrongKey + "\r\nContent-Length: 100000\r\n\r\n",
			wantSlow: http.StatusForbidden},
		{name: "wrong key in the query, no body", publicKeys: true,
			head:     "POST /api/42/envelope/?sentry_key=" + wrongKey + "&sentry_version=7 HTTP/1.1\r\nHost: collector\r\nContent-Length: 100000\r\n\r\n",
			wantSlow: http.StatusForbidden},
		{name: "wrong key to /store/, no body", publicKeys: true,
			head:     "POST /api/42/store/ HTTP/1.1\r\nHost: collector\r\nX-Sentry-Auth: Sentry sentry_key=" + wrongKey + "\r\nContent-Length: 100000\r\n\r\n",
			wantSlow: http.StatusForbidden},
		{name: "no key outside the body, no body", publicKeys: true, head: dsnOnly, wantSlow: http.StatusRequestTimeout},
		{name: "wrong key in the dsn, header line never ends", publicKeys: true,
			head: dsnOnly + `{"dsn":"http://` + wrongKey + `@collector/42"`, wantSlow: http.StatusRequestTimeout},
		{name: "no key at all, chunked body never sent", publicKeys: true,
			head:     "POST /api/42/envelope/ HTTP/1.1\r\nHost: collector\r\nTransfer-Encoding: chunked\r\n\r\n",
			wantSlow: http.StatusRequestTimeout},
		// public_keys empty: any key is accepted, so these take slots; the
		// pace bounds how long.
		{name: "any key accepted, no body", publicKeys: false,
			head:     "POST /api/42/envelope/?sentry_key=" + wrongKey + " HTTP/1.1\r\nHost: collector\r\nContent-Length: 100000\r\n\r\n",
			wantSlow: http.StatusRequestTimeout, wantWait: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := startPacedReceiver(t, tt.publicKeys, pacing{grace: grace, minRate: bodyMinRate})
			addr := strings.TrimPrefix(tr.url, "http://")
			conns := make([]net.Conn, slow)
			for i := range conns {
				conns[i] = slowClient(t, addr, tt.head)
			}
			time.Sleep(300 * time.Millisecond) // the slow requests reach the handler

			client := &http.Client{Timeout: 10 * time.Second}
			start := time.Now()
			type answer struct {
				what   string
				status int
				err    error
			}
			answers := make(chan answer, 2)
			for _, req := range []struct{ what, path string }{
				{"envelope", "/api/42/envelope/?sentry_key=" + testKey + "&sentry_version=7"},
				{"store", "/api/42/store/?sentry_key=" + testKey + "&sentry_version=7"},
			} {
				body := envelopeOf(eventHeader, chunkItem(chunkPayload))
				if req.what == "store" {
					body = []byte(eventPayload)
				}
				go func() {
					r, err := http.NewRequestWithContext(context.Background(), http.MethodPost, tr.url+req.path, strings.NewReader(string(body)))
					if err != nil {
						answers <- answer{what: req.what, err: err}
						return
					}
					resp, err := client.Do(r)
					if err != nil {
						answers <- answer{what: req.what, err: err}
						return
					}
					_ = resp.Body.Close()
					answers <- answer{what: req.what, status: resp.StatusCode}
				}()
			}
			for range 2 {
				a := <-answers
				require.NoError(t, a.err, "%s request", a.what)
				assert.Equal(t, http.StatusOK, a.status, "%s request", a.what)
			}
			elapsed := time.Since(start)
			t.Logf("correct-key envelope and /store/ answered in %s with %d slow clients connected", elapsed, slow)
			if tt.wantWait {
				assert.Less(t, elapsed, grace+3*time.Second, "the slow clients' pace frees their slots")
			} else {
				assert.Less(t, elapsed, grace, "the slow clients hold no slot")
			}

			for i, conn := range conns {
				require.NoError(t, conn.SetReadDeadline(time.Now().Add(2*grace+3*time.Second)))
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				require.NoError(t, err, "slow client %d gets an answer", i)
				_ = resp.Body.Close()
				assert.Equal(t, tt.wantSlow, resp.StatusCode, "slow client %d", i)
			}
		})
	}
}

// TestPacedBodyKeepsPace: a request that sends its body at the minimum
// rate or faster is read whole however long it takes; one that falls
// behind is cut off with 408.
func TestPacedBodyKeepsPace(t *testing.T) {
	const grace = time.Second
	tests := []struct {
		name       string
		chunk      int           // bytes written at a time
		every      time.Duration // between writes
		chunks     int
		wantStatus int
	}{
		// 4 KiB every 100 ms (40 KiB/s) for 3 s: past the grace, above
		// the minimum rate.
		{name: "steady above the minimum rate", chunk: 4 << 10, every: 100 * time.Millisecond, chunks: 30, wantStatus: http.StatusOK},
		// 64 bytes every half second: far below the minimum rate.
		{name: "trickle", chunk: 64, every: 500 * time.Millisecond, chunks: 40, wantStatus: http.StatusRequestTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := startPacedReceiver(t, true, pacing{grace: grace, minRate: 16 << 10})
			// A chunk item padded with JSON whitespace to the body's size.
			size := tt.chunk * tt.chunks
			body := envelopeOf(eventHeader, chunkItem(chunkPayload))
			body = append(body[:len(body)-1], []byte(strings.Repeat(" ", size-len(body))+"\n")...)
			conn := slowClient(t, strings.TrimPrefix(tr.url, "http://"),
				"POST /api/42/envelope/?sentry_key="+testKey+" HTTP/1.1\r\nHost: collector\r\nContent-Length: "+itoa(len(body))+"\r\n\r\n")
			done := make(chan struct{})
			t.Cleanup(func() { close(done) })
			go func() {
				for off := 0; off < len(body); off += tt.chunk {
					if _, err := conn.Write(body[off:min(off+tt.chunk, len(body))]); err != nil {
						return // cut off
					}
					select {
					case <-done:
						return
					case <-time.After(tt.every):
					}
				}
			}()
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err)
			_ = resp.Body.Close()
			assert.Equal(t, tt.wantStatus, resp.StatusCode)
		})
	}
}

// TestEnvelopeHeaderAuthBound: with the key only in the envelope's dsn, the
// header line must fit in maxAuthHeaderBytes; a key outside the body lifts
// that bound to the envelope reader's.
func TestEnvelopeHeaderAuthBound(t *testing.T) {
	dsnHeader := func(size int) string {
		h := `{"dsn":"http://` + testKey + `@localhost/42","pad":"`
		return h + strings.Repeat("x", size-len(h)-2) + `"}`
	}
	tests := []struct {
		name       string
		header     string
		query      string
		wantStatus int
	}{
		{name: "dsn only, header at the bound", header: dsnHeader(maxAuthHeaderBytes - 1), wantStatus: http.StatusOK},
		{name: "dsn only, header over the bound", header: dsnHeader(maxAuthHeaderBytes + 1), wantStatus: http.StatusRequestEntityTooLarge},
		{name: "key in the query, long header", header: dsnHeader(maxAuthHeaderBytes + 1),
			query: "?sentry_key=" + testKey, wantStatus: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := startReceiver(t, nil, nil)
			body := envelopeOf(tt.header, chunkItem(chunkPayload))
			resp := do(t, newRequest(t, http.MethodPost, tr.url+"/api/42/envelope/"+tt.query, body, nil))
			assert.Equal(t, tt.wantStatus, resp.status, resp.body)
		})
	}
}

func TestReadEnvelopeHead(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		limit   int
		want    string
		wantErr error
	}{
		{name: "line and more", body: "{}\n{\"type\":\"event\"}\n{}", limit: 64, want: "{}\n"},
		{name: "blank lines first", body: "\n \n{}\nrest", limit: 64, want: "\n \n{}\n"},
		{name: "no newline", body: "{}", limit: 64, want: "{}"},
		{name: "empty", body: "", limit: 64, want: ""},
		{name: "too long", body: strings.Repeat("x", 65), limit: 64, wantErr: errAuthHeaderTooLarge},
		{name: "newline at the bound", body: strings.Repeat("x", 63) + "\n" + strings.Repeat("y", 100), limit: 64,
			want: strings.Repeat("x", 63) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte a read: the head is found however the body arrives.
			got, err := readEnvelopeHead(&oneByteReader{r: bytes.NewReader([]byte(tt.body))}, tt.limit)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

type oneByteReader struct{ r *bytes.Reader }

func (o *oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}
