package web

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sluicehq/sluice/host/server"
)

// TestBusyAnswersRetryAfter: a request that waited its turn out (the
// server parsing or compiling others' pipelines) gets 503 with
// Retry-After, as one refused for want of slots does.
func TestBusyAnswersRetryAfter(t *testing.T) {
	for _, where := range []string{server.Busy, "host slots"} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/v1/jobs", nil)
		writeServerError(w, r, &server.Error{Code: server.Unavailable, Where: where, Msg: "retry later"})
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "5" {
			t.Errorf("%s: %d, Retry-After %q", where, w.Code, w.Header().Get("Retry-After"))
		}
	}
	w := httptest.NewRecorder()
	writeServerError(w, httptest.NewRequest("POST", "/v1/jobs", nil), &server.Error{Code: server.Unavailable, Where: "server", Msg: "shutting down"})
	if w.Header().Get("Retry-After") != "" {
		t.Errorf("shutting down: Retry-After %q", w.Header().Get("Retry-After"))
	}
}
