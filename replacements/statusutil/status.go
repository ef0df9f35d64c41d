// Package statusutil converts between HTTP status codes and gRPC statuses for
// the collector's OTLP receiver and exporters.
//
// It is a local stand-in for the collector's internal module of the same
// path: collector v0.164.0's otlpreceiver, otlpexporter and otlphttpexporter
// import it, and the module proxy this project builds against refuses its
// source archive. It implements only the two functions those components call,
// with the behaviour the OTLP specification asks for. Where the proxy serves
// the real module, delete the matching `replaces:` line in builder-config.yaml
// and this module is no longer used.
package statusutil

import (
	"net/http"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// grpcCodeForHTTPStatus follows gRPC's published HTTP-to-gRPC status mapping,
// with the two departures OTLP/HTTP makes: 400 means the request itself was
// invalid (InvalidArgument, never retried) rather than an internal error, and
// 429 means the server is throttling (ResourceExhausted, retried with backoff).
var grpcCodeForHTTPStatus = map[int]codes.Code{
	http.StatusBadRequest:         codes.InvalidArgument,
	http.StatusUnauthorized:       codes.Unauthenticated,
	http.StatusForbidden:          codes.PermissionDenied,
	http.StatusNotFound:           codes.Unimplemented,
	http.StatusTooManyRequests:    codes.ResourceExhausted,
	http.StatusBadGateway:         codes.Unavailable,
	http.StatusServiceUnavailable: codes.Unavailable,
	http.StatusGatewayTimeout:     codes.Unavailable,
}

// NewStatusFromMsgAndHTTPCode returns a status carrying errMsg whose gRPC code
// corresponds to the HTTP statusCode. Status codes without a specific mapping
// become codes.Unknown, which OTLP clients treat as not retryable.
func NewStatusFromMsgAndHTTPCode(errMsg string, statusCode int) *status.Status {
	code, ok := grpcCodeForHTTPStatus[statusCode]
	if !ok {
		code = codes.Unknown
	}
	return status.New(code, errMsg)
}

// GetRetryInfo returns the first RetryInfo detail attached to st, or nil when
// st is nil or carries none. Servers attach it to throttling responses to say
// how long the client should wait before retrying.
func GetRetryInfo(st *status.Status) *errdetails.RetryInfo {
	if st == nil {
		return nil
	}
	for _, detail := range st.Details() {
		if info, ok := detail.(*errdetails.RetryInfo); ok {
			return info
		}
	}
	return nil
}
