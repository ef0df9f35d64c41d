package sentryprofilereceiver

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
)

func TestFactory(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, metadata.Type, f.Type())
	assert.Equal(t, component.StabilityLevelDevelopment, f.ProfilesStability())
	assert.Equal(t, component.StabilityLevelDevelopment, f.TracesStability())
	assert.Equal(t, component.StabilityLevelDevelopment, f.LogsStability())
	assert.Equal(t, component.StabilityLevelDevelopment, f.MetricsStability())
	require.NoError(t, componenttest.CheckConfigStruct(f.CreateDefaultConfig()))
}

// TestProfilesLifecycle runs a profiles receiver through the collector's
// life: created, shut down unstarted, started, fed, shut down, and a second
// instance started on the port the first released.
func TestProfilesLifecycle(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
	set := receivertest.NewNopSettings(metadata.Type)

	unstarted, err := f.CreateProfiles(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, unstarted.Shutdown(context.Background()), "Shutdown before Start")

	sink := new(consumertest.ProfilesSink)
	first, err := f.CreateProfiles(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, first.Start(context.Background(), componenttest.NewNopHost()))
	endpoint := first.(*handle).shared.inner.listener.Addr().String()
	tr := &testReceiver{url: "http://" + endpoint}
	resp := post(t, tr, envelopeOf(eventHeader, chunkItem(chunkPayload)), nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	assert.Zero(t, sampleEvents(sink), "the chunk waits links::wait for its spans")

	// The port is taken while the first receiver runs.
	busy := f.CreateDefaultConfig().(*Config)
	busy.ServerConfig.NetAddr.Endpoint = endpoint
	clash, err := f.CreateProfiles(context.Background(), set, busy, consumertest.NewNop())
	require.NoError(t, err)
	assert.ErrorContains(t, clash.Start(context.Background(), componenttest.NewNopHost()), "listen on")
	require.NoError(t, clash.Shutdown(context.Background()))

	require.NoError(t, first.Shutdown(context.Background()))
	assert.Equal(t, chunkSamples, sampleEvents(sink), "Shutdown sends the held chunk down the pipeline")
	_, err = http.Post(tr.url+"/api/42/envelope/", "", nil)
	assert.Error(t, err, "nothing listens after Shutdown")

	second, err := f.CreateProfiles(context.Background(), set, busy, sink)
	require.NoError(t, err)
	require.NoError(t, second.Start(context.Background(), componenttest.NewNopHost()), "Shutdown released the port")
	require.NoError(t, second.Shutdown(context.Background()))
}

// statusHost records the status events a component reports.
type statusHost struct {
	component.Host
	mu     sync.Mutex
	events []*componentstatus.Event
	fatal  chan struct{}
}

func (h *statusHost) Report(e *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
	if e.Status() == componentstatus.StatusFatalError {
		close(h.fatal)
	}
}

func TestListenerFailureIsFatal(t *testing.T) {
	host := &statusHost{Host: componenttest.NewNopHost(), fatal: make(chan struct{})}
	cfg := createDefaultConfig().(*Config)
	cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
	r, err := newReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
	require.NoError(t, err)
	r.router.profiles = consumertest.NewNop()
	require.NoError(t, r.Start(context.Background(), host))

	require.NoError(t, r.listener.Close()) // what a failing socket looks like to Serve
	<-host.fatal
	host.mu.Lock()
	require.Len(t, host.events, 1)
	assert.Error(t, host.events[0].Err())
	host.mu.Unlock()
	require.NoError(t, r.Shutdown(context.Background()))
}
