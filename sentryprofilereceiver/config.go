package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/confignet"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/itemrules"
)

const (
	defaultEndpoint = "localhost:8000"

	// Relay's limit for a whole envelope after decompression; SDKs never
	// send more, so a larger body is not a Sentry client.
	defaultMaxRequestBodySize = 200 << 20
	// Relay's limit for one profile item.
	defaultMaxProfileItemSize = itemrules.MaxProfileItemBytes
	// A generous bound: an SDK envelope holds a handful of items.
	defaultMaxItemsPerEnvelope = 1000
	// What Sentry SDKs assume for a 429 that carries no header.
	defaultRetryAfter = 60 * time.Second
	// Envelopes read and translated at once. Each may hold up to
	// max_request_body_size before the pipeline (and memory_limiter) sees
	// it, so this is what bounds the receiver's own memory.
	defaultMaxConcurrentEnvelopes = 16
	// Long enough for a 50 MiB item over a slow mobile link, short enough
	// that a client trickling its body cannot hold a connection for ever.
	defaultReadTimeout = 2 * time.Minute
)

// Validation names a set of rules a profile item must pass to be kept.
type Validation string

const (
	// ValidationLenient drops an item only when its samples cannot be read
	// (unparseable JSON, no samples, a stack or frame index out of range,
	// an unsupported version or format). The Relay rules it breaks besides
	// (metadata, transaction, duration) are counted as warnings.
	ValidationLenient Validation = "lenient"
	// ValidationRelay drops what Sentry's Relay drops, with its reason.
	ValidationRelay Validation = "relay"
)

