package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/sluicehq/sluice/host/jsonout"
	"github.com/sluicehq/sluice/host/server"
)

// errorBody is every error response: what failed, where, and for a
// pipeline every lint problem, for a plugin every reason it was refused.
type errorBody struct {
	Error    string           `json:"error"`
	Where    string           `json:"where"`
	Problems []server.Problem `json:"problems,omitempty"`
	Reasons  []string         `json:"reasons,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = jsonout.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, where, format string, args ...any) {
	writeJSON(w, status, errorBody{Error: fmt.Sprintf(format, args...), Where: where})
}

// statusOf maps a server refusal to its HTTP status.
var statusOf = map[server.Code]int{
	server.Internal:      http.StatusInternalServerError,
	server.Invalid:       http.StatusBadRequest,
	server.Forbidden:     http.StatusForbidden,
	server.QuotaExceeded: http.StatusForbidden,
	server.NotFound:      http.StatusNotFound,
	server.Conflict:      http.StatusConflict,
	server.Unprocessable: http.StatusUnprocessableEntity,
	server.Unavailable:   http.StatusServiceUnavailable,
	server.TooLarge:      http.StatusRequestEntityTooLarge,
}

// writeServerError writes err as the JSON error body with its status.
func writeServerError(w http.ResponseWriter, r *http.Request, err error) {
	var e *server.Error
	if !errors.As(err, &e) {
		writeError(w, http.StatusInternalServerError, r.Method+" "+r.URL.Path, "%v", err)
		return
	}
	if e.Code == server.Unavailable && (e.Where == "host slots" || e.Where == server.Busy) {
		w.Header().Set("Retry-After", "5") // the host's room comes back as jobs end, parses as they finish
	}
	writeJSON(w, statusOf[e.Code], errorBody{Error: e.Msg, Where: e.Where, Problems: e.Problems, Reasons: e.Reasons})
}

// intParam reads an optional integer query parameter.
func intParam(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, errors.New("query parameter " + name + " must be an integer, 0 or more, got " + strconv.Quote(v))
	}
	return n, nil
}
