package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// Pacing: a request's body must keep arriving while the receiver waits for
// it. The server's read_timeout alone lets a client that trickles its body
// hold what it was given (an envelope slot) for minutes; a paced body gets a
// read deadline that grows only as its bytes arrive.

import (
	"context"
	"io"
	"net/http"
	"time"
)

// The default pace. A client that trickles its body is cut off (408) after
// bodyGrace instead of holding its slot for read_timeout. 16 KiB/s is a
// poor mobile uplink; a real SDK envelope (tens to hundreds of KiB) is
// sent well within the grace, and a 50 MiB item at that rate stays within
// read_timeout.
const (
	bodyGrace   = 10 * time.Second
	bodyMinRate = 16 << 10
)

// pacing is the rule: bytes must arrive within grace, plus one second per
// minRate bytes received, of when pacing (re)started, and within limit of
// the request's start (read_timeout; 0 for none).
type pacing struct {
	grace   time.Duration
	minRate int64
	limit   time.Duration
}

// wrap paces every request of next: the body as it comes off the
// connection (before confighttp decompresses it, so a compressed body
// cannot buy time with its expansion) counts toward the rule, and the
// handler finds the pacer in the request's context. It sits in front of
// confighttp's chain, where the ResponseWriter is the server's own and can
// set the connection's read deadline.
func (p pacing) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		b := &pacedBody{ReadCloser: r.Body, rule: p, rc: http.NewResponseController(w)}
		if p.limit > 0 {
			b.limit = time.Now().Add(p.limit)
		}
		r.Body = b
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), pacedBodyKey{}, b)))
	})
}

// paceStep is the smallest move of the read deadline worth making: a client
// at exactly the minimum rate may be cut off this much early.
const paceStep = 100 * time.Millisecond

type pacedBodyKey struct{}

// pacedBodyOf is the request's paced body; nil when the request was not
// paced (its methods then do nothing).
func pacedBodyOf(r *http.Request) *pacedBody {
	b, _ := r.Context().Value(pacedBodyKey{}).(*pacedBody)
	return b
}

// pacedBody counts the bytes read from the connection and, once started,
// moves the connection's read deadline as they arrive. It is read by the
// handler's goroutine only, then by the server's after the handler
// returned.
type pacedBody struct {
	io.ReadCloser
	rule pacing
	rc   *http.ResponseController
	// limit is the request's read_timeout deadline; zero for none.
	limit time.Time

	started  bool
	since    time.Time // when pacing (re)started
	received int64     // bytes read since then
	deadline time.Time // the deadline last set
}

// start (re)starts pacing from now: from the moment a request is admitted,
// and again when it takes a slot, after waiting with its body unread.
func (b *pacedBody) start() {
	if b == nil {
		return
	}
	b.started, b.since, b.received = true, time.Now(), 0
	b.setDeadline()
}

func (b *pacedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.started && n > 0 {
		b.received += int64(n)
		b.setDeadline()
	}
	return n, err
}

// setDeadline moves the read deadline to what the bytes received so far
// have earned, within the request's read_timeout. It only touches the
// connection when the deadline moves by paceStep or more.
func (b *pacedBody) setDeadline() {
	earned := b.since.Add(b.rule.grace + time.Duration(b.received)*time.Second/time.Duration(b.rule.minRate))
	if !b.limit.IsZero() && earned.After(b.limit) {
		earned = b.limit
	}
	if !b.deadline.IsZero() && earned.Sub(b.deadline).Abs() < paceStep {
		return
	}
	b.deadline = earned
	// A connection that cannot take a deadline keeps the server's
	// read_timeout.
	_ = b.rc.SetReadDeadline(earned)
}
