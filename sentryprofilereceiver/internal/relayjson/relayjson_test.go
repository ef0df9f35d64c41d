package relayjson

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name     string
		write    func(http.ResponseWriter)
		status   int
		wantBody string
	}{
		{"error", func(w http.ResponseWriter) { WriteError(w, http.StatusNotFound, "not found") }, 404, `{"detail":"not found"}`},
		{"error detail escaped", func(w http.ResponseWriter) { WriteError(w, 400, `a "quoted" <tag>`) }, 400,
			`{"detail":"a \"quoted\" \u003ctag\u003e"}`},
		{"body", func(w http.ResponseWriter) { Write(w, http.StatusOK, []byte(`{"id":"x"}`)) }, 200, `{"id":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tt.write(rec)
			assert.Equal(t, tt.status, rec.Code)
			assert.Equal(t, tt.wantBody, rec.Body.String())
			assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			assert.Equal(t, len(tt.wantBody), int(rec.Result().ContentLength))
		})
	}
}
