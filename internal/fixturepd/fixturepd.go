// Package fixturepd turns the shared Sentry fixtures into pdata the way the
// receiver does by default (decode, normalize, lenient checks, translate),
// for tests that look at the receiver's output from a consumer's side.
package fixturepd // import "github.com/sentryprofile/otelcol-sentryprofile/internal/fixturepd"

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// Readable are the shared fixtures whose every sample the receiver keeps:
// sample-format payloads from Sentry's repositories and envelopes captured
// from sentry-python.
var Readable = []string{
	"relay__relay-profiling_tests_fixtures_sample_v1_valid.json",
	"relay__relay-profiling_tests_fixtures_sample_v2_valid.json",
	"vroom__test_data__node.json",
	"vroomrs__tests_fixtures__sample_v2_valid_android.json",
	"vroomrs__tests_fixtures__sample_v2_valid_cocoa.json",
	"sentry__fixtures_profiles_valid_js_profile.json",
	"sentry-python-2.68.0__captured_http__v1_profile_with_transaction_1.envelope",
	"sentry-python-2.68.0__captured_http__v2_profile_chunk_1.envelope",
	"sentry-python-2.68.0__captured_http__v2_profile_chunk_2.envelope",
}

// Fixture is one fixture's translation.
type Fixture struct {
	Name     string
	Profiles pprofile.Profiles
	// Samples are the Sentry samples translated (timestamps in Profiles).
	Samples int
}

// Translate translates the named fixtures (skipping the test when the
// shared folder is absent) with opts.
func Translate(tb testing.TB, opts profilesin.ReceiveOptions, names ...string) []Fixture {
	tb.Helper()
	out := make([]Fixture, 0, len(names))
	for _, name := range names {
		data := fixtures.Read(tb, name)
		var payloads [][]byte
		if strings.HasSuffix(name, ".envelope") {
			var err error
			if payloads, err = profileItems(data); err != nil {
				tb.Fatalf("%s: %v", name, err)
			}
		} else {
			payloads = [][]byte{data}
		}
		b := profilesin.NewProfilesBuilder(opts)
		for i, payload := range payloads {
			p, err := sentry.DecodeProfile(payload)
			if err != nil {
				tb.Fatalf("%s item %d: %v", filepath.Base(name), i, err)
			}
			sentry.Normalize(p)
			if _, err := sentry.Check(p, sentry.DefaultLimits(), sentry.ModeLenient); err != nil {
				tb.Fatalf("%s item %d: %v", filepath.Base(name), i, err)
			}
			b.Add(profilesin.DecodedProfile{Profile: p, Payload: payload})
		}
		n := b.SampleCount()
		out = append(out, Fixture{Name: name, Profiles: b.Profiles(), Samples: n})
	}
	return out
}

// profileItems returns the payloads of an envelope's profile items.
func profileItems(data []byte) ([][]byte, error) {
	r := envelope.NewReader(bytes.NewReader(data), envelope.Limits{})
	if _, err := r.Header(); err != nil {
		return nil, err
	}
	var out [][]byte
	for {
		item, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch item.Header.Type {
		case "profile", "profile_chunk":
			out = append(out, bytes.Clone(item.Payload))
		}
	}
}