// Config is the configuration of the sentryprofile receiver.
type Config struct {
	// ServerConfig is named rather than embedded: its Unmarshal method would
	// otherwise be promoted to Config and decode only the HTTP keys.
	ServerConfig confighttp.ServerConfig `mapstructure:",squash"`

	// PublicKeys are the DSN public keys (`sentry_key`) accepted. Empty
	// accepts any key; a request must still carry one.
	PublicKeys []configopaque.String `mapstructure:"public_keys"`

	// Projects are the numeric project ids accepted in the URL path. Empty
	// accepts any project. Leading zeros do not change a project id: 007
	// and 7 are the same project, as in the URL.
	Projects []string `mapstructure:"projects"`

	// ServiceName, when set, is the `service.name` of every profile received.
	// Empty lets the translator derive it from the payload.
	ServiceName string `mapstructure:"service_name"`

	// IncludeOriginalPayload attaches each item's original JSON to its
	// profile, for consumers that need Sentry's own representation.
	IncludeOriginalPayload bool `mapstructure:"include_original_payload"`

	// MaxItemsPerEnvelope bounds the items read from one envelope.
	MaxItemsPerEnvelope int `mapstructure:"max_items_per_envelope"`

	// MaxProfileItemSize bounds one profile item's payload in bytes; a larger
	// item is dropped as profiling_exceed_size_limit without being buffered.
	MaxProfileItemSize int64 `mapstructure:"max_profile_item_size"`

	// RetryAfter is what a 429 asks the SDK to wait when the pipeline refuses
	// data with a retryable error.
	RetryAfter time.Duration `mapstructure:"retry_after"`

	// MaxConcurrentEnvelopes bounds the envelopes read and translated at
	// once; further requests wait (their bodies unread) for a slot.
	MaxConcurrentEnvelopes int `mapstructure:"max_concurrent_envelopes"`

	// IncludeUserData copies a transaction's "user" and "request" contexts
	// (user id, email, name, IP address, URL, request headers including
	// cookies) onto its segment span in the traces signal. Off by default:
	// they are personal data, and Sentry scrubs them server-side.
	IncludeUserData bool `mapstructure:"include_user_data"`

	// GroupSamples writes the samples of one stack, thread and span as one
	// OTLP Sample of timestamps (a count), instead of one Sample per Sentry
	// sample worth its wall time (until the thread's next sample): about
	// half the size and translation cost, but Grafana Pyroscope then shows
	// counts, not time.
	GroupSamples bool `mapstructure:"group_samples"`

	// Validation chooses which of Relay's rules drop a profile item.
	Validation Validation `mapstructure:"validation"`

	// Links links the samples of continuous-profiling chunks to the spans
	// they ran under.
	Links LinksConfig `mapstructure:"links"`

	// Forward, when set, makes the receiver a transparent proxy to an
	// upstream Sentry (its endpoint is the base URL, e.g.
	// https://o123.ingest.us.sentry.io): every request under /api/ goes
	// there with its original body and auth, and the SDK gets the
	// upstream's answer. Envelopes still feed the pipelines.
	// With forward::storage, requests are spooled and answered 200.
	Forward configoptional.Optional[ForwardConfig] `mapstructure:"forward"`
	// ForwardProfiles sends profile and profile_chunk items upstream too;
	// false strips them from what is forwarded (the envelope is then
	// re-serialized, every other item byte for byte).
	ForwardProfiles bool `mapstructure:"forward_profiles"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// LinksConfig tunes how V2 chunk samples get their span links: from an
// in-memory index of the spans (transaction and span items) each profiler's
// SDK sent recently.
type LinksConfig struct {
	// Enabled keeps the span index and links chunk samples to it.
	Enabled bool `mapstructure:"enabled"`
	// Wait holds each chunk this long before translating it, for the spans
	// it covers to arrive: SDKs often post a chunk before the transaction
	// or spans it overlaps, and a span still running when its chunk is
	// sent arrives when it ends. 0 translates every chunk at once with the
	// spans known then. A held chunk has been answered 200: a crash loses
	// the chunks held at that moment.
	Wait time.Duration `mapstructure:"wait"`
	// MaxHeldChunks and MaxHeldBytes bound the chunks held (their JSON
	// bytes); when the hold is full a chunk is translated at once.
	MaxHeldChunks int   `mapstructure:"max_held_chunks"`
	MaxHeldBytes  int64 `mapstructure:"max_held_bytes"`
	// SpanTTL is how long a span stays in the index after it arrived; it
	// must cover a chunk's length (60 s for Sentry SDKs) plus the wait.
	SpanTTL time.Duration `mapstructure:"span_ttl"`
	// MaxSpans bounds the index across profilers, MaxSpansPerProfiler the
	// spans of one profiler (its oldest go first), MaxProfilers the
	// profilers (the least recently seen go first).
	MaxSpans            int `mapstructure:"max_spans"`
	MaxSpansPerProfiler int `mapstructure:"max_spans_per_profiler"`
	MaxProfilers        int `mapstructure:"max_profilers"`
}

var (
	_ component.Config    = (*Config)(nil)
	_ confmap.Unmarshaler = (*Config)(nil)
)

// Unmarshal accepts project ids written as YAML numbers (`projects: [42]`),
// as they appear in a DSN, besides strings. It also refuses unknown keys,
// which confmap lets through once a squashed field decodes itself: a
// misspelt `public_keys` would otherwise silently accept every key.
func (cfg *Config) Unmarshal(conf *confmap.Conf) error {
	raw := conf.ToStringMap()
	if err := refuseUnknownKeys(raw); err != nil {
		return err
	}
	if ids, ok := raw["projects"].([]any); ok {
		raw["projects"] = projectIDsAsText(ids)
	}
	// plain has Config's fields without this method, so decoding it does not
	// come back here; the squashed ServerConfig still decodes itself.
	type plain Config
	return confmap.NewFromStringMap(raw).Unmarshal((*plain)(cfg))
}

// refuseUnknownKeys names the top-level keys Config does not have.
func refuseUnknownKeys(raw map[string]any) error {
	known := make(map[string]bool)
	collectKeys(reflect.TypeFor[Config](), known)
	var unknown []string
	for k := range raw {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("unknown configuration keys %q", unknown)
}

// projectIDsAsText turns YAML numbers into the strings a project id is;
// strings, and anything else for the decoder to refuse, stay as they are.
func projectIDsAsText(ids []any) []any {
	text := make([]any, len(ids))
	for i, id := range ids {
		switch id.(type) {
		case int, int64, uint64:
			text[i] = fmt.Sprint(id)
		default:
			text[i] = id
		}
	}
	return text
}

// Validate reports every configuration problem at once, naming the key.
func (cfg *Config) Validate() error {
	var errs []error
	if err := validateEndpoint(cfg.ServerConfig.NetAddr); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, cfg.validateLimits()...)
	if cfg.RetryAfter < time.Second {
		errs = append(errs, fmt.Errorf("retry_after must be at least 1s (Retry-After is whole seconds), got %s", cfg.RetryAfter))
	}
	if cfg.Validation != ValidationLenient && cfg.Validation != ValidationRelay {
		errs = append(errs, fmt.Errorf("validation must be %q or %q, got %q", ValidationLenient, ValidationRelay, cfg.Validation))
	}
	errs = append(errs, cfg.Links.validate()...)
	if fwd := cfg.Forward.Get(); fwd != nil {
		if err := validateUpstream(fwd.ClientConfig.Endpoint); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, cfg.validateProjects()...)
	return errors.Join(append(errs, cfg.validatePublicKeys()...)...)
}

// validateLimits checks the sizes and counts that bound a request.
func (cfg *Config) validateLimits() []error {
	var errs []error
	bodyLimit := cfg.ServerConfig.MaxRequestBodySize
	if bodyLimit <= 0 {
		errs = append(errs, fmt.Errorf("max_request_body_size must be positive, got %d", bodyLimit))
	}
	if err := validateItemSize(cfg.MaxProfileItemSize, bodyLimit); err != nil {
		errs = append(errs, err)
	}
	if cfg.MaxItemsPerEnvelope <= 0 {
		errs = append(errs, fmt.Errorf("max_items_per_envelope must be positive, got %d", cfg.MaxItemsPerEnvelope))
	}
	if cfg.MaxConcurrentEnvelopes <= 0 {
		errs = append(errs, fmt.Errorf("max_concurrent_envelopes must be positive, got %d", cfg.MaxConcurrentEnvelopes))
	}
	return errs
}

// validateItemSize requires a positive item size that a body within
// bodyLimit can carry.
func validateItemSize(itemSize, bodyLimit int64) error {
	if itemSize <= 0 {
		return fmt.Errorf("max_profile_item_size must be positive, got %d", itemSize)
	}
	if bodyLimit > 0 && itemSize > bodyLimit {
		return fmt.Errorf("max_profile_item_size (%d) exceeds max_request_body_size (%d): no envelope could carry such an item; raise max_request_body_size too",
			itemSize, bodyLimit)
	}
	return nil
}

func (cfg *Config) validateProjects() []error {
	var errs []error
	for i, p := range cfg.Projects {
		if _, ok := sentryhttp.CanonicalProjectID(p); !ok {
			errs = append(errs, fmt.Errorf("projects[%d] = %q: a Sentry project id is a positive decimal number", i, p))
		}
	}
	return errs
}

// validatePublicKeys never prints a key's value: treat it like the secret
// it often is in practice (anyone holding it can send data).
func (cfg *Config) validatePublicKeys() []error {
	var errs []error
	for i, k := range cfg.PublicKeys {
		switch {
		case k == "":
			errs = append(errs, fmt.Errorf("public_keys[%d] is empty; remove it or set the DSN's public key", i))
		case strings.IndexFunc(string(k), invalidKeyRune) >= 0:
			errs = append(errs, fmt.Errorf("public_keys[%d] contains whitespace, a comma or a quote; no SDK can send such a key", i))
		}
	}
	return errs
}

// validateUpstream accepts an absolute http(s) URL, with a base path for a
// Sentry served under a prefix (DSN https://key@host/sentry/42 → endpoint
// https://host/sentry): request paths are appended to it as they come.
func validateUpstream(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("forward::endpoint %q: %w", endpoint, err)
	}
	if problem := upstreamProblem(u); problem != "" {
		return fmt.Errorf("forward::endpoint %q %s", endpoint, problem)
	}
	return nil
}

// upstreamProblem says what keeps u from being an upstream's base URL.
func upstreamProblem(u *url.URL) string {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an http or https URL"
	case u.Host == "":
		return "has no host"
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return "must be the upstream's base URL (scheme, host and an optional path prefix), without query or credentials"
	case strings.Contains(u.Path, "/api/"):
		return "must be the upstream's base URL, not an API path: request paths (/api/<project>/envelope/) are appended to it"
	}
	return ""
}

func (l LinksConfig) validate() []error {
	var errs []error
	if l.Wait < 0 {
		errs = append(errs, fmt.Errorf("links::wait must not be negative, got %s", l.Wait))
	}
	if l.SpanTTL < time.Second {
		errs = append(errs, fmt.Errorf("links::span_ttl must be at least 1s, got %s", l.SpanTTL))
	} else if l.Wait >= l.SpanTTL {
		errs = append(errs, fmt.Errorf("links::wait (%s) must be shorter than links::span_ttl (%s), or the spans a held chunk waits for expire first", l.Wait, l.SpanTTL))
	}
	for _, f := range []struct {
		key string
		v   int64
	}{
		{"max_held_chunks", int64(l.MaxHeldChunks)}, {"max_held_bytes", l.MaxHeldBytes},
		{"max_spans", int64(l.MaxSpans)}, {"max_spans_per_profiler", int64(l.MaxSpansPerProfiler)},
		{"max_profilers", int64(l.MaxProfilers)},
	} {
		if f.v <= 0 {
			errs = append(errs, fmt.Errorf("links::%s must be positive, got %d", f.key, f.v))
		}
	}
	return errs
}

// collectKeys adds the mapstructure keys of t's fields, descending into
// squashed ones.
func collectKeys(t reflect.Type, keys map[string]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		if slices.Contains(strings.Split(opts, ","), "squash") {
			collectKeys(f.Type, keys)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name) // mapstructure's default
		}
		keys[name] = true
	}
}

func validateEndpoint(addr confignet.AddrConfig) error {
	if addr.Endpoint == "" {
		return errors.New("endpoint must be set, e.g. \"localhost:8000\"")
	}
	switch addr.Transport {
	case confignet.TransportTypeTCP, confignet.TransportTypeTCP4, confignet.TransportTypeTCP6:
		return validateTCPEndpoint(addr.Endpoint)
	}
	return nil
}

// validateTCPEndpoint requires host:port, the port a number or a service
// name.
func validateTCPEndpoint(endpoint string) error {
	_, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return fmt.Errorf("endpoint %q must be host:port: %w", endpoint, err)
	}
	if isServiceName(port) {
		return nil
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("endpoint %q: port %q is not a number between 0 and 65535", endpoint, port)
	}
	return nil
}

// isServiceName accepts a named port ("http"), which net.Listen resolves.
func isServiceName(port string) bool {
	return port != "" && strings.IndexFunc(port, notServiceNameRune) < 0
}

func notServiceNameRune(r rune) bool {
	return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && r != '-'
}

func invalidKeyRune(r rune) bool {
	return unicode.IsSpace(r) || r == ',' || r == '"' || r == '\''
}
