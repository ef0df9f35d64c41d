package kubernetes

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// collectorConfig is what the manifests must agree with in a collector
// configuration: the addresses it listens on, the timeouts that bound its
// shutdown, the spool's directory and the environment it reads.
type collectorConfig struct {
	Extensions struct {
		HealthCheck struct {
			Endpoint string `json:"endpoint"`
		} `json:"health_check"`
		FileStorage *struct {
			Directory string `json:"directory"`
		} `json:"file_storage"`
	} `json:"extensions"`
	Receivers struct {
		Sentry struct {
			Endpoint string `json:"endpoint"`
			Links    struct {
				Wait string `json:"wait"`
			} `json:"links"`
			Forward *struct {
				Timeout string `json:"timeout"`
				Storage string `json:"storage"`
			} `json:"forward"`
		} `json:"sentryprofile"`
	} `json:"receivers"`
	Processors struct {
		MemoryLimiter *struct {
			LimitPercentage      int `json:"limit_percentage"`
			SpikeLimitPercentage int `json:"spike_limit_percentage"`
		} `json:"memory_limiter"`
	} `json:"processors"`
	Exporters map[string]struct {
		Timeout string `json:"timeout"`
	} `json:"exporters"`
	Service struct {
		Telemetry struct {
			Metrics struct {
				Readers []struct {
					Pull struct {
						Exporter struct {
							Prometheus struct {
								Host string `json:"host"`
								Port int    `json:"port"`
							} `json:"prometheus"`
						} `json:"exporter"`
					} `json:"pull"`
				} `json:"readers"`
			} `json:"metrics"`
		} `json:"telemetry"`
	} `json:"service"`

	envVars []string // ${env:NAME} references, in order of appearance
}

var envReference = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

func parseCollectorConfig(text string) (*collectorConfig, error) {
	var c collectorConfig
	if err := yaml.Unmarshal([]byte(text), &c); err != nil {
		return nil, fmt.Errorf("collector configuration: %w", err)
	}
	for _, m := range envReference.FindAllStringSubmatch(text, -1) {
		if m[2] == "" { // a default makes the variable optional
			c.envVars = append(c.envVars, m[1])
		}
	}
	return &c, nil
}

// port returns the port of a host:port endpoint, failing on a host other
// than every interface (a pod must accept traffic from its Service).
func listenPort(endpoint string) (int, error) {
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return 0, fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	if host != "0.0.0.0" && host != "" {
		return 0, fmt.Errorf("endpoint %q listens on %s only, not on the pod's address", endpoint, host)
	}
	return strconv.Atoi(port)
}

// shutdownBound is the longest the collector can take to stop after
// SIGTERM with this configuration: the receiver translates the chunks it
// holds (links::wait) while the spool finishes the delivery in flight
// (forward::timeout); then the exporters send what they have (their
// timeout).
func (c *collectorConfig) shutdownBound() (time.Duration, error) {
	hold, err := durationOr(c.Receivers.Sentry.Links.Wait, 5*time.Second)
	if err != nil {
		return 0, fmt.Errorf("links::wait: %w", err)
	}
	receiver := hold
	if f := c.Receivers.Sentry.Forward; f != nil {
		fwd, err := durationOr(f.Timeout, 30*time.Second)
		if err != nil {
			return 0, fmt.Errorf("forward::timeout: %w", err)
		}
		receiver = max(receiver, fwd)
	}
	var exporters time.Duration
	for name, e := range c.Exporters {
		d, err := durationOr(e.Timeout, 30*time.Second)
		if err != nil {
			return 0, fmt.Errorf("exporter %s timeout: %w", name, err)
		}
		exporters = max(exporters, d)
	}
	return receiver + exporters, nil
}

func durationOr(s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	return time.ParseDuration(s)
}

// parseGoMemLimit reads a GOMEMLIMIT value: a byte count with an optional
// B, KiB, MiB, GiB or TiB suffix, as the Go runtime accepts it.
func parseGoMemLimit(v string) (int64, error) {
	units := []struct {
		suffix string
		scale  int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			n, err := strconv.ParseInt(num, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("GOMEMLIMIT %q: %w", v, err)
			}
			return n * u.scale, nil
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("GOMEMLIMIT %q: %w", v, err)
	}
	return n, nil
}
