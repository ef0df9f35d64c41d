package sentryprofilereceiver

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadatatest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

const eventHeader = `{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","sent_at":"2026-11-20T10:00:01Z"}`

func TestRouting(t *testing.T) {
	body := envelopeOf(eventHeader, chunkItem(chunkPayload))
	tests := []struct {
		name       string
		method     string
		path       string
		wantStatus int
		wantAllow  string
	}{
		{name: "trailing slash", method: http.MethodPost, path: "/api/42/envelope/", wantStatus: http.StatusOK},
		{name: "no trailing slash", method: http.MethodPost, path: "/api/42/envelope", wantStatus: http.StatusOK},
		{name: "GET", method: http.MethodGet, path: "/api/42/envelope/", wantStatus: http.StatusMethodNotAllowed, wantAllow: "POST"},
		{name: "PUT without slash", method: http.MethodPut, path: "/api/42/envelope", wantStatus: http.StatusMethodNotAllowed, wantAllow: "POST"},
		{name: "OPTIONS without CORS", method: http.MethodOptions, path: "/api/42/envelope/", wantStatus: http.StatusMethodNotAllowed, wantAllow: "POST"},
		{name: "store endpoint takes an event, not an envelope", method: http.MethodPost, path: "/api/42/store/", wantStatus: http.StatusBadRequest},
		{name: "GET store", method: http.MethodGet, path: "/api/42/store/", wantStatus: http.StatusNotFound},
		{name: "below the endpoint", method: http.MethodPost, path: "/api/42/envelope/more", wantStatus: http.StatusNotFound},
		{name: "project slug", method: http.MethodPost, path: "/api/shop/envelope/", wantStatus: http.StatusNotFound},
		{name: "negative project", method: http.MethodPost, path: "/api/-1/envelope/", wantStatus: http.StatusNotFound},
		{name: "root", method: http.MethodPost, path: "/", wantStatus: http.StatusNotFound},
		{name: "OTLP path", method: http.MethodPost, path: "/v1development/profiles", wantStatus: http.StatusNotFound},
	}
	sink := new(consumertest.ProfilesSink)
	tr := startReceiver(t, sink, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink.Reset()
			resp := do(t, newRequest(t, tt.method, tr.url+tt.path+"?sentry_key="+testKey, body, nil))
			require.Equal(t, tt.wantStatus, resp.status, "body: %s", resp.body)
			assert.Equal(t, tt.wantAllow, resp.header.Get("Allow"))
			assert.Equal(t, "application/json", resp.header.Get("Content-Type"))
			if tt.wantStatus == http.StatusOK {
				assert.Equal(t, chunkSamples, sampleEvents(sink))
				return
			}
			assert.NotEmpty(t, resp.detail(t))
			assert.Zero(t, sink.ProfileCount())
		})
	}
}

func TestCORSPreflight(t *testing.T) {
	tr := startReceiver(t, new(consumertest.ProfilesSink), func(c *Config) {
		c.ServerConfig.CORS = configoptional.Some(confighttp.CORSConfig{AllowedOrigins: []string{"https://app.example.com"}})
	})
	tests := []struct {
		origin     string
		wantOrigin string
	}{
		{origin: "https://app.example.com", wantOrigin: "https://app.example.com"},
		{origin: "https://evil.example.com", wantOrigin: ""},
	}
	for _, tt := range tests {
		t.Run(tt.origin, func(t *testing.T) {
			resp := do(t, newRequest(t, http.MethodOptions, tr.url+"/api/42/envelope/", nil, map[string]string{
				"Origin":                        tt.origin,
				"Access-Control-Request-Method": http.MethodPost,
			}))
			assert.Equal(t, http.StatusNoContent, resp.status)
			assert.Equal(t, tt.wantOrigin, resp.header.Get("Access-Control-Allow-Origin"))
		})
	}
}

func TestContentTypes(t *testing.T) {
	sink := new(consumertest.ProfilesSink)
	tr := startReceiver(t, sink, nil)
	for _, contentType := range []string{"", "text/plain;charset=UTF-8", "application/x-sentry-envelope", "application/octet-stream", "application/json"} {
		t.Run(contentType, func(t *testing.T) {
			sink.Reset()
			headers := map[string]string{}
			if contentType != "" {
				headers["Content-Type"] = contentType
			}
			resp := post(t, tr, envelopeOf(eventHeader, chunkItem(chunkPayload)), headers)
			require.Equal(t, http.StatusOK, resp.status, "body: %s", resp.body)
			assert.Equal(t, chunkSamples, sampleEvents(sink))
		})
	}
}

