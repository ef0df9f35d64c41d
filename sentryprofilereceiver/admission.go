package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// Admission: what a request must show before it takes an envelope slot.
// Its key is checked first, from its headers and query, or else from the
// envelope header's dsn, for which only the header line is read (bounded,
// and paced): a request that is not authenticated holds no slot and no
// pooled buffer, whatever it sends or fails to send.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
)

// admitEnvelope authenticates an envelope request before it may take a
// slot, and returns the body to read the envelope from. A key in the
// headers or the query needs no body. Without one, only the envelope
// header's dsn can carry the key: the first line of the body is read,
// within maxAuthHeaderBytes and the body's pace, and handed back in front
// of the rest. readEnvelope checks every form again together once the
// envelope header is read.
func (h *envelopeHandler) admitEnvelope(r *http.Request, projectID string) (io.Reader, *requestError) {
	if !needsEnvelopeDSN(r) {
		return r.Body, h.auth.authenticate(r, "", projectID)
	}
	pacedBodyOf(r).start()
	head, err := readEnvelopeHead(r.Body, maxAuthHeaderBytes)
	if err != nil {
		return nil, h.bodyError(err)
	}
	header, err := envelope.NewReader(bytes.NewReader(head), envelope.Limits{}).Header()
	if err != nil {
		return nil, h.bodyError(err)
	}
	if rerr := h.auth.authenticate(r, header.DSN, projectID); rerr != nil {
		return nil, rerr
	}
	return io.MultiReader(bytes.NewReader(head), r.Body), nil
}

// maxAuthHeaderBytes bounds what is read of a body before the request is
// authenticated, when only the envelope header's dsn can carry the key (a
// tunnel, which forwards the envelope without auth headers). Real envelope
// headers are under 2 KiB (Android's, the largest, about 1 KiB). The
// header must also arrive at the body's pace.
const maxAuthHeaderBytes = 8 << 10

// errAuthHeaderTooLarge: the envelope header line, the only place of the
// key, is longer than maxAuthHeaderBytes.
var errAuthHeaderTooLarge = fmt.Errorf("envelope header line longer than %d bytes, and no key outside it", maxAuthHeaderBytes)

// readEnvelopeHead reads body until it holds the envelope header line (the
// first line that is not blank), the body ends or limit bytes are read
// (errAuthHeaderTooLarge). What it returns may run past the line.
func readEnvelopeHead(body io.Reader, limit int) ([]byte, error) {
	buf := make([]byte, 0, min(512, limit))
	for {
		var err error
		if buf, err = growHead(buf, limit); err != nil {
			return nil, err
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if headerLineEnds(buf) || errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// growHead doubles a full buffer up to limit; errAuthHeaderTooLarge when
// it is full at limit.
func growHead(buf []byte, limit int) ([]byte, error) {
	if len(buf) < cap(buf) {
		return buf, nil
	}
	if len(buf) >= limit {
		return nil, errAuthHeaderTooLarge
	}
	grown := make([]byte, len(buf), min(2*cap(buf), limit))
	copy(grown, buf)
	return grown, nil
}

// headerLineEnds reports whether b holds a newline after its first byte
// that is not JSON whitespace, which the envelope reader skips.
func headerLineEnds(b []byte) bool {
	start := bytes.IndexFunc(b, func(r rune) bool { return r != ' ' && r != '\t' && r != '\r' && r != '\n' })
	return start >= 0 && bytes.IndexByte(b[start:], '\n') >= 0
}
