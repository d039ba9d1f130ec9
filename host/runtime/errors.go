package runtime

import (
	"errors"
	"fmt"
	"strings"
)

// OpError is the failure of one operator subtask. Run returns the first
// one, as Flink reports the root cause with the task that failed.
type OpError struct {
	Operator    string
	Subtask     int // 0-based; printed 1-based, as Flink does
	Parallelism int
	Err         error
}

func (e *OpError) Error() string {
	inner := e.Err.Error()
	// a plugin's error names the operator and subtask already (plugin "p"
	// (operator op, subtask 2/4) export ...): once is enough
	if strings.Contains(inner, fmt.Sprintf("(operator %s, subtask %d/%d)", e.Operator, e.Subtask+1, e.Parallelism)) {
		return inner
	}
	return fmt.Sprintf("operator %q (subtask %d/%d): %s", e.Operator, e.Subtask+1, e.Parallelism, inner)
}

func (e *OpError) Unwrap() error { return e.Err }

// KeyError is a record whose key a HASH or CUSTOM edge could not read:
// the edge's key belongs to the operator it leads to (To), so a message
// can point at that operator's key-by.
type KeyError struct {
	What string // "key-by" or "custom partition key"
	Key  string // the key as the pipeline says it: "accountId", ["a","b"], plugin "p"
	To   string // the operator the edge leads to
	Err  error
}

func (e *KeyError) Error() string { return fmt.Sprintf("%s %s of %q: %s", e.What, e.Key, e.To, e.Err) }

func (e *KeyError) Unwrap() error { return e.Err }

// errStopped is returned by blocking operations when the job is torn down
// (a cancel, or the drain after a failure took too long).
var errStopped = errors.New("job stopped")

// ErrBatchUnbounded is returned by Run for a BATCH job with an unbounded
// source.
var ErrBatchUnbounded = errors.New("batch mode needs bounded sources")

// opErr wraps err as the failure of op's subtask, unless it already names
// an operator.
func opErr(op string, subtask, parallelism int, err error) *OpError {
	var oe *OpError
	if errors.As(err, &oe) {
		return oe
	}
	return &OpError{Operator: op, Subtask: subtask, Parallelism: parallelism, Err: err}
}