func TestResponses(t *testing.T) {
	good := chunkItem(chunkPayload)
	tests := []struct {
		name       string
		body       []byte
		mutate     func(*Config)
		wantStatus int
		wantBody   string // exact JSON for 200s
		wantDetail string // prefix of the detail for refusals
		wantEvents int
	}{
		{name: "event id", body: envelopeOf(eventHeader, good), wantStatus: http.StatusOK,
			wantBody: `{"id":"9ec79c33ec9942ab8353589fcb2e04dc"}`, wantEvents: chunkSamples},
		{name: "dashed uppercase event id", body: envelopeOf(`{"event_id":"9EC79C33-EC99-42AB-8353-589FCB2E04DC"}`, good), wantStatus: http.StatusOK,
			wantBody: `{"id":"9ec79c33ec9942ab8353589fcb2e04dc"}`, wantEvents: chunkSamples},
		{name: "no event id", body: envelopeOf(`{}`, good), wantStatus: http.StatusOK, wantBody: `{}`, wantEvents: chunkSamples},
		{name: "no items", body: []byte(eventHeader), wantStatus: http.StatusOK, wantBody: `{"id":"9ec79c33ec9942ab8353589fcb2e04dc"}`},
		{name: "only an event", body: envelopeOf(eventHeader, item{`{"type":"event"}`, `{"message":"hi"}`}), wantStatus: http.StatusOK,
			wantBody: `{"id":"9ec79c33ec9942ab8353589fcb2e04dc"}`},
		{name: "every profile item rejected", body: envelopeOf(eventHeader, chunkItem(`{"version":"2"`), chunkItem(`[]`)), wantStatus: http.StatusOK,
			wantBody: `{"id":"9ec79c33ec9942ab8353589fcb2e04dc"}`},
		{name: "length-delimited items", body: []byte(eventHeader + "\n" +
			`{"type":"profile_chunk","platform":"python","length":` + strconv.Itoa(len(chunkPayload)) + "}\n" + chunkPayload),
			wantStatus: http.StatusOK, wantBody: `{"id":"9ec79c33ec9942ab8353589fcb2e04dc"}`, wantEvents: chunkSamples},
		{name: "invalid event id", body: envelopeOf(`{"event_id":"not-a-uuid"}`, good), wantStatus: http.StatusBadRequest,
			wantDetail: "invalid event_id in envelope header"},
		{name: "header is not JSON", body: []byte("hello\n"), wantStatus: http.StatusBadRequest, wantDetail: "invalid envelope"},
		{name: "empty body", body: []byte{}, wantStatus: http.StatusBadRequest, wantDetail: "invalid envelope"},
		{name: "item header is not JSON", body: envelopeOf(eventHeader, item{"profile_chunk", chunkPayload}), wantStatus: http.StatusBadRequest,
			wantDetail: "invalid envelope"},
		{name: "length beyond the body", body: []byte(eventHeader + "\n" + `{"type":"profile_chunk","length":100000}` + "\n{}"),
			wantStatus: http.StatusBadRequest, wantDetail: "invalid envelope"},
		{name: "too many items", body: envelopeOf(eventHeader, good, good, good), mutate: func(c *Config) { c.MaxItemsPerEnvelope = 2 },
			wantStatus: http.StatusRequestEntityTooLarge, wantDetail: "envelope has more than 2 items"},
		{name: "body over max_request_body_size", body: envelopeOf(eventHeader, good, good, good),
			mutate:     func(c *Config) { c.ServerConfig.MaxRequestBodySize = 2048; c.MaxProfileItemSize = 1024 },
			wantStatus: http.StatusRequestEntityTooLarge, wantDetail: "envelope exceeds 2048 bytes"},
		{name: "header line over the limit", body: []byte(`{"x":"` + strings.Repeat("a", 70<<10) + `"}` + "\n"),
			wantStatus: http.StatusRequestEntityTooLarge, wantDetail: "envelope header line too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := new(consumertest.ProfilesSink)
			tr := startReceiver(t, sink, tt.mutate)
			resp := post(t, tr, tt.body, nil)
			require.Equal(t, tt.wantStatus, resp.status, "body: %s", resp.body)
			assert.Equal(t, "application/json", resp.header.Get("Content-Type"))
			if tt.wantStatus == http.StatusOK {
				assert.JSONEq(t, tt.wantBody, resp.body)
			} else {
				assert.True(t, strings.HasPrefix(resp.detail(t), tt.wantDetail), "detail %q, want prefix %q", resp.detail(t), tt.wantDetail)
			}
			assert.Equal(t, tt.wantEvents, sampleEvents(sink))
			if tt.wantEvents == 0 {
				assert.Zero(t, sink.ProfileCount(), "the consumer is not called without samples")
			}
		})
	}
}

