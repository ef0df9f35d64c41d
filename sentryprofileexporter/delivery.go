package sentryprofileexporter // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter"

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesout"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// resourcePlan is what one resource of a request turns into: its encoded
// chunks and its project. A resource is the unit of retry: when any of its
// chunks is not accepted for a reason that may pass, the whole resource is
// tried again.
type resourcePlan struct {
	index     int   // in pd.ResourceProfiles()
	resources []int // every resource whose samples the chunks hold, index first
	project   *project
	chunks    []encodedChunk
	// unsent counts the chunks not yet accepted or dropped for good.
	unsent chunkCount
}

// chunkCount is a number of chunks and the samples in them.
type chunkCount struct{ chunks, samples int }

// plan converts the request, encoding each chunk as soon as the translator
// makes it (so that its Profile is garbage before the next is built), and
// picks each resource's project. Chunks Sentry would refuse, and resources
// without a project, are dropped here.
func (e *sentryExporter) plan(ctx context.Context, pd pprofile.Profiles) []*resourcePlan {
	byResource := map[int]*resourcePlan{}
	var order []int
	tooLarge := chunkCount{}
	drops := profilesout.EachChunk(pd, e.exportOpts, func(c profilesout.Chunk) {
		// SizeBound kept the chunk within the item limit while it was
		// built; the payload is sized by the writer's own estimate, since
		// it is kept until delivery and the bound may be several times it.
		payload := sentry.AppendChunkJSON(nil, c.Profile)
		if len(payload) > maxItemBytes {
			tooLarge.chunks++
			tooLarge.samples += len(c.Profile.Samples)
			return
		}
		rp, ok := byResource[c.ResourceIndex]
		if !ok {
			rp = &resourcePlan{index: c.ResourceIndex, resources: c.Resources}
			if len(rp.resources) == 0 {
				rp.resources = []int{c.ResourceIndex}
			}
			byResource[c.ResourceIndex] = rp
			order = append(order, c.ResourceIndex)
		}
		rp.chunks = append(rp.chunks, encodedChunk{chunkID: c.Profile.ChunkID, platform: c.Profile.Platform,
			payload: payload, samples: len(c.Profile.Samples)})
		rp.unsent.chunks++
		rp.unsent.samples += len(c.Profile.Samples)
	})
	e.recordTranslatorDrops(ctx, drops)
	if tooLarge.chunks > 0 {
		e.dropChunks(ctx, string(sentry.ReasonExceedSizeLimit), tooLarge.chunks, tooLarge.samples)
		e.logger.Warn("Profile chunks over Sentry's item size limit dropped",
			zap.Int("chunks", tooLarge.chunks), zap.Int("limit_bytes", maxItemBytes))
	}
	sort.Ints(order)

	rps := pd.ResourceProfiles()
	plans := make([]*resourcePlan, 0, len(order))
	for _, i := range order {
		rp := byResource[i]
		rp.project = e.router.route(rps.At(i).Resource())
		if rp.project == nil {
			e.dropChunks(ctx, reasonNoDSN, rp.unsent.chunks, rp.unsent.samples)
			e.logger.Warn("No DSN for resource; dropping its profile chunks",
				zap.String("routing_attribute", e.router.attribute), zap.Int("chunks", rp.unsent.chunks))
			continue
		}
		plans = append(plans, rp)
	}
	return plans
}

// outcome is what delivering a request's plans came to.
type outcome struct {
	retryWait
	permErrs []error
	// retried marks the plans due again, by index: true when a failure
	// other than a rate limit (a 5xx, no answer, a temporary redirect) is
	// among the reasons, false when only a rate limit is.
	retried map[int]bool
}

// retryWait is what the deliveries of one request that are due again say
// of the retry, for profiles and the other signals alike: the reasons,
// and the longest wait Sentry asked for after a failure and for a rate
// limit.
type retryWait struct {
	retryErrs             []error
	failDelay, limitDelay time.Duration
}

// note records one delivery due again, for err (nil when the reason is
// already among the errors).
func (w *retryWait) note(err error, delay time.Duration, rateLimited bool) {
	if err != nil {
		w.retryErrs = append(w.retryErrs, err)
	}
	if rateLimited {
		w.limitDelay = max(w.limitDelay, delay)
	} else {
		w.failDelay = max(w.failDelay, delay)
	}
}

// throttle gives err the wait exporterhelper retries after: the longest
// failure's when a failure is among the reasons, else the rate limit's
// (which then does not count against max_elapsed_time). A failure is
// retried after its own delay, not after a rate limit of another resource:
// until the limit ends, the limited resources are skipped again without a
// request.
func (w *retryWait) throttle(err error, failing bool, attempt *retryState) error {
	delay := w.failDelay
	if !failing {
		attempt.rateLimited()
		delay = w.limitDelay
	}
	if delay > 0 {
		return exporterhelper.NewThrottleRetry(err, delay)
	}
	return err
}

// retryPlan marks a plan due again, for err (nil when the reason is
// already among the errors).
func (o *outcome) retryPlan(i int, err error, delay time.Duration, rateLimited bool) {
	o.retried[i] = o.retried[i] || !rateLimited
	o.note(err, delay, rateLimited)
}

// failing reports whether a plan is due again for a failure other than a
// rate limit.
func (o *outcome) failing() bool {
	for _, failed := range o.retried {
		if failed {
			return true
		}
	}
	return false
}

