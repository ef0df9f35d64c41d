package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// dropLogInterval is how often each reason may be logged: a misbehaving
// client sending thousands of bad items a second costs one line per reason
// per interval, and the line says how many were left out.
const dropLogInterval = 10 * time.Second

// maxLoggedSDKName bounds the client-chosen SDK name in a log line.
const maxLoggedSDKName = 64

// dropLog writes a warn line for each dropped profile item, rate-limited per
// Relay reason. It logs no payload content and no key: the item type, the
// reason, the project and the SDK that sent it.
type dropLog struct {
	logger   *zap.Logger
	interval time.Duration
	now      func() time.Time

	mu sync.Mutex
	// byReason holds one entry per reason seen; reasons are Relay's fixed
	// set, so the map stays small whatever clients send.
	byReason map[sentry.Reason]*reasonLog
}

type reasonLog struct {
	last       time.Time // when a line was last written
	suppressed int       // drops since then that were not logged
}

func newDropLog(logger *zap.Logger) *dropLog {
	return &dropLog{logger: logger, interval: dropLogInterval, now: time.Now, byReason: make(map[sentry.Reason]*reasonLog)}
}

// droppedItem describes one dropped item for the log.
type droppedItem struct {
	itemType  string
	reason    sentry.Reason
	projectID string
	sdk       string // client_sdk.name of the payload, else the envelope header's sdk.name
	item      int    // position in the envelope
}

// dropped logs d unless a line for the same reason was written less than
// an interval ago, in which case it is counted for the next line.
func (l *dropLog) dropped(d droppedItem) {
	suppressed, ok := l.due(d.reason)
	if !ok {
		return
	}
	l.logger.Warn("Item dropped",
		zap.String("item_type", d.itemType),
		zap.String("reason", string(d.reason)),
		zap.String("project_id", d.projectID),
		zap.String("sdk", loggedSDKName(d.sdk)),
		zap.Int("item", d.item),
		zap.Int("suppressed_since_last", suppressed),
		zap.Duration("log_interval", l.interval),
	)
}

// due reports whether a line for reason is due, with the drops suppressed
// since the last one; when not, it counts this drop for the next line.
func (l *dropLog) due(reason sentry.Reason) (int, bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.byReason[reason]
	if r == nil {
		r = &reasonLog{}
		l.byReason[reason] = r
	}
	if !r.last.IsZero() && now.Sub(r.last) < l.interval {
		r.suppressed++
		return 0, false
	}
	suppressed := r.suppressed
	r.last, r.suppressed = now, 0
	return suppressed, true
}

// loggedSDKName bounds an SDK name a client chose; "unknown" when none.
func loggedSDKName(sdk string) string {
	if sdk == "" {
		return "unknown"
	}
	return sdk[:min(len(sdk), maxLoggedSDKName)]
}