func TestConsumerErrors(t *testing.T) {
	tests := []struct {
		name           string
		err            error
		retryAfter     time.Duration
		wantStatus     int
		wantRetryAfter string
		wantRateLimits string
	}{
		{name: "retryable", err: errors.New("queue is full"), retryAfter: defaultRetryAfter,
			wantStatus: http.StatusTooManyRequests, wantRetryAfter: "60", wantRateLimits: "60::organization"},
		{name: "retryable, configured wait", err: errors.New("queue is full"), retryAfter: 1500 * time.Millisecond,
			wantStatus: http.StatusTooManyRequests, wantRetryAfter: "2", wantRateLimits: "2::organization"},
		{name: "permanent", err: consumererror.NewPermanent(errors.New("bad data")), retryAfter: defaultRetryAfter,
			wantStatus: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := startReceiver(t, consumertest.NewErr(tt.err), func(c *Config) { c.RetryAfter = tt.retryAfter })
			resp := post(t, tr, envelopeOf(eventHeader, chunkItem(chunkPayload)), nil)
			require.Equal(t, tt.wantStatus, resp.status, "body: %s", resp.body)
			assert.Equal(t, tt.wantRetryAfter, resp.header.Get("Retry-After"))
			assert.Equal(t, tt.wantRateLimits, resp.header.Get("X-Sentry-Rate-Limits"))
			assert.NotContains(t, resp.body, tt.err.Error(), "pipeline internals stay out of the answer")

			// obsreport counts the samples as refused, not accepted.
			refused, err := tr.telemetry.GetMetric("otelcol_receiver_refused_profile_samples")
			require.NoError(t, err)
			sum := refused.Data.(metricdata.Sum[int64])
			require.Len(t, sum.DataPoints, 1)
			assert.Equal(t, int64(chunkSamples), sum.DataPoints[0].Value)
		})
	}
}

// TestRespondsAfterConsumer checks that 200 means the pipeline has the data:
// the answer cannot come while the consumer is still running.
func TestRespondsAfterConsumer(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	next, err := xconsumer.NewProfiles(func(context.Context, pprofile.Profiles) error {
		close(entered)
		<-release
		return nil
	})
	require.NoError(t, err)
	tr := startReceiver(t, next, nil)

	answered := postInBackground(envelopeRequest(t, tr, envelopeOf(eventHeader, chunkItem(chunkPayload)), nil))
	<-entered
	select {
	case a := <-answered:
		t.Fatalf("answered %d (error %v) before the consumer returned", a.resp.status, a.err)
	default:
	}
	close(release)
	okAnswer(t, answered)
}

// TestConcurrentEnvelopesAreBounded holds the only envelope slot in the
// consumer: a second request must wait, unread, until the slot frees, and
// then go through.
func TestConcurrentEnvelopesAreBounded(t *testing.T) {
	entered := make(chan struct{}, 2)
	release := make(chan struct{})
	next, err := xconsumer.NewProfiles(func(context.Context, pprofile.Profiles) error {
		entered <- struct{}{}
		<-release
		return nil
	})
	require.NoError(t, err)
	tr := startReceiver(t, next, func(c *Config) { c.MaxConcurrentEnvelopes = 1 })

	first := postInBackground(envelopeRequest(t, tr, envelopeOf(eventHeader, chunkItem(chunkPayload)), nil))
	second := postInBackground(envelopeRequest(t, tr, envelopeOf(eventHeader, chunkItem(chunkPayload)), nil))
	<-entered
	select {
	case <-entered:
		t.Fatal("a second envelope reached the consumer while the only slot was taken")
	case <-time.After(200 * time.Millisecond):
	}
	release <- struct{}{}
	<-entered // the waiting request got the slot
	release <- struct{}{}
	okAnswer(t, first)
	okAnswer(t, second)
}

