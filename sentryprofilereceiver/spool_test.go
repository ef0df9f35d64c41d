package sentryprofilereceiver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadatatest"
)

// The forward spool's drop reasons, as its telemetry reports them.
var (
	spoolDroppedFull        = attribute.NewSet(attribute.String("spool_drop_reason", "full"))
	spoolDroppedRejected    = attribute.NewSet(attribute.String("spool_drop_reason", "rejected"))
	spoolDroppedRateLimited = attribute.NewSet(attribute.String("spool_drop_reason", "rate_limited"))
)

// memStorage is a storage extension whose data outlives its clients, as
// file_storage's does across a collector restart.
type memStorage struct {
	component.StartFunc
	component.ShutdownFunc
	mu   sync.Mutex
	data map[string][]byte
}

func newMemStorage() *memStorage { return &memStorage{data: map[string][]byte{}} }

func (m *memStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return memClient{m}, nil
}

func (m *memStorage) keys() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.data)
}

type memClient struct{ m *memStorage }

func (c memClient) Get(ctx context.Context, key string) ([]byte, error) {
	op := storage.GetOperation(key)
	err := c.Batch(ctx, op)
	return op.Value, err
}

func (c memClient) Set(ctx context.Context, key string, value []byte) error {
	return c.Batch(ctx, storage.SetOperation(key, value))
}

func (c memClient) Delete(ctx context.Context, key string) error {
	return c.Batch(ctx, storage.DeleteOperation(key))
}

func (c memClient) Batch(_ context.Context, ops ...*storage.Operation) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	for _, op := range ops {
		switch op.Type {
		case storage.Get:
			op.Value = bytes.Clone(c.m.data[op.Key])
		case storage.Set:
			c.m.data[op.Key] = bytes.Clone(op.Value)
		case storage.Delete:
			delete(c.m.data, op.Key)
		}
	}
	return nil
}

func (memClient) Close(context.Context) error { return nil }

type storageHost struct {
	component.Host
	exts map[component.ID]component.Component
}

func (h storageHost) GetExtensions() map[component.ID]component.Component { return h.exts }

var spoolStorageID = component.MustNewID("file_storage")

// startSpooling starts a receiver forwarding to upstream through a spool
// in store; stop shuts it down (a collector restart is stop, then another
// startSpooling on the same store).
func startSpooling(t *testing.T, store component.Component, upstream string, maxBytes int64) (url string, stop func(), tel *componenttest.Telemetry) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
	cfg.Links.Wait = 0
	forwardTo(upstream)(cfg)
	id := spoolStorageID
	cfg.Forward.Get().Storage = &id
	cfg.Forward.Get().SpoolMaxBytes = maxBytes
	require.NoError(t, cfg.Validate())
	require.NoError(t, cfg.Forward.Get().Validate())
	tel = componenttest.NewTelemetry()
	set := metadatatest.NewSettings(tel)
	set.Logger = zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel))
	r, err := NewFactory().CreateProfiles(context.Background(), set, cfg, new(consumertest.ProfilesSink))
	require.NoError(t, err)
	host := storageHost{Host: componenttest.NewNopHost(), exts: map[component.ID]component.Component{id: store}}
	require.NoError(t, r.Start(context.Background(), host))
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, r.Shutdown(ctx))
			require.NoError(t, tel.Shutdown(context.Background()))
		})
	}
	t.Cleanup(stop)
	return "http://" + r.(*handle).shared.inner.listener.Addr().String(), stop, tel
}

// gate is a fake Sentry that is down (503, asking for a short wait) until
// opened, and keeps the bodies it accepted, in order.
type gate struct {
	*fakeSentry
	mu       sync.Mutex
	open     bool
	status   int // answer when open; 200 if zero
	accepted [][]byte
}

func newGate(t *testing.T) *gate {
	g := &gate{fakeSentry: newFakeSentry(t)}
	g.answer = func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.open {
			w.Header().Set("Retry-After", "0.02")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if g.status != 0 {
			w.WriteHeader(g.status)
			return
		}
		reqs := g.got()
		g.accepted = append(g.accepted, reqs[len(reqs)-1].body)
		_, _ = w.Write([]byte("{}"))
	}
	return g
}

