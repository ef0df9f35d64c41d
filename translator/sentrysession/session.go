package sentrysession

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// Item types this package reads.
const (
	ItemSession  = "session"
	ItemSessions = "sessions"
)

// Update is one decoded "session" item: the fields the metrics and a
// resource builder read.
type Update struct {
	Init      bool              // "init"
	Started   pcommon.Timestamp // "started"
	Timestamp pcommon.Timestamp // "timestamp", else "started"
	Status    string            // "status"; "ok" when absent
	Errors    int64             // "errors"
	Duration  float64           // "duration" in seconds
	HasDur    bool
	// AbnormalMechanism is "abnormal_mechanism".
	AbnormalMechanism string
	// Release and Environment are "attrs.release" and "attrs.environment";
	// Resource holds them too, for the envelope's resource builder.
	Release, Environment string
	Resource             sentryresource.Resource
}

// UpdateMetrics is the router's contract for a "session" item: the
// resource its attrs.release and attrs.environment name, and its points
// (see AppendMetrics).
func UpdateMetrics(payload []byte, opts sentrysignal.Options) (sentrysignal.Metrics, error) {
	u, err := DecodeUpdate(payload, opts)
	if err != nil {
		return sentrysignal.Metrics{}, err
	}
	return sentrysignal.Metrics{Facts: sentrysignal.Facts{Resource: u.Resource}, Append: u.AppendMetrics}, nil
}

// Ended says whether the update ends the session: every status but "ok"
// does, as Relay reads them.
func (u *Update) Ended() bool { return u.Status != "ok" }

// Errored says whether the session had an error.
func (u *Update) Errored() bool { return u.Errors > 0 || (u.Status != "ok" && u.Status != "exited") }

// DecodeUpdate reads a "session" item. It fails when the payload is not a
// JSON object or "started" is missing or not a timestamp.
func DecodeUpdate(payload []byte, opts sentrysignal.Options) (*Update, error) {
	doc, err := sentrysignal.DecodeObject(ItemSession, payload, opts)
	if err != nil {
		return nil, err
	}
	u := &Update{Status: sentrysignal.Str(doc, "status")}
	if u.Status == "" {
		u.Status = "ok"
	}
	u.Init, _ = sentrysignal.Bool(doc, "init")
	if err := u.readTimes(doc); err != nil {
		return nil, err
	}
	u.Errors = errorCount(doc["errors"])
	u.Duration, u.HasDur = sentrysignal.Float(doc, "duration")
	u.AbnormalMechanism = sentrysignal.Str(doc, "abnormal_mechanism")
	u.Resource = sentrysignal.ResourceOfRelease(sentrysignal.Obj(doc, "attrs"))
	u.Release, u.Environment = u.Resource.Release, u.Resource.Environment
	return u, nil
}

// readTimes reads "started", which is required, and "timestamp", which
// defaults to it.
func (u *Update) readTimes(doc map[string]any) error {
	var err error
	if u.Started, err = sentrysignal.TimestampOf(doc["started"]); err != nil {
		return sentrysignal.PayloadError(ItemSession, "started", "not a timestamp", err)
	}
	u.Timestamp = u.Started
	if doc["timestamp"] != nil {
		if u.Timestamp, err = sentrysignal.TimestampOf(doc["timestamp"]); err != nil {
			return sentrysignal.PayloadError(ItemSession, "timestamp", "not a timestamp", err)
		}
	}
	return nil
}

// AppendMetrics writes u's points (see AppendSession).
func (u *Update) AppendMetrics(dst pmetric.MetricSlice) int {
	set := metricSet{dst: dst}
	l := labels{u.Release, u.Environment}
	// "init": true, at "started"
	if u.Init {
		set.count(MetricStarted, u.Started, 1, l)
	}
	if u.Ended() {
		u.appendEnded(&set, l)
	}
	return set.points
}

// appendEnded writes the points of an update that ends its session.
func (u *Update) appendEnded(set *metricSet, l labels) {
	// "status", at "timestamp"
	dp := set.count(MetricEnded, u.Timestamp, 1, l)
	dp.Attributes().PutStr(AttrStatus, u.Status)
	dp.Attributes().PutBool(AttrErrored, u.Errored())
	if u.AbnormalMechanism != "" {
		dp.Attributes().PutStr(AttrAbnormalMechanism, u.AbnormalMechanism)
	}
	// "errors" > 0, or an error status
	if u.Errored() {
		set.count(MetricErrored, u.Timestamp, 1, l)
	}
	// "errors"
	if u.Errors > 0 {
		set.count(MetricErrors, u.Timestamp, u.Errors, l)
	}
	// "duration"
	if u.HasDur {
		set.duration(u.Timestamp, u.Duration, l)
	}
}

// errorCount reads "errors", which Relay reads as a u64: a count past
// int64 (what an OTLP Int holds) saturates there instead of reading as no
// errors at all.
func errorCount(x any) int64 {
	n, ok := x.(json.Number)
	if !ok {
		return 0
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	return errorCountOfFloat(string(n))
}

// errorCountOfFloat is errorCount of a number that is no int64: one past
// its range, or written with a fraction or exponent.
func errorCountOfFloat(text string) int64 {
	f, err := strconv.ParseFloat(text, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f == math.Trunc(f) && f > math.MinInt64:
		return int64(f) // written 3.0
	}
	return 0
}
