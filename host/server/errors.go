package server

import (
	"errors"
	"fmt"
)

// Code says what kind of refusal an Error is; the HTTP adapter maps each
// to a status.
type Code int

// Refusals a caller can branch on.
const (
	Internal      Code = iota // 500: a bug or an unexpected failure of the host
	Invalid                   // 400: the request or the pipeline is wrong
	Forbidden                 // 403: not allowed for this principal
	QuotaExceeded             // 403: a tenant quota or the host's capacity refuses it
	NotFound                  // 404: no such job or plugin (or another tenant's)
	Conflict                  // 409: not possible in the current state
	Unprocessable             // 422: the plugin fails the ABI checks
	Unavailable               // 503: the server is shutting down
	TooLarge                  // 413: the pipeline is larger than the server takes
)

// Problem is one lint problem of a pipeline, at a line and column.
type Problem struct {
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Message string `json:"message"`
}

// Error is a refusal: what failed (Msg), where (a field, a quota, a
// file position), and for a pipeline every lint problem, for a plugin
// every reason it was refused.
type Error struct {
	Code     Code
	Msg      string
	Where    string
	Problems []Problem // lint problems, sorted by position
	Reasons  []string  // why a plugin was refused
}

func (e *Error) Error() string {
	if e.Where == "" {
		return e.Msg
	}
	return e.Where + ": " + e.Msg
}

func errorf(code Code, where, format string, args ...any) *Error {
	return &Error{Code: code, Where: where, Msg: fmt.Sprintf(format, args...)}
}

// CodeOf returns the Code of err, Internal when it is not an *Error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}
