package fuel

import (
	"errors"
	"fmt"
)

// ErrExhausted is the cause of a call that trapped because it ran out of
// fuel.
var ErrExhausted = errors.New("fuel exhausted")

// Counter is an instance's fuel counter as the host reads and writes it:
// wazero's api.MutableGlobal for the export ExportName satisfies it. The
// value is the counter's i64 bit pattern.
type Counter interface {
	Get() uint64
	Set(v uint64)
}

// Meter applies per-call budgets to one instance's counter. Like the
// instance, it is not safe for concurrent use.
type Meter struct {
	c      Counter
	budget int64
}

// NewMeter returns a Meter for the counter of one instance.
func NewMeter(c Counter) *Meter { return &Meter{c: c} }

// Begin sets the counter to budget before a call into the instance. A
// negative budget counts as 0 (the call traps at its first site).
func (m *Meter) Begin(budget int64) {
	m.budget = max(budget, 0)
	m.c.Set(uint64(m.budget))
}

// Remaining returns the counter's current value; negative once the guest
// has run out.
func (m *Meter) Remaining() int64 { return int64(m.c.Get()) }

// End reads the counter after the call that Begin armed returned callErr.
// used is the fuel charged during the call, including the charge of the
// site that ran out, if one did. When the call failed and the counter is
// negative, the guest ran out of fuel: err wraps both ErrExhausted and
// callErr. Otherwise err is callErr unchanged: nil for a call that
// succeeded (used exceeds the budget only if host functions charged past
// it after the guest's last check), or some other trap or host error, in
// which case used may miss work done since the guest last stored its
// counter.
func (m *Meter) End(callErr error) (used int64, err error) {
	left := m.Remaining()
	used = m.budget - left
	if callErr != nil && left < 0 {
		return used, fmt.Errorf("%w (budget %d): %w", ErrExhausted, m.budget, callErr)
	}
	return used, callErr
}
