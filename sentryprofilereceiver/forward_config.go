package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"fmt"
	"reflect"
	"slices"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/confmap"
)

// Relay's own spool default (spool.envelopes.max_disk_size) is 500 MB.
const defaultSpoolMaxBytes = 500 << 20

// ForwardConfig is the `forward:` section: the upstream client, and the
// optional durable spool in front of it.
type ForwardConfig struct {
	// ClientConfig is named rather than embedded: its Unmarshal method
	// would otherwise be promoted and refuse the spool keys.
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

// Unmarshal hands the client keys to confighttp (which handles its own
// deprecated keys) and decodes the spool keys here. It refuses unknown
// keys, which confighttp's client ignores: a misspelt `storage` would
// otherwise silently answer SDKs with no spool behind.
func (f *ForwardConfig) Unmarshal(conf *confmap.Conf) error {
	raw := conf.ToStringMap()
	known := make(map[string]bool)
	collectKeys(reflect.TypeFor[confighttp.ClientConfig](), known)
	var unknown []string
	for k := range raw {
		if !known[k] && !slices.Contains(spoolKeys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("forward: unknown configuration keys %q", unknown)
	}
	spool := make(map[string]any)
	for _, k := range spoolKeys {
		if v, ok := raw[k]; ok {
			spool[k] = v
			delete(raw, k)
		}
	}
	if err := f.ClientConfig.Unmarshal(confmap.NewFromStringMap(raw)); err != nil {
		return err
	}
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
