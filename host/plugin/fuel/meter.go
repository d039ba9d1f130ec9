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
	budget int64 // the call's budget
	slice  int64 // what each refuel adds
	loaded int64 // fuel put into the counter during the call so far
}

// maxSlice bounds the counter after a refuel, so that the refund of a
// site's charge the refuel path adds (see emitter) cannot overflow it.
const maxSlice = 1 << 62

// NewMeter returns a Meter for the counter of one instance.
func NewMeter(c Counter) *Meter { return &Meter{c: c} }

// Begin sets the counter to budget (at most 2^62) before a call into the
// instance. A negative budget counts as 0 (the call traps at its first
// site).
func (m *Meter) Begin(budget int64) { m.BeginSliced(budget, budget) }

// BeginSliced arms a call with budget handed out in slices: the counter
// starts at the first slice, and each Refuel adds the next, until the
// budget is spent. A module instrumented with Options.Refuel then runs a
// call exactly as Begin(budget) would, trapping at the same instruction,
// with a host call between slices. A slice below 1 counts as the whole
// budget; slices are at most maxSlice.
func (m *Meter) BeginSliced(budget, slice int64) {
	m.budget = max(budget, 0)
	m.slice = slice
	if slice < 1 {
		m.slice = m.budget
	}
	m.slice = min(m.slice, maxSlice)
	m.loaded = min(m.budget, m.slice)
	m.c.Set(uint64(m.loaded))
}

// Refuel is the host side of the refuel import (Options.Refuel): counter
// is the value a site left negative. It returns the counter with the
// next slice added (more if that site's charge alone is larger), unless
// the budget cannot pay for the site: then it adds what is left of the
// budget and the result stays negative, so that the guest traps. A call
// given budget n×slice therefore refuels n times, the last time to trap
// if it runs that far. A counter that is not negative gets nothing (guest
// code cannot call the import, but a forged call must not mint fuel).
func (m *Meter) Refuel(counter int64) int64 {
	if counter >= 0 {
		return counter
	}
	left := m.budget - m.loaded
	if counter < -left { // the budget cannot pay for the site: trap
		m.loaded = m.budget
		return counter + left
	}
	need := -counter
	grant := min(left, m.slice)
	if need > grant {
		grant = need + min(left-need, m.slice)
	}
	m.loaded += grant
	return counter + grant
}

// Spent returns the fuel the call has charged so far, given the counter's
// current value (the argument of Refuel, or Remaining).
func (m *Meter) Spent(counter int64) int64 { return m.loaded - counter }

// Charge takes units from the counter for work done on the guest's behalf
// (a host function's copying): the guest's next metering site then pays
// for it, calling Refuel or trapping as if it had done the work itself.
func (m *Meter) Charge(units int64) {
	if units > 0 {
		m.c.Set(uint64(int64(m.c.Get()) - units))
	}
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
	used = m.loaded - left
	if callErr != nil && left < 0 {
		return used, fmt.Errorf("%w (budget %d): %w", ErrExhausted, m.budget, callErr)
	}
	return used, callErr
}