// dropFailing forgets the plans due again for a failure other than a rate
// limit and counts their unsent chunks.
func (o *outcome) dropFailing(plans []*resourcePlan) chunkCount {
	var n chunkCount
	for i, failed := range o.retried {
		if failed {
			n.chunks += plans[i].unsent.chunks
			n.samples += plans[i].unsent.samples
			delete(o.retried, i)
		}
	}
	return n
}

// resources are the resources of the plans due again, sorted.
func (o *outcome) resources(plans []*resourcePlan) []int {
	var rs []int
	for i := range o.retried {
		rs = append(rs, plans[i].resources...)
	}
	slices.Sort(rs)
	return slices.Compact(rs)
}

// deliver posts the envelopes of every project. Resources whose project is
// rate limited for one of their categories are not sent (so that a
// resource is never half delivered); the chunks of the others are packed
// into as few envelopes per project as Relay's limits allow. After a
// retryable failure, the project gets nothing more in this push.
func (e *sentryExporter) deliver(ctx context.Context, plans []*resourcePlan) *outcome {
	out := &outcome{retried: map[int]bool{}}
	now := time.Now()
	byProject := map[*project][]encodedChunk{}
	var projects []*project
	for i, rp := range plans {
		p := rp.project
		if wait, cat := limitedCategory(rp, now); wait > 0 {
			out.retryPlan(i, fmt.Errorf("%s: category %s is rate limited for %s", p.name, cat, wait.Round(time.Second)), wait, true)
			continue
		}
		if _, ok := byProject[p]; !ok {
			projects = append(projects, p)
		}
		for _, c := range rp.chunks {
			c.plan = i
			byProject[p] = append(byProject[p], c)
		}
	}
	for _, p := range projects {
		e.deliverProject(ctx, p, plans, packEnvelopes(byProject[p]), out)
	}
	return out
}

// limitedCategory reports how long the project of a resource is rate
// limited for one of its chunks' categories, and which (0 when none is).
func limitedCategory(rp *resourcePlan, now time.Time) (time.Duration, string) {
	for _, c := range rp.chunks {
		cat := categoryOf(c.platform)
		if wait := rp.project.limits.RetryAfter(cat, now); wait > 0 {
			return wait, cat
		}
	}
	return 0, ""
}

// deliverProject posts one project's envelopes in order.
func (e *sentryExporter) deliverProject(ctx context.Context, p *project, plans []*resourcePlan, batches []envelopeBatch, out *outcome) {
	for k, b := range batches {
		result, posted := e.deliverBatch(ctx, p, plans, b, out)
		if !posted || result.err == nil || result.permanent || result.rateLimited {
			// A rate limit leaves the other category free to go.
			continue
		}
		// Sentry failing: the rest waits for the retry.
		for _, rest := range batches[k+1:] {
			out.retryBatch(rest, result.delay, false)
		}
		return
	}
}

// deliverBatch posts one envelope unless an earlier envelope of this push
// was answered 429 for its category; false when it was not posted.
func (e *sentryExporter) deliverBatch(ctx context.Context, p *project, plans []*resourcePlan, b envelopeBatch, out *outcome) (delivery, bool) {
	now := time.Now()
	if wait := p.limits.RetryAfter(b.category, now); wait > 0 {
		out.retryBatch(b, wait, true)
		return delivery{}, false
	}
	body := encodeEnvelope(b, p, e.sdk, now)
	result := e.post(ctx, p, b.category, body)
	switch {
	case result.err == nil:
		e.sent(ctx, b, len(body), plans)
	case result.permanent:
		e.rejected(ctx, p, b, result, plans)
		out.permErrs = append(out.permErrs, result.err)
	default:
		out.retryBatch(b, result.delay, result.rateLimited)
		out.retryErrs = append(out.retryErrs, result.err)
	}
	return result, true
}

// retryBatch marks the resources of an envelope due again.
func (o *outcome) retryBatch(b envelopeBatch, delay time.Duration, rateLimited bool) {
	for _, i := range b.plans {
		o.retryPlan(i, nil, delay, rateLimited)
	}
}

// sent counts an accepted envelope.
func (e *sentryExporter) sent(ctx context.Context, b envelopeBatch, bodyBytes int, plans []*resourcePlan) {
	samples := 0
	for _, c := range b.chunks {
		samples += c.samples
		plans[c.plan].unsent.chunks--
		plans[c.plan].unsent.samples -= c.samples
	}
	e.telemetry.ExporterSentryprofileChunksSent.Add(ctx, int64(len(b.chunks)))
	e.telemetry.ExporterSentryprofileSamplesSent.Add(ctx, int64(samples))
	e.telemetry.ExporterSentryprofileSentBytes.Add(ctx, int64(bodyBytes))
}

// rejected drops the chunks of an envelope Sentry refused for good.
func (e *sentryExporter) rejected(ctx context.Context, p *project, b envelopeBatch, result delivery, plans []*resourcePlan) {
	samples := 0
	for _, c := range b.chunks {
		samples += c.samples
		plans[c.plan].unsent.chunks--
		plans[c.plan].unsent.samples -= c.samples
	}
	e.dropChunks(ctx, cmpString(result.reason, reasonRejected), len(b.chunks), samples)
	e.logger.Error("Sentry rejected profile chunks; dropping them",
		zap.String("dsn", p.name), zap.Int("chunks", len(b.chunks)), zap.Error(result.err))
}
