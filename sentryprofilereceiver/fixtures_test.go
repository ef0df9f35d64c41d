package sentryprofilereceiver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadatatest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/itemrules"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/perfetto/perfettotest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// recordedRequest is a *.request_headers.json fixture: how an SDK posted the
// body stored beside it.
type recordedRequest struct {
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
}

// payloadSamples counts profile.samples in a profile payload with nothing but
// encoding/json, independently of the decoder under test.
func payloadSamples(t *testing.T, payload []byte) int {
	t.Helper()
	var p struct {
		Profile struct {
			Samples []json.RawMessage `json:"samples"`
		} `json:"profile"`
	}
	require.NoError(t, json.Unmarshal(payload, &p))
	return len(p.Profile.Samples)
}

// profileItemSamples splits an envelope with the grammar of the Sentry docs
// (length when given, else up to the newline) and returns the samples of
// every profile item.
func profileItemSamples(t *testing.T, env []byte) int {
	t.Helper()
	_, rest, _ := bytes.Cut(env, []byte("\n"))
	total := 0
	for len(bytes.TrimSpace(rest)) > 0 {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		var h struct {
			Type   string `json:"type"`
			Length *int   `json:"length"`
		}
		require.NoError(t, json.Unmarshal(line, &h), "item header %q", line)
		var payload []byte
		if h.Length != nil {
			payload, rest = after[:*h.Length], after[*h.Length:]
			rest = bytes.TrimPrefix(rest, []byte("\n"))
		} else {
			payload, rest, _ = bytes.Cut(after, []byte("\n"))
		}
		switch h.Type {
		case itemrules.ItemTypeProfile, itemrules.ItemTypeProfileChunk, itemrules.ItemTypeProfileChunkUI:
			total += payloadSamples(t, payload)
		}
	}
	return total
}

// TestFixtureEnvelopes posts every captured SDK envelope: the recorded wire
// body and headers where they exist, else the envelope as text.
func TestFixtureEnvelopes(t *testing.T) {
	paths := fixtures.Files(t, ".envelope")
	require.NotEmpty(t, paths)
	sink := new(consumertest.ProfilesSink)
	tr := startReceiver(t, sink, nil)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			sink.Reset()
			env, err := os.ReadFile(path)
			require.NoError(t, err)
			want := profileItemSamples(t, env)
			require.Positive(t, want, "a fixture envelope carries a profile")

			stem := strings.TrimSuffix(path, ".envelope")
			req := newRequest(t, http.MethodPost, tr.url+"/api/42/envelope/?sentry_key="+testKey, env, nil)
			if wire, err := os.ReadFile(stem + ".request.gz"); err == nil {
				var rec recordedRequest
				raw, err := os.ReadFile(stem + ".request_headers.json")
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(raw, &rec))
				req = newRequest(t, http.MethodPost, tr.url+rec.Path, wire, nil)
				for k, v := range rec.Headers {
					switch k {
					case "Host", "Content-Length": // the client sets both for this connection
					default:
						req.Header.Set(k, v)
					}
				}
			}
			resp := do(t, req)
			require.Equal(t, http.StatusOK, resp.status, "body: %s", resp.body)
			assert.Equal(t, want, sampleEvents(sink))
			require.Len(t, sink.AllProfiles(), 1, "one Profiles per envelope")
		})
	}
}

