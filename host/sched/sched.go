// Package sched is how the guests of several tenants share the machine's
// CPU: when a long call gives way (GiveWay), judged by whether the CPU is
// contended at all (Pressure, from Linux's pressure stall information).
// host/plugin's fuel bound asks it at every slice a call spends
// (RATIONALE.md, "Why the budget comes in slices").
package sched

import "time"

// A long call gives way to other tenants: a call past its first slice,
// while another Host starts calls and the machine's CPU is contended,
// sleeps k times as long as its last slice ran (at most MaxGiveWay), so
// that it takes about 1/(1+k) of the CPU they compete for. k grows with
// the call's age, one for every GiveWayAge slices it has run, to at most
// MaxGiveWayFactor: a batch of a few slices is barely held back, a runaway
// soon runs at a few percent. A call sleeps at most GiveWayShare times its
// budget's time in all, so that even a contended runaway stops within a
// few times its call-timeout.
const (
	GiveWayAge       = 8
	MaxGiveWayFactor = 32
	MaxGiveWay       = 50 * time.Millisecond
	GiveWayShare     = 3
)

// GiveWay is how long a call that has had slices slices, the last of
// which took wall time, sleeps while other tenants are busy: nothing
// unless the CPU is contended, else a multiple of the slice that grows
// with the call's age.
func GiveWay(wall time.Duration, contended bool, slices int64) time.Duration {
	if !contended {
		return 0
	}
	k := time.Duration(min(1+slices/GiveWayAge, MaxGiveWayFactor))
	return min(k*wall, MaxGiveWay)
}