func (g *gate) setOpen(open bool) {
	g.mu.Lock()
	g.open = open
	g.mu.Unlock()
}

func (g *gate) bodies() [][]byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([][]byte(nil), g.accepted...)
}

// storeBody is a /store/ event numbered i, so order is visible.
func storeBody(i int) []byte {
	return []byte(`{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","message":"event ` + strconv.Itoa(i) + `"}`)
}

func sendStore(t *testing.T, url string, i int) response {
	t.Helper()
	return do(t, newRequest(t, http.MethodPost, url+"/api/42/store/?sentry_key="+testKey, storeBody(i),
		map[string]string{"Content-Type": "application/json"}))
}

func TestSpoolDeliversInOrderAfterOutage(t *testing.T) {
	store := newMemStorage()
	upstream := newGate(t)
	url, _, _ := startSpooling(t, store, upstream.URL, 1<<20)

	var want [][]byte
	env := mixedEnvelope()
	for i := range 6 {
		var resp response
		if i == 3 {
			resp = post(t, &testReceiver{url: url}, env, nil)
			want = append(want, env)
		} else {
			resp = sendStore(t, url, i)
			want = append(want, storeBody(i))
		}
		require.Equal(t, http.StatusOK, resp.status, "stored, so the SDK is told it is done: %s", resp.body)
	}
	require.Eventually(t, func() bool { return len(upstream.got()) >= 3 }, 5*time.Second, 10*time.Millisecond,
		"the sender retries while the upstream is down")
	assert.Empty(t, upstream.bodies())
	upstream.setOpen(true)
	require.Eventually(t, func() bool { return len(upstream.bodies()) == len(want) }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, want, upstream.bodies(), "every request once, in the order the SDK sent them, byte for byte")
	for _, r := range upstream.got() {
		assert.Contains(t, r.query, "sentry_key="+testKey, "the auth is stored with the request")
	}
	require.Eventually(t, func() bool { return store.keys() == 1 }, 5*time.Second, 10*time.Millisecond,
		"only the index is left once everything is delivered")
}

// TestSpoolUpstreamUnderAPrefix: with a self-hosted Sentry under a path
// prefix, a stored request keeps its own path, and is delivered under the
// prefix configured when it goes.
func TestSpoolUpstreamUnderAPrefix(t *testing.T) {
	store := newMemStorage()
	upstream := newFakeSentry(t)
	url, _, _ := startSpooling(t, store, upstream.URL+"/sentry", 1<<20)
	require.Equal(t, http.StatusOK, sendStore(t, url, 0).status)
	require.Equal(t, http.StatusOK, post(t, &testReceiver{url: url}, mixedEnvelope(), nil).status)
	require.Eventually(t, func() bool { return len(upstream.got()) == 2 }, 5*time.Second, 10*time.Millisecond)
	got := upstream.got()
	assert.Equal(t, "/sentry/api/42/store/", got[0].path)
	assert.Equal(t, "/sentry/api/42/envelope/", got[1].path)
	assert.Equal(t, storeBody(0), got[0].body)
}

func TestSpoolResumesAfterRestart(t *testing.T) {
	store := newMemStorage()
	upstream := newGate(t)
	url, stop, _ := startSpooling(t, store, upstream.URL, 1<<20)
	for i := range 4 {
		require.Equal(t, http.StatusOK, sendStore(t, url, i).status)
	}
	stop() // a collector stopped with requests still spooled
	assert.Equal(t, 1+2*4, store.keys(), "the index and every request (record and stamp) are stored")
	attempts := len(upstream.got())

	upstream.setOpen(true)
	url, _, _ = startSpooling(t, store, upstream.URL, 1<<20)
	require.Equal(t, http.StatusOK, sendStore(t, url, 4).status)
	require.Eventually(t, func() bool { return len(upstream.bodies()) == 5 }, 5*time.Second, 10*time.Millisecond)
	want := [][]byte{storeBody(0), storeBody(1), storeBody(2), storeBody(3), storeBody(4)}
	assert.Equal(t, want, upstream.bodies(), "delivered once each after the restart, the old ones first")
	assert.Len(t, upstream.got(), attempts+5, "no request was sent twice once accepted")
}

