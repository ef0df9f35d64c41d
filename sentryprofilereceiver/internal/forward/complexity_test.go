package forward

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/complexityguard"
)

// TestComplexityGuardSpoolRecord is the complexity guard's row for the
// spool's records (internal/complexityguard names it): a request with a
// body of n bytes and n/64 headers encodes and decodes with allocations
// linear in its size.
func TestComplexityGuardSpoolRecord(t *testing.T) {
	complexityguard.CheckLinear(t, "body bytes and headers of a spooled request", 64<<10, func(tb testing.TB, n int) complexityguard.Sized {
		header := http.Header{}
		for i := range n / 64 {
			header.Add("X-Header", strings.Repeat("h", i%32))
		}
		rec := &spoolRecord{Method: http.MethodPost, URI: "/api/1/envelope/", Header: header, Body: []byte(strings.Repeat("b", n))}
		data, err := rec.encode()
		if err != nil {
			tb.Fatal(err)
		}
		var out int64
		return complexityguard.Sized{
			Run: func() {
				got, err := decodeSpoolRecord(data)
				if err != nil {
					tb.Errorf("decode: %v", err)
					return
				}
				again, err := got.encode()
				if err != nil {
					tb.Errorf("encode: %v", err)
				}
				out = int64(len(again))
			},
			Input:  func() int64 { return int64(len(data)) },
			Output: func() int64 { return out },
		}
	})
}
