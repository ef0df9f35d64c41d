package statusutil

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

func TestNewStatusFromMsgAndHTTPCode(t *testing.T) {
	tests := []struct {
		name       string
		statusCode int
		want       codes.Code
	}{
		{"bad request is the client's fault", http.StatusBadRequest, codes.InvalidArgument},
		{"unauthorized", http.StatusUnauthorized, codes.Unauthenticated},
		{"forbidden", http.StatusForbidden, codes.PermissionDenied},
		{"not found means the signal is not served", http.StatusNotFound, codes.Unimplemented},
		{"too many requests is throttling", http.StatusTooManyRequests, codes.ResourceExhausted},
		{"bad gateway", http.StatusBadGateway, codes.Unavailable},
		{"service unavailable", http.StatusServiceUnavailable, codes.Unavailable},
		{"gateway timeout", http.StatusGatewayTimeout, codes.Unavailable},
		{"internal server error has no specific code", http.StatusInternalServerError, codes.Unknown},
		{"payload too large has no specific code", http.StatusRequestEntityTooLarge, codes.Unknown},
		{"success code is still not OK", http.StatusOK, codes.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := NewStatusFromMsgAndHTTPCode("boom: "+tt.name, tt.statusCode)
			require.NotNil(t, st)
			assert.Equal(t, tt.want, st.Code())
			assert.Equal(t, "boom: "+tt.name, st.Message())
		})
	}
}

func TestGetRetryInfo(t *testing.T) {
	withDetails := func(t *testing.T, details ...*errdetails.RetryInfo) *status.Status {
		t.Helper()
		st := status.New(codes.Unavailable, "throttled")
		for _, d := range details {
			var err error
			st, err = st.WithDetails(d)
			require.NoError(t, err)
		}
		return st
	}
	withOtherDetail := func(t *testing.T) *status.Status {
		t.Helper()
		st, err := status.New(codes.ResourceExhausted, "quota").WithDetails(&errdetails.QuotaFailure{})
		require.NoError(t, err)
		st, err = st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(7 * time.Second)})
		require.NoError(t, err)
		return st
	}

	tests := []struct {
		name      string
		status    func(t *testing.T) *status.Status
		wantDelay time.Duration
		wantNil   bool
	}{
		{"nil status", func(*testing.T) *status.Status { return nil }, 0, true},
		{"no details", func(t *testing.T) *status.Status { return withDetails(t) }, 0, true},
		{"retry info present", func(t *testing.T) *status.Status {
			return withDetails(t, &errdetails.RetryInfo{RetryDelay: durationpb.New(3 * time.Second)})
		}, 3 * time.Second, false},
		{"first retry info wins", func(t *testing.T) *status.Status {
			return withDetails(t,
				&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Second)},
				&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Minute)})
		}, time.Second, false},
		{"skips unrelated details", withOtherDetail, 7 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := GetRetryInfo(tt.status(t))
			if tt.wantNil {
				assert.Nil(t, info)
				return
			}
			require.NotNil(t, info)
			assert.Equal(t, tt.wantDelay, info.GetRetryDelay().AsDuration())
		})
	}
}
