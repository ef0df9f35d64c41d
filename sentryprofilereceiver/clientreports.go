package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// Client reports: what SDKs say they discarded before sending, counted in
// the receiver's own telemetry (receiver_sentryprofile_sdk_discarded), an
// operator's view of the loss before the collector. Reasons and categories
// are chosen by the client: those outside the lists of Sentry's SDKs and
// Relay (sentryclientreport.BoundedReason, BoundedCategory) are counted as
// "other", so that a client cannot grow the metric's cardinality.

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryclientreport"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// countClientReport adds a client_report item's counts to
// receiver_sentryprofile_sdk_discarded; an unreadable report is dropped
// whole (a wrong count is worse than none) and counted as a bad item.
func (rt *router) countClientReport(ctx context.Context, t *envelopeState, projectID string, i int) {
	item := &t.items[i]
	if item.Oversized {
		rt.discardSignalItem(ctx, t, projectID, i, errOversizedSignalItem)
		return
	}
	report, err := sentryclientreport.Decode(item.Payload, sentrysignal.Options{})
	if err != nil {
		rt.discardSignalItem(ctx, t, projectID, i, err)
		return
	}
	for _, d := range report.Discards {
		if d.Quantity == 0 {
			continue
		}
		rt.telemetry.ReceiverSentryprofileSdkDiscarded.Add(ctx, d.Quantity, metric.WithAttributeSet(attribute.NewSet(
			attribute.String("discard_reason", sentryclientreport.BoundedReason(d.Reason)),
			attribute.String("discard_category", sentryclientreport.BoundedCategory(d.Category)))))
	}
}