// TestBadItemAmongGood sends one envelope mixing good and bad items: the good
// ones arrive, every bad one is counted under its Relay reason.
func TestBadItemAmongGood(t *testing.T) {
	const transaction = `{"type":"transaction","event_id":"a2c6f3cc518c44719ee95a36f07cda36",` +
		`"transaction":"checkout","start_timestamp":1795000000.0,"timestamp":1795000001.0,` +
		`"contexts":{"trace":{"trace_id":"dd2619a66dba46f7939c718fdab394b6","span_id":"8a284e3cea10a0ea"}}}`
	badStack := strings.Replace(chunkPayload, `"stack_id":1,`, `"stack_id":9,`, 1)
	body := envelopeOf(eventHeader,
		item{`{"type":"profile"}`, v1Payload},                                 // good V1
		chunkItem(chunkPayload),                                               // good V2
		item{`{"type":"profile_chunk_ui","platform":"python"}`, chunkPayload}, // good alias
		item{`{"type":"profile_chunk"}`, chunkPayload},                        // good, platform header missing
		item{`{"type":"profile_chunk","platform":"cocoa"}`, chunkPayload},     // good, platform header different
		item{`{"type":"profile"}`, v1Payload},                                 // second V1 profile
		chunkItem(`{"version":"2",`),                                          // not JSON
		chunkItem(badStack),                                                   // sample pointing at no stack
		item{`{"type":"transaction"}`, transaction},
		item{`{"type":"client_report"}`, `{"discarded_events":[]}`},
		item{`{"type":"x-made-up"}`, `{}`},
	)
	sink := new(consumertest.ProfilesSink)
	// An item over its size limit refuses the whole envelope, as in Relay
	// (limits_test.go): it has no place among the good items.
	tr := startReceiver(t, sink, nil)
	resp := post(t, tr, body, nil)
	require.Equal(t, http.StatusOK, resp.status, "body: %s", resp.body)

	require.Len(t, sink.AllProfiles(), 1, "one Profiles per envelope")
	assert.Equal(t, 5, sink.AllProfiles()[0].ResourceProfiles().Len(), "one resource per accepted item")
	assert.Equal(t, v1Samples+4*chunkSamples, sampleEvents(sink))

	reason := func(r sentry.Reason, n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(attribute.String("reason", string(r))), Value: n}
	}
	metadatatest.AssertEqualReceiverSentryprofileDiscardedItems(t, tr.telemetry, []metricdata.DataPoint[int64]{
		reason(sentry.ReasonTooManyProfiles, 1),
		reason(sentry.ReasonInvalidJSON, 1),
		reason(sentry.ReasonMalformedSamples, 1),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())

	itemType := func(typ string) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(attribute.String("item_type", typ)), Value: 1}
	}
	metadatatest.AssertEqualReceiverSentryprofileIgnoredItems(t, tr.telemetry, []metricdata.DataPoint[int64]{
		itemType("transaction"), itemType("unknown"),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())

	platform := func(state string) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(attribute.String("platform_header", state)), Value: 1}
	}
	metadatatest.AssertEqualReceiverSentryprofilePlatformHeaderMismatches(t, tr.telemetry, []metricdata.DataPoint[int64]{
		platform("missing"), platform("different"),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())

	// Accepted samples are counted per sample type (xreceiverhelper), each
	// a Sentry sample as the SDK sent it.
	accepted, err := tr.telemetry.GetMetric("otelcol_receiver_accepted_profile_samples")
	require.NoError(t, err)
	var total int64
	for _, dp := range accepted.Data.(metricdata.Sum[int64]).DataPoints {
		sampleType, ok := dp.Attributes.Value("sample_type")
		require.True(t, ok, "every point names its sample type")
		assert.Equal(t, "wall:nanoseconds", sampleType.AsString())
		total += dp.Value
	}
	assert.Equal(t, int64(v1Samples+4*chunkSamples), total)
}

