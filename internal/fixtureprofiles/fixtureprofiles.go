// Package fixtureprofiles holds the shared Sentry fixtures as the profiles
// the receiver makes of them by default (decode, normalize, lenient checks,
// translate), for tests that look at the receiver's output from a
// consumer's side.
package fixtureprofiles // import "github.com/sentryprofile/otelcol-sentryprofile/internal/fixtureprofiles"

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
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
		fixture, err := translate(name, fixtures.Read(tb, name), opts)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, fixture)
	}
	return out
}

// translate builds the profiles of one fixture's payloads.
func translate(name string, data []byte, opts profilesin.ReceiveOptions) (Fixture, error) {
	payloads, err := profilePayloads(name, data)
	if err != nil {
		return Fixture{}, fmt.Errorf("%s: %w", name, err)
	}
	b := profilesin.NewProfilesBuilder(opts)
	for i, payload := range payloads {
		p, err := decodeChecked(payload)
		if err != nil {
			return Fixture{}, fmt.Errorf("%s item %d: %w", filepath.Base(name), i, err)
		}
		b.Add(profilesin.DecodedProfile{Profile: p, Payload: payload})
	}
	n := b.SampleCount()
	return Fixture{Name: name, Profiles: b.Profiles(), Samples: n}, nil
}

// decodeChecked reads a profile as the receiver does by default.
func decodeChecked(payload []byte) (*sentry.Profile, error) {
	p, err := sentry.DecodeProfile(payload)
	if err != nil {
		return nil, err
	}
	sentry.Normalize(p)
	if _, err := sentry.Check(p, sentry.DefaultLimits(), sentry.ModeLenient); err != nil {
		return nil, err
	}
	return p, nil
}

// profilePayloads are the profile payloads of a fixture: the profile items
// of an envelope, or the whole file.
func profilePayloads(name string, data []byte) ([][]byte, error) {
	if strings.HasSuffix(name, ".envelope") {
		return profileItems(data)
	}
	return [][]byte{data}, nil
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
		if isProfileItem(item.Header.Type) {
			out = append(out, bytes.Clone(item.Payload))
		}
	}
}

func isProfileItem(itemType string) bool {
	return itemType == "profile" || itemType == "profile_chunk"
}
