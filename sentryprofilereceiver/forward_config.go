package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/confmap"
)

// Relay's own spool default (spool.envelopes.max_disk_size) is 500 MB.
const defaultSpoolMaxBytes = 500 << 20

// ForwardConfig is the `forward:` section: the upstream client, and the
// optional durable spool in front of it.
type ForwardConfig struct {
	// ClientConfig is named rather than embedded so that the client's keys
	// and the spool's are decoded apart (see Unmarshal).
	ClientConfig confighttp.ClientConfig `mapstructure:",squash"`

	// Storage names a storage extension (e.g. file_storage). With it, a
	// forwarded request is answered 200 once it is stored, and a
	// background sender delivers the stored requests in order, retrying
	// while the upstream is down or rate limits.
	Storage *component.ID `mapstructure:"storage"`

	// SpoolMaxBytes bounds the request bodies stored; when a new one does
	// not fit, the oldest are dropped (and counted).
	SpoolMaxBytes int64 `mapstructure:"spool_max_bytes"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ confmap.Unmarshaler = (*ForwardConfig)(nil)

// spoolKeys are the ForwardConfig keys that are not the HTTP client's.
var spoolKeys = []string{"storage", "spool_max_bytes"}

// movedKeepaliveKeys are the client keys collector v0.165.0 moved under
// `keepalive:` (confighttp v1.71.0); naming the new place in the error saves
// an upgrading operator a trip to the changelog.
var movedKeepaliveKeys = map[string]string{
	"idle_conn_timeout":       "keepalive::idle_conn_timeout",
	"max_idle_conns":          "keepalive::max_idle_conns",
	"max_idle_conns_per_host": "keepalive::max_idle_conns_per_host",
	"disable_keep_alives":     "keepalive::enabled: false",
}

// Unmarshal decodes the client keys into ClientConfig and the spool keys
// here. It refuses unknown keys with their names: a misspelt `storage`
// would otherwise silently answer SDKs with no spool behind, and a
// keepalive key in its pre-v0.165.0 place is told where it moved.
func (f *ForwardConfig) Unmarshal(conf *confmap.Conf) error {
	raw := conf.ToStringMap()
	if err := checkForwardKeys(raw); err != nil {
		return err
	}
	spool := make(map[string]any)
	for _, k := range spoolKeys {
		if v, ok := raw[k]; ok {
			spool[k] = v
			delete(raw, k)
		}
	}
	if err := confmap.NewFromStringMap(raw).Unmarshal(&f.ClientConfig); err != nil {
		return err
	}
	return f.unmarshalSpool(spool)
}

// checkForwardKeys refuses keys that are neither the client's nor the
// spool's, naming where a moved keepalive key went.
func checkForwardKeys(raw map[string]any) error {
	known := make(map[string]bool)
	collectKeys(reflect.TypeFor[confighttp.ClientConfig](), known)
	var unknown, moved []string
	for k := range raw {
		switch {
		case known[k] || slices.Contains(spoolKeys, k):
		case movedKeepaliveKeys[k] != "":
			moved = append(moved, fmt.Sprintf("%s is now %s", k, movedKeepaliveKeys[k]))
		default:
			unknown = append(unknown, k)
		}
	}
	if len(moved) > 0 {
		slices.Sort(moved)
		return fmt.Errorf("forward: keepalive settings moved in collector v0.165.0: %s", strings.Join(moved, "; "))
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("forward: unknown configuration keys %q", unknown)
	}
	return nil
}

// unmarshalSpool decodes the spool keys over their current values.
func (f *ForwardConfig) unmarshalSpool(spool map[string]any) error {
	s := struct {
		Storage       *component.ID `mapstructure:"storage"`
		SpoolMaxBytes int64         `mapstructure:"spool_max_bytes"`
	}{Storage: f.Storage, SpoolMaxBytes: f.SpoolMaxBytes}
	if err := confmap.NewFromStringMap(spool).Unmarshal(&s); err != nil {
		return err
	}
	f.Storage, f.SpoolMaxBytes = s.Storage, s.SpoolMaxBytes
	return nil
}

// Validate checks the spool bound. The collector validates the client
// itself, and Config.Validate the upstream URL.
func (f *ForwardConfig) Validate() error {
	if f.Storage != nil && f.SpoolMaxBytes <= 0 {
		return fmt.Errorf("forward::spool_max_bytes must be positive, got %d", f.SpoolMaxBytes)
	}
	return nil
}

// defaultForward is the `forward:` section's defaults when it is set.
func defaultForward() ForwardConfig {
	return ForwardConfig{ClientConfig: defaultForwardClient(), SpoolMaxBytes: defaultSpoolMaxBytes}
}
