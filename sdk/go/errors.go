package sdk

import (
	"errors"

	"github.com/sluicehq/sluice/abi"
)

// Error is an error that chooses the status the failing export returns to
// the host. Errors of any other type returned by an operator function give
// abi.StatusUser (abi.StatusConfig when returned from the OnOpen hook).
type Error struct {
	Status abi.Status
	Text   string
}

// Error returns the text sent to the host.
func (e *Error) Error() string { return e.Text }

// ConfigError returns an error that fails open with abi.StatusConfig.
func ConfigError(text string) error { return &Error{Status: abi.StatusConfig, Text: text} }

// errState is the error of keyed-state misuse (abi.StatusState).
func errState(text string) error { return &Error{Status: abi.StatusState, Text: text} }

// statusOf is the status an export returns for err, def unless err
// carries one.
func statusOf(err error, def abi.Status) abi.Status {
	var e *Error
	if errors.As(err, &e) && e.Status != abi.StatusOK {
		return e.Status
	}
	return def
}

// prefixed keeps err's status and puts a context in front of its text.
func prefixed(prefix string, err error, def abi.Status) error {
	return &Error{Status: statusOf(err, def), Text: prefix + err.Error()}
}

// panicText renders a recovered panic value without fmt.
func panicText(v any) string {
	switch x := v.(type) {
	case error:
		return x.Error()
	case string:
		return x
	case interface{ String() string }:
		return x.String()
	}
	return "a panic value that is neither an error nor a string"
}