func TestSpoolBounded(t *testing.T) {
	store := newMemStorage()
	upstream := newGate(t) // down for the whole test
	size := int64(len(storeBody(0)))
	url, stop, tel := startSpooling(t, store, upstream.URL, 2*size+size/2)
	for i := range 5 {
		require.Equal(t, http.StatusOK, sendStore(t, url, i).status)
	}
	// Requests are stored inside confighttp's chain: the request's span is an
	// exemplar of the spool's counters.
	metadatatest.AssertEqualReceiverSentryprofileForwardSpoolRequests(t, tel,
		[]metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	metadatatest.AssertEqualReceiverSentryprofileForwardSpoolBytes(t, tel,
		[]metricdata.DataPoint[int64]{{Value: 2 * size}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	metadatatest.AssertEqualReceiverSentryprofileForwardSpoolDropped(t, tel,
		[]metricdata.DataPoint[int64]{{Value: 3, Attributes: spoolDroppedFull}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	stop()
	// The stored layout (internal/forward/spool.go): an index, and per
	// request a record of a 4-byte header length, the JSON header and the
	// body.
	var meta struct{ Head, Tail, Bytes int64 }
	raw, _ := memClient{store}.Get(context.Background(), "spool.meta")
	require.NoError(t, json.Unmarshal(raw, &meta))
	assert.Equal(t, struct{ Head, Tail, Bytes int64 }{Head: 3, Tail: 5, Bytes: 2 * size}, meta, "the oldest went to make room")
	for seq := range 5 {
		rec, _ := memClient{store}.Get(context.Background(), "spool.r."+strconv.Itoa(seq))
		if seq < 3 {
			assert.Nil(t, rec)
			continue
		}
		require.Greater(t, len(rec), 4)
		head := int(binary.BigEndian.Uint32(rec))
		require.LessOrEqual(t, 4+head, len(rec))
		assert.Equal(t, storeBody(seq), rec[4+head:])
	}

	t.Run("a request larger than the spool is refused, the spool kept", func(t *testing.T) {
		url, _, _ := startSpooling(t, store, upstream.URL, size/2)
		resp := sendStore(t, url, 9)
		assert.Equal(t, http.StatusServiceUnavailable, resp.status)
		assert.NotEmpty(t, resp.header.Get("Retry-After"))
	})
}

func TestSpoolDropsWhatTheUpstreamRefuses(t *testing.T) {
	tests := []struct {
		name   string
		answer func(w http.ResponseWriter)
		reason attribute.Set
	}{
		{"403 is final", func(w http.ResponseWriter) { w.WriteHeader(http.StatusForbidden) }, spoolDroppedRejected},
		{"429 over a long quota", func(w http.ResponseWriter) {
			w.Header().Set("X-Sentry-Rate-Limits", "2700:error:organization:usage_exceeded")
			w.WriteHeader(http.StatusTooManyRequests)
		}, spoolDroppedRateLimited},
		{"429 over a long quota on the second header line", func(w http.ResponseWriter) {
			w.Header().Add("X-Sentry-Rate-Limits", "60:transaction:organization")
			w.Header().Add("X-Sentry-Rate-Limits", "2700:error:organization:usage_exceeded")
			w.WriteHeader(http.StatusTooManyRequests)
		}, spoolDroppedRateLimited},
		{"429 with Retry-After an HTTP date past the spool's wait", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusTooManyRequests)
		}, spoolDroppedRateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newMemStorage()
			upstream := newFakeSentry(t)
			upstream.answer = func(w http.ResponseWriter, _ *http.Request) { tt.answer(w) }
			url, _, tel := startSpooling(t, store, upstream.URL, 1<<20)
			require.Equal(t, http.StatusOK, sendStore(t, url, 0).status)
			require.Eventually(t, func() bool { return store.keys() == 1 }, 5*time.Second, 10*time.Millisecond)
			time.Sleep(50 * time.Millisecond)
			assert.Len(t, upstream.got(), 1, "not sent again")
			metadatatest.AssertEqualReceiverSentryprofileForwardSpoolDropped(t, tel,
				[]metricdata.DataPoint[int64]{{Value: 1, Attributes: tt.reason}}, metricdatatest.IgnoreTimestamp())
			metadatatest.AssertEqualReceiverSentryprofileForwardSpoolRequests(t, tel,
				[]metricdata.DataPoint[int64]{{Value: 0}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
		})
	}
}

// TestSpoolFileStorageRestart: the same restart on the real file_storage
// extension (bbolt on disk), with a binary multi-megabyte attachment.
func TestSpoolFileStorageRestart(t *testing.T) {
	dir := t.TempDir()
	startStorage := func() extension.Extension {
		f := filestorage.NewFactory()
		cfg := f.CreateDefaultConfig().(*filestorage.Config)
		cfg.Directory, cfg.Compaction.Directory = dir, dir
		ext, err := f.Create(context.Background(), extension.Settings{
			ID: spoolStorageID, TelemetrySettings: componenttest.NewNopTelemetrySettings(), BuildInfo: component.NewDefaultBuildInfo(),
		}, cfg)
		require.NoError(t, err)
		require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
		return ext
	}
	attachment := make([]byte, 3<<20)
	_, _ = rand.Read(attachment)
	upstream := newGate(t)

	ext := startStorage()
	url, stop, _ := startSpooling(t, ext, upstream.URL, 16<<20)
	require.Equal(t, http.StatusOK, sendStore(t, url, 0).status)
	resp := do(t, newRequest(t, http.MethodPost, url+"/api/42/attachment/?sentry_key="+testKey, attachment,
		map[string]string{"Content-Type": "application/octet-stream"}))
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	require.Equal(t, http.StatusOK, sendStore(t, url, 2).status)
	stop()
	require.NoError(t, ext.Shutdown(context.Background()))

	upstream.setOpen(true)
	ext = startStorage()
	t.Cleanup(func() { require.NoError(t, ext.Shutdown(context.Background())) })
	_, _, _ = startSpooling(t, ext, upstream.URL, 16<<20)
	require.Eventually(t, func() bool { return len(upstream.bodies()) == 3 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, [][]byte{storeBody(0), attachment, storeBody(2)}, upstream.bodies())
}

func TestForwardConfigUnmarshal(t *testing.T) {
	conf := confmap.NewFromStringMap(map[string]any{
		"endpoint": "127.0.0.1:0",
		"forward": map[string]any{
			"endpoint":        "https://o1.ingest.sentry.io",
			"timeout":         "5s",
			"storage":         "file_storage/spool",
			"spool_max_bytes": 1000,
		},
	})
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, conf.Unmarshal(cfg))
	fwd := cfg.Forward.Get()
	require.NotNil(t, fwd)
	assert.Equal(t, "https://o1.ingest.sentry.io", fwd.ClientConfig.Endpoint)
	assert.Equal(t, 5*time.Second, fwd.ClientConfig.Timeout)
	assert.Equal(t, component.MustNewIDWithName("file_storage", "spool"), *fwd.Storage)
	assert.Equal(t, int64(1000), fwd.SpoolMaxBytes)
	require.NoError(t, cfg.Validate())
	require.NoError(t, fwd.Validate())

	fwd.SpoolMaxBytes = 0
	assert.ErrorContains(t, fwd.Validate(), "forward::spool_max_bytes must be positive")

	bad := confmap.NewFromStringMap(map[string]any{"forward": map[string]any{"endpoint": "https://x", "storag": "file_storage"}})
	assert.Error(t, bad.Unmarshal(createDefaultConfig().(*Config)), "a misspelt key is refused")

	noSpool := confmap.NewFromStringMap(map[string]any{"forward": map[string]any{"endpoint": "https://x"}})
	cfg = createDefaultConfig().(*Config)
	require.NoError(t, noSpool.Unmarshal(cfg))
	assert.Nil(t, cfg.Forward.Get().Storage)
	assert.Equal(t, int64(defaultSpoolMaxBytes), cfg.Forward.Get().SpoolMaxBytes)
	assert.Equal(t, 30*time.Second, cfg.Forward.Get().ClientConfig.Timeout, "the client defaults stay")
}

// TestForwardKeepalive: collector v0.165.0 moved the client's keepalive
// settings under `keepalive:`. The new place is read; the old flat keys
// are refused with the key's new name.
func TestForwardKeepalive(t *testing.T) {
	conf := confmap.NewFromStringMap(map[string]any{"forward": map[string]any{
		"endpoint":  "https://x",
		"keepalive": map[string]any{"idle_conn_timeout": "7s", "max_idle_conns": 3, "max_idle_conns_per_host": 2},
	}})
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, conf.Unmarshal(cfg))
	ka := cfg.Forward.Get().ClientConfig.Keepalive.Get()
	require.NotNil(t, ka, "keepalive stays on when configured")
	assert.Equal(t, 7*time.Second, ka.IdleConnTimeout)
	assert.Equal(t, 3, ka.MaxIdleConns)
	assert.Equal(t, 2, ka.MaxIdleConnsPerHost)

	def := createDefaultConfig().(*Config)
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"forward": map[string]any{"endpoint": "https://x"}}).Unmarshal(def))
	assert.True(t, def.Forward.Get().ClientConfig.Keepalive.HasValue(), "keepalive is on by default")

	for old, moved := range movedKeepaliveKeys {
		t.Run(old, func(t *testing.T) {
			var value any = 5
			switch old {
			case "idle_conn_timeout":
				value = "5s"
			case "disable_keep_alives":
				value = true
			}
			flat := confmap.NewFromStringMap(map[string]any{"forward": map[string]any{"endpoint": "https://x", old: value}})
			err := flat.Unmarshal(createDefaultConfig().(*Config))
			require.Error(t, err)
			assert.ErrorContains(t, err, old+" is now "+moved)
		})
	}
}

func TestLoadForwardConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, "forward").String())
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, confmap.Validate(cfg))
	want := defaultForward()
	want.ClientConfig.Endpoint = "https://o123.ingest.us.sentry.io"
	want.ClientConfig.Timeout = 10 * time.Second
	storageID := component.MustNewIDWithName("file_storage", "sentry")
	want.Storage = &storageID
	want.SpoolMaxBytes = 100 << 20
	assert.Equal(t, &want, cfg.Forward.Get())
	assert.False(t, cfg.ForwardProfiles)

	sub, err = cm.Sub(component.NewIDWithName(metadata.Type, "forward_typo").String())
	require.NoError(t, err)
	assert.ErrorContains(t, sub.Unmarshal(createDefaultConfig()), "storag")
}

// TestSpoolTellsTheSDKTheRateLimits: the SDK is answered before Sentry
// sees its request, so it learns Sentry's rate limits, every entry of
// every header line, from the answers that follow.
func TestSpoolTellsTheSDKTheRateLimits(t *testing.T) {
	tests := []struct {
		name  string
		lines []string // the upstream's X-Sentry-Rate-Limits lines
		want  string   // what the SDK is told, as a pattern
	}{
		{"one line", []string{"60:transaction:organization"}, `^(59|60):transaction:organization$`},
		{"two lines", []string{"60:transaction:organization", "120:error:project:usage_exceeded"},
			`^(119|120):error:project:usage_exceeded, (59|60):transaction:organization$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			upstream := newFakeSentry(t)
			upstream.answer = func(w http.ResponseWriter, _ *http.Request) {
				w.Header()["X-Sentry-Rate-Limits"] = tt.lines
				_, _ = w.Write([]byte("{}"))
			}
			url, _, _ := startSpooling(t, newMemStorage(), upstream.URL, 1<<20)
			first := sendStore(t, url, 0)
			require.Equal(t, http.StatusOK, first.status)
			assert.Empty(t, first.header.Get("X-Sentry-Rate-Limits"), "nothing known yet")
			require.Eventually(t, func() bool { return len(upstream.got()) == 1 }, 5*time.Second, 10*time.Millisecond)
			require.Eventually(t, func() bool {
				return sendStore(t, url, 1).header.Get("X-Sentry-Rate-Limits") != ""
			}, 5*time.Second, 10*time.Millisecond)
			assert.Regexp(t, tt.want, sendStore(t, url, 2).header.Get("X-Sentry-Rate-Limits"))
		})
	}
}