// TestV1TransactionLinks checks that a V1 profile is linked to the root span
// of the transaction item it names, wherever that item is in the envelope.
func TestV1TransactionLinks(t *testing.T) {
	transaction := func(eventID, spanID string) item {
		return item{`{"type":"transaction"}`, `{"type":"transaction","event_id":"` + eventID + `",` +
			`"transaction":"checkout","start_timestamp":1795000000.0,"timestamp":1795000001.0,` +
			`"contexts":{"trace":{"trace_id":"dd2619a66dba46f7939c718fdab394b6","span_id":"` + spanID + `"}}}`}
	}
	const (
		named = "a2c6f3cc518c44719ee95a36f07cda36" // the id v1Payload's transaction has
		other = "0b2c6f3cc518c44719ee95a36f07cda3"
	)
	profile := item{`{"type":"profile"}`, v1Payload}
	tests := []struct {
		name     string
		items    []item
		wantSpan string // empty: no link
	}{
		{name: "no transaction item", items: []item{profile}},
		{name: "transaction after the profile", items: []item{profile, transaction(named, "8a284e3cea10a0ea")}, wantSpan: "8a284e3cea10a0ea"},
		{name: "the named one of two", items: []item{transaction(other, "1111111111111111"), profile, transaction(named, "8a284e3cea10a0ea")},
			wantSpan: "8a284e3cea10a0ea"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := new(consumertest.ProfilesSink)
			tr := startReceiver(t, sink, nil)
			resp := post(t, tr, envelopeOf(eventHeader, tt.items...), nil)
			require.Equal(t, http.StatusOK, resp.status, "body: %s", resp.body)
			require.Len(t, sink.AllProfiles(), 1)
			pd := sink.AllProfiles()[0]
			links := pd.Dictionary().LinkTable()
			samples := pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0).Samples()
			require.Equal(t, v1Samples, sampleEvents(sink))
			for i := 0; i < samples.Len(); i++ {
				idx := samples.At(i).LinkIndex()
				if tt.wantSpan == "" {
					assert.Zero(t, idx, "sample %d", i)
					continue
				}
				require.Positive(t, idx, "sample %d", i)
				link := links.At(int(idx))
				assert.Equal(t, "dd2619a66dba46f7939c718fdab394b6", link.TraceID().String())
				assert.Equal(t, tt.wantSpan, link.SpanID().String())
			}
		})
	}
}

// TestReceiveOptions checks what the receiver settings and the URL hand to
// the translator: the service name rule, the project id and the payload.
func TestReceiveOptions(t *testing.T) {
	tests := []struct {
		name           string
		path           string
		mutate         func(*Config)
		wantService    string
		wantProject    string
		wantOriginal   string
		wantOrigFormat string
	}{
		{name: "defaults", path: "/api/42/envelope/", wantService: "shop", wantProject: "42"},
		{name: "fixed service name and original payload", path: "/api/42/envelope/",
			mutate:      func(c *Config) { c.ServiceName = "checkout"; c.IncludeOriginalPayload = true },
			wantService: "checkout", wantProject: "42", wantOriginal: chunkPayload, wantOrigFormat: "sentry_profile_chunk_v2"},
		{name: "project id with leading zeros", path: "/api/007/envelope", wantService: "shop", wantProject: "7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := new(consumertest.ProfilesSink)
			tr := startReceiver(t, sink, tt.mutate)
			resp := do(t, newRequest(t, http.MethodPost, tr.url+tt.path+"?sentry_key="+testKey,
				envelopeOf(eventHeader, chunkItem(chunkPayload)), nil))
			require.Equal(t, http.StatusOK, resp.status, "body: %s", resp.body)
			require.Len(t, sink.AllProfiles(), 1)
			rp := sink.AllProfiles()[0].ResourceProfiles().At(0)
			service, ok := rp.Resource().Attributes().Get(string(semconv.ServiceNameKey))
			require.True(t, ok)
			assert.Equal(t, tt.wantService, service.Str())
			project, ok := rp.Resource().Attributes().Get("sentry.project.id")
			require.True(t, ok)
			assert.Equal(t, tt.wantProject, project.Str())
			profile := rp.ScopeProfiles().At(0).Profiles().At(0)
			assert.Equal(t, tt.wantOriginal, string(profile.OriginalPayload().AsRaw()))
			assert.Equal(t, tt.wantOrigFormat, profile.OriginalPayloadFormat())
		})
	}
}
