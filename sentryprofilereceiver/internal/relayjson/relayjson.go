// Package relayjson writes answers in the shape Relay gives them: a JSON
// body, its Content-Type and Content-Length, and for a refusal a
// {"detail": "..."} document.
package relayjson // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/relayjson"

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// WriteError answers status with {"detail": detail}. The detail reaches the
// client: it never holds a key or payload content.
func WriteError(w http.ResponseWriter, status int, detail string) {
	body, err := json.Marshal(struct {
		Detail string `json:"detail"`
	}{detail})
	if err != nil { // a string always marshals; keep the status regardless
		body = []byte("{}")
	}
	Write(w, status, body)
}

// Write answers status with a JSON body.
func Write(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
