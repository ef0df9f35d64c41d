package sentryprofilereceiver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadatatest"
)

func TestEventResources(t *testing.T) {
	res := func(release string) sentryresource.Resource { return sentryresource.Resource{Release: release} }
	clock := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name   string
		run    func(e *eventResources)
		lookup eventKey
		want   string // release found; empty: not found
	}{
		{name: "remembered", run: func(e *eventResources) { e.remember("1", "a", res("r1")) }, lookup: eventKey{"1", "a"}, want: "r1"},
		{name: "other project", run: func(e *eventResources) { e.remember("1", "a", res("r1")) }, lookup: eventKey{"2", "a"}},
		{name: "too old", run: func(e *eventResources) {
			e.remember("1", "a", res("r1"))
			clock = clock.Add(2 * time.Minute)
		}, lookup: eventKey{"1", "a"}},
		{name: "oldest pushed out", run: func(e *eventResources) {
			for _, id := range []string{"a", "b", "c", "d"} {
				e.remember("1", id, res("r-"+id))
			}
		}, lookup: eventKey{"1", "a"}},
		{name: "newest kept", run: func(e *eventResources) {
			for _, id := range []string{"a", "b", "c", "d"} {
				e.remember("1", id, res("r-"+id))
			}
		}, lookup: eventKey{"1", "d"}, want: "r-d"},
		{name: "a retry refreshes in place", run: func(e *eventResources) {
			for _, id := range []string{"a", "b", "a", "a", "c"} {
				e.remember("1", id, res("r-"+id))
			}
		}, lookup: eventKey{"1", "b"}, want: "r-b"},
		{name: "no event id", run: func(e *eventResources) { e.remember("1", "", res("r1")) }, lookup: eventKey{"1", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEventResources(3, time.Minute)
			e.now = func() time.Time { return clock }
			tt.run(e)
			got, ok := e.lookup(tt.lookup.projectID, tt.lookup.eventID)
			assert.Equal(t, tt.want != "", ok)
			assert.Equal(t, tt.want, got.Release)
			assert.LessOrEqual(t, len(e.byKey), 3, "bounded by count")
		})
	}
}

// TestFeedbackTakesItsEventsResource: sentry-python 1.x sends a user report
// in an envelope of its own, with nothing of its program; it comes out
// under the resource of the event it names, as Sentry attaches it to that
// event. A report about an event not seen keeps the envelope's resource.
func TestFeedbackTakesItsEventsResource(t *testing.T) {
	sinks := signalSinks{logs: new(consumertest.LogsSink)}
	tr := startSignals(t, sinks, nil)
	const (
		eventID = "c0ffee00c0ffee00c0ffee00c0ffee00" // the one userReportPayload names
		other   = "0b2c6f3cc518c44719ee95a36f07cda3"
	)
	event := strings.Replace(eventPayload, "0f1e2d3c4b5a69788796a5b4c3d2e1f0", eventID, 1)
	lone := func(payload string) []byte { return envelopeOf(`{}`, item{`{"type":"user_report"}`, payload}) }
	for _, body := range [][]byte{
		envelopeOf(eventHeader, item{`{"type":"event"}`, event}),
		lone(userReportPayload),
		lone(strings.Replace(userReportPayload, eventID, other, 1)),
		envelopeOf(`{}`, item{`{"type":"feedback"}`, strings.NewReplacer(
			"0f1e2d3c4b5a69788796a5b4c3d2e1f0", eventID, `"environment":"production","release":"shop@1.4.2",`, "").Replace(feedbackPayload)}),
	} {
		resp := post(t, tr, body, nil)
		require.Equal(t, http.StatusOK, resp.status, resp.body)
	}
	records, resources := logRecords(sinks.logs)
	require.Len(t, records, 4)
	get := func(i int, key string) string {
		if v, ok := resources[i].Attributes().Get(key); ok {
			return v.AsString()
		}
		return ""
	}
	version := func(i int) string { return get(i, string(semconv.ServiceVersionKey)) }
	environment := func(i int) string { return get(i, string(semconv.DeploymentEnvironmentNameKey)) }
	assert.Equal(t, "shop@1.4.2", version(0), "the event's own resource")
	assert.Equal(t, version(0), version(1), "the lone user report takes its event's release")
	assert.Equal(t, environment(0), environment(1))
	assert.Equal(t, get(0, string(semconv.ServiceNameKey)), get(1, string(semconv.ServiceNameKey)))
	assert.Empty(t, version(2), "a report about an event not seen keeps the envelope's resource")
	assert.Equal(t, version(0), version(3), "a feedback naming its event takes the event's release")
	assert.Equal(t, environment(0), environment(3))

	point := func(source string, n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(attribute.String("event_resource", source)), Value: n}
	}
	metadatatest.AssertEqualReceiverSentryprofileFeedbackResources(t, tr.telemetry, []metricdata.DataPoint[int64]{
		point("remembered", 2), point("not_seen", 1),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// TestSignalTruncationsCounted: what the translators cut to stay within
// their bounds is counted by item type, and the record is kept.
func TestSignalTruncationsCounted(t *testing.T) {
	sinks := signalSinks{logs: new(consumertest.LogsSink)}
	tr := startSignals(t, sinks, nil)
	var extra strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&extra, `%s"k%04d":%d`, map[bool]string{true: "", false: ","}[i == 0], i, i)
	}
	event := `{"event_id":"0f1e2d3c4b5a69788796a5b4c3d2e1f0","extra":{` + extra.String() + `},` +
		`"logentry":{"message":"` + strings.Repeat("{0}", 5000) + `","params":["xy"]}}`
	resp := post(t, tr, envelopeOf(eventHeader, item{`{"type":"event"}`, event}), nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	records, _ := logRecords(sinks.logs)
	require.Len(t, records, 1, "the record is kept")

	point := func(truncation string, n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(
			attribute.String("item_type", "event"), attribute.String("truncation", truncation)), Value: n}
	}
	metadatatest.AssertEqualReceiverSentryprofileSignalTruncations(t, tr.telemetry, []metricdata.DataPoint[int64]{
		point("attributes", 500), point("message", 1),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}
