// Package bisect narrows the failure of a call over a batch of items down
// to the items that fail alone, by bisection: it runs each half again and
// splits a half that fails again until one item is left. host/plugin uses
// it to find the records of a failed sluice_process call (poison-record
// isolation); what a call is, what may be narrowed and what becomes of a
// record that fails alone are the caller's (Calls).
//
// Calls are made in input order and the output of every call that
// succeeds is handed on at once, so the good items' output arrives
// exactly once and in order. A batch of n items with one bad item costs
// about 2·log2(n) calls. A call stopped at its time limit is not bisected:
// each half holding the slow item would wait a whole limit again; its
// items run one call each instead, so only the slow ones wait.
package bisect

// Calls is what Narrow needs of the calls it makes over items [0, n).
type Calls interface {
	// Run runs items [lo, hi) as one call. Its output waits for Deliver.
	Run(lo, hi int) error
	// Deliver hands on the output of the last call Run made that
	// succeeded; an error ends the narrowing.
	Deliver() error
	// Narrowable reports whether a call's failure may be narrowed down
	// (not, say, a cancelled job's).
	Narrowable(err error) bool
	// Slow reports whether err stopped a call at its time limit.
	Slow(err error) bool
	// Reject takes item i, which failed alone with cause; an error ends
	// the narrowing (the job fails on that item).
	Reject(i int, cause error) error
}

// Narrow narrows down cause, the failure of items [lo, hi) run as one
// call: one item goes to Reject; more are run again in parts, in order, by
// halves, or one item a call when cause is Slow. It returns nil when every
// part's output was delivered and every item that failed alone rejected,
// else the error that ended it.
func Narrow(c Calls, lo, hi int, cause error) error {
	if hi <= lo || !c.Narrowable(cause) {
		return cause
	}
	if hi-lo == 1 {
		return c.Reject(lo, cause)
	}
	step := (hi - lo + 1) / 2
	if c.Slow(cause) {
		step = 1
	}
	for at := lo; at < hi; at += step {
		end := min(at+step, hi)
		var err error
		if err = c.Run(at, end); err != nil {
			err = Narrow(c, at, end, err)
		} else {
			err = c.Deliver()
		}
		if err != nil {
			return err
		}
	}
	return nil
}
