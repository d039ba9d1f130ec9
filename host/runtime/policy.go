package runtime

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/host/plan"
)

// ErrorPolicy is what an operator does with a record it cannot process:
// the pipeline's on-error.
type ErrorPolicy uint8

// Error policies.
const (
	// PolicyFail fails the job, naming the record (the default).
	PolicyFail ErrorPolicy = iota
	// PolicySkip drops the record and counts it.
	PolicySkip
	// PolicyDeadLetter sends the record, with the error, to the
	// operator's side output DeadLetterTag and counts it.
	PolicyDeadLetter
)

// DeadLetterTag is the side-output tag of an operator's dead letters: a
// sink reads them with `input: op.dead-letter`.
const DeadLetterTag = "dead-letter"

// ParsePolicy reads an on-error value as the pipeline writes it: "fail",
// "skip" or "dead-letter"; "" is fail.
func ParsePolicy(s string) (ErrorPolicy, error) {
	switch s {
	case "", "fail":
		return PolicyFail, nil
	case "skip":
		return PolicySkip, nil
	case DeadLetterTag:
		return PolicyDeadLetter, nil
	}
	return PolicyFail, fmt.Errorf("unknown on-error %q: want fail, skip or dead-letter", s)
}

func (p ErrorPolicy) String() string {
	switch p {
	case PolicySkip:
		return "skip"
	case PolicyDeadLetter:
		return DeadLetterTag
	}
	return "fail"
}

// RecordFailure is one record an operator could not process, handed to
// OpenContext.Reject.
type RecordFailure struct {
	// Record is the record's envelope (abi wire format); nil when the
	// input was not a record (a source's unreadable line, see Raw).
	Record []byte
	// Raw is the input as read when it is not a record.
	Raw []byte
	// Position is the 1-based position of the record in the subtask's
	// input (0: unknown).
	Position int64
	// Input and Line say where a source read it (a file and its line).
	Input string
	Line  int
	// Plugin names the plugin that failed; "" for a built-in.
	Plugin string
	// Err is the failure, returned as it is under PolicyFail.
	Err error
	// Cause is the error text a dead letter carries; Err's text when
	// empty.
	Cause string
	// Restart reports that the failure poisoned a plugin instance, which
	// was replaced (counted in the metrics).
	Restart bool
}

func (f *RecordFailure) cause() string {
	if f.Cause != "" {
		return f.Cause
	}
	if f.Err != nil {
		return f.Err.Error()
	}
	return "record rejected"
}

func (f *RecordFailure) err() error {
	if f.Err != nil {
		return f.Err
	}
	return errors.New(f.cause())
}

// policyOf is op's on-error; the planner has checked the value.
func policyOf(op *plan.Operator) ErrorPolicy {
	if op == nil || op.Spec == nil {
		return PolicyFail
	}
	p, _ := ParsePolicy(op.Spec.OnError)
	return p
}