// TestFixtureProfiles wraps each sample-format profile fixture in the
// envelope its SDK would send: V1 as a `profile` item without a transaction
// item, V2 as a `profile_chunk` item with its platform header, and posts it
// under both validation modes. Lenient mode (the default) must deliver every
// sample of every fixture whose samples can be read, counting the Relay rules
// it breaks as warnings; relay mode drops what Relay drops, with its reason.
func TestFixtureProfiles(t *testing.T) {
	tests := []struct {
		file    string
		relay   sentry.Reason // what validation: relay drops the item with; empty: accepted whole
		lenient sentry.Reason // what the default drops it with; empty: accepted whole
	}{
		{file: "relay__relay-profiling_tests_fixtures_sample_v1_valid.json"},
		{file: "relay__relay-profiling_tests_fixtures_sample_v2_valid.json"},
		{file: "vroom__test_data__node.json"},
		{file: "vroomrs__tests_fixtures__sample_v2_valid_android.json"},
		{file: "vroomrs__tests_fixtures__sample_v2_valid_cocoa.json"},
		// Stored after Relay: no device or os object, flat transaction_id.
		// Every sample is readable, so the default takes them all.
		{file: "sentry__fixtures_profiles_valid_js_profile.json", relay: sentry.ReasonMissingProfileMetadata},
		// A cocoa V1 profile without device.is_emulator, which Relay
		// requires; trimmed, so one sample names a stack that was cut.
		{file: "vroomrs__tests_fixtures__sample_v1_valid_cocoa.json", relay: sentry.ReasonMissingProfileMetadata, lenient: sentry.ReasonMalformedSamples},
		// Both keep fewer frames (4 and 1) than their stacks name (up to 11
		// and 7): Relay checks indices before anything else about samples.
		{file: "vroomrs__tests_fixtures__sample_v1_valid_python.json", relay: sentry.ReasonMalformedStacks, lenient: sentry.ReasonMalformedStacks},
		{file: "vroomrs__tests_fixtures__sample_v2_valid_python.json", relay: sentry.ReasonMalformedStacks, lenient: sentry.ReasonMalformedStacks},
	}
	for _, tt := range tests {
		payload := fixtures.Read(t, tt.file)
		var meta struct {
			Version  string `json:"version"`
			Platform string `json:"platform"`
		}
		require.NoError(t, json.Unmarshal(payload, &meta))
		header := `{"type":"profile","length":` + strconv.Itoa(len(payload)) + `}`
		if meta.Version == sentry.VersionV2 {
			header = `{"type":"profile_chunk","platform":"` + meta.Platform + `","length":` + strconv.Itoa(len(payload)) + `}`
		}
		body := envelopeOf(eventHeader, item{header: header, payload: string(payload)})
		for _, mode := range []struct {
			validation Validation
			drop       sentry.Reason
		}{{ValidationLenient, tt.lenient}, {ValidationRelay, tt.relay}} {
			t.Run(tt.file+"/"+string(mode.validation), func(t *testing.T) {
				sink := new(consumertest.ProfilesSink)
				tr := startReceiver(t, sink, func(cfg *Config) { cfg.Validation = mode.validation })
				resp := post(t, tr, body, nil)
				require.Equal(t, http.StatusOK, resp.status, "body: %s", resp.body)
				if mode.drop != "" {
					assert.Zero(t, sink.ProfileCount())
					metadatatest.AssertEqualReceiverSentryprofileDiscardedItems(t, tr.telemetry, []metricdata.DataPoint[int64]{{
						Attributes: attribute.NewSet(attribute.String("reason", string(mode.drop))), Value: 1,
					}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
					return
				}
				assert.Equal(t, payloadSamples(t, payload), sampleEvents(sink), "every sample arrives")
				_, err := tr.telemetry.GetMetric("otelcol_receiver_sentryprofile_discarded_items")
				assert.Error(t, err, "nothing is discarded")
				if mode.validation == ValidationLenient && tt.relay != "" {
					// What Relay would have dropped is still counted.
					warnings, err := tr.telemetry.GetMetric("otelcol_receiver_sentryprofile_item_warnings")
					require.NoError(t, err)
					assert.Contains(t, fmt.Sprint(warnings.Data), string(tt.relay))
				}
			})
		}
	}
}

// TestFixtureAndroidTraces posts Sentry's real Android payloads (an ART
// transaction profile, a continuous chunk, a React Native chunk) as the
// Android SDK sends them: each is read, none is dropped.
func TestFixtureAndroidTraces(t *testing.T) {
	tests := []struct{ file, header string }{
		{"relay__relay-profiling_tests_fixtures_android_legacy_valid.json", `{"type":"profile","content_type":"application-json","length":%d}`},
		{"relay__relay-profiling_tests_fixtures_android_chunk_valid.json", `{"type":"profile_chunk","platform":"android","length":%d}`},
		{"relay__relay-profiling_tests_fixtures_android_chunk_valid_rn.json", `{"type":"profile_chunk","platform":"android","length":%d}`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			payload := fixtures.Read(t, tt.file)
			sink := new(consumertest.ProfilesSink)
			tr := startReceiver(t, sink, nil)
			header := fmt.Sprintf(tt.header, len(payload))
			resp := post(t, tr, envelopeOf(eventHeader, item{header: header, payload: string(payload)}), nil)
			require.Equal(t, http.StatusOK, resp.status, resp.body)
			// The main thread's slices of the trace's ~4,700 (7,900) records.
			assert.Greater(t, sampleEvents(sink), 200)
			_, err := tr.telemetry.GetMetric("otelcol_receiver_sentryprofile_discarded_items")
			assert.Error(t, err, "nothing was discarded")
		})
	}
}

// TestPerfettoChunkItem posts an Android Perfetto chunk as the SDK sends
// it: JSON metadata, then the binary trace, in one item with meta_length.
func TestPerfettoChunkItem(t *testing.T) {
	meta := `{"profiler_id":"814b081c638b4ad982ae351547bfe499","chunk_id":"c3b09c0608844f558eaf6e65df6b9cdf",` +
		`"platform":"android","release":"app@1.0","client_sdk":{"name":"sentry.java.android","version":"8.38.0"}}`
	trace := perfettotest.Trace()
	payload := meta + string(trace)
	header := fmt.Sprintf(`{"content_type":"application/x-perfetto-trace","type":"profile_chunk","platform":"android","meta_length":%d,"length":%d}`,
		len(meta), len(payload))
	sink := new(consumertest.ProfilesSink)
	tr := startReceiver(t, sink, nil)
	resp := post(t, tr, envelopeOf(eventHeader, item{header: header, payload: payload}), nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	assert.Equal(t, 3, sampleEvents(sink), "every PerfSample with a callstack")

	// A meta_length past the item: dropped alone, with a reason.
	bad := strings.Replace(header, fmt.Sprintf(`"meta_length":%d`, len(meta)), `"meta_length":999999`, 1)
	resp = post(t, tr, envelopeOf(eventHeader, item{header: bad, payload: payload}), nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	assert.Equal(t, 3, sampleEvents(sink))
	metadatatest.AssertEqualReceiverSentryprofileDiscardedItems(t, tr.telemetry, []metricdata.DataPoint[int64]{{
		Attributes: attribute.NewSet(attribute.String("reason", string(sentry.ReasonInvalidSampledProfile))), Value: 1,
	}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}
