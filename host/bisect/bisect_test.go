package bisect

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

var (
	errBad     = errors.New("bad item")
	errSlow    = errors.New("too slow")
	errStopped = errors.New("stopped")
)

// batch is a batch of n items, some of them bad or slow; a call fails
// when it holds one (slow first), else its output is its items.
type batch struct {
	n           int
	bad, slow   map[int]bool
	failOnBad   bool // Reject fails the job (the fail policy)
	calls       int
	pending     []int
	out         []int
	rejected    []int
	narrowables func(error) bool
}

func (b *batch) Run(lo, hi int) error {
	b.calls++
	var err error
	for i := lo; i < hi; i++ {
		switch {
		case b.slow[i]:
			return errSlow
		case b.bad[i]:
			err = errBad
		}
	}
	if err == nil {
		b.pending = b.pending[:0]
		for i := lo; i < hi; i++ {
			b.pending = append(b.pending, i)
		}
	}
	return err
}

func (b *batch) Deliver() error { b.out = append(b.out, b.pending...); return nil }

func (b *batch) Narrowable(err error) bool {
	if b.narrowables != nil {
		return b.narrowables(err)
	}
	return errors.Is(err, errBad) || errors.Is(err, errSlow)
}

func (b *batch) Slow(err error) bool { return errors.Is(err, errSlow) }

func (b *batch) Reject(i int, cause error) error {
	b.rejected = append(b.rejected, i)
	if b.failOnBad {
		return fmt.Errorf("item %d: %w", i, cause)
	}
	return nil
}

// run runs the whole batch as one call and narrows its failure.
func (b *batch) run() error {
	if err := b.Run(0, b.n); err != nil {
		return Narrow(b, 0, b.n, err)
	}
	return b.Deliver()
}

func set(items ...int) map[int]bool {
	m := map[int]bool{}
	for _, i := range items {
		m[i] = true
	}
	return m
}

func without(n int, bad ...int) []int {
	var out []int
	for i := range n {
		if !slices.Contains(bad, i) {
			out = append(out, i)
		}
	}
	return out
}

// TestOneBadItemCostsTwoLogN: in a batch of 512 with one bad item, the
// good items' output arrives once and in order, the bad one is rejected,
// in 2·log2(512) = 18 calls after the first.
func TestOneBadItemCostsTwoLogN(t *testing.T) {
	for _, bad := range []int{0, 1, 255, 256, 511} {
		b := &batch{n: 512, bad: set(bad)}
		if err := b.run(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(b.out, without(512, bad)) || !slices.Equal(b.rejected, []int{bad}) {
			t.Errorf("bad %d: output of %d items, rejected %v", bad, len(b.out), b.rejected)
		}
		if b.calls != 1+18 {
			t.Errorf("bad %d: %d calls, want 19", bad, b.calls)
		}
	}
}

// TestBadItemsAreAllRejectedInOrder: several bad items, adjacent or not,
// each rejected once, in input order, and the rest delivered in order.
func TestBadItemsAreAllRejectedInOrder(t *testing.T) {
	for _, bad := range [][]int{{3, 4}, {0, 9}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {}} {
		b := &batch{n: 11, bad: set(bad...)}
		if err := b.run(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(b.out, without(11, bad...)) || !slices.Equal(b.rejected, bad) {
			t.Errorf("bad %v: output %v, rejected %v", bad, b.out, b.rejected)
		}
	}
}

// TestFailStopsAtTheFirstBadItem: a Reject that fails the job ends the
// narrowing at the first bad item, with the output of the items before
// it delivered and none after.
func TestFailStopsAtTheFirstBadItem(t *testing.T) {
	b := &batch{n: 16, bad: set(9, 12), failOnBad: true}
	err := b.run()
	if err == nil || err.Error() != "item 9: bad item" {
		t.Fatalf("error %v, want item 9's", err)
	}
	if !slices.Equal(b.out, without(9)) || !slices.Equal(b.rejected, []int{9}) {
		t.Errorf("output %v, rejected %v; want items 0 to 8, then 9 rejected", b.out, b.rejected)
	}
}

// TestSlowItemsRunOneACall: a call stopped at its time limit is not
// halved (each half holding the slow item would wait the limit again):
// its items run one a call, so a batch of 8 with one slow item waits for
// it twice, the batch's call and its own.
func TestSlowItemsRunOneACall(t *testing.T) {
	b := &batch{n: 8, slow: set(5)}
	if err := b.run(); err != nil {
		t.Fatal(err)
	}
	if b.calls != 1+8 || !slices.Equal(b.out, without(8, 5)) || !slices.Equal(b.rejected, []int{5}) {
		t.Errorf("%d calls, output %v, rejected %v; want 9 calls, 5 rejected", b.calls, b.out, b.rejected)
	}
}

// TestNotNarrowable: a failure that may not be narrowed (a cancelled job)
// is returned as it is, before any call, and so is one met while
// narrowing.
func TestNotNarrowable(t *testing.T) {
	b := &batch{n: 4, bad: set(2), narrowables: func(error) bool { return false }}
	if err := b.run(); !errors.Is(err, errBad) || b.calls != 1 || len(b.out)+len(b.rejected) != 0 {
		t.Errorf("%v after %d calls", err, b.calls)
	}
	n := 0
	b = &batch{n: 4, bad: set(2), narrowables: func(error) bool { n++; return n == 1 }}
	if err := b.run(); !errors.Is(err, errBad) {
		t.Errorf("a failure met while narrowing: %v, want it returned", err)
	}
	if err := Narrow(b, 2, 2, errStopped); err != errStopped {
		t.Errorf("no items: %v", err)
	}
}
