package fuel_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/plugin/fuel"
)

func TestBulkInstructionsPayBySize(t *testing.T) {
	bin := watFile(t, "bulk")
	rt := newRuntime(t, nil)
	m := loadMetered(t, rt, "region", bin, fuel.Options{})
	for _, n := range []int64{0, 7, 8, 1000, 65536} {
		if _, used := m.mustCall("fill", plenty, uint64(n)); used != 36+n>>3 {
			t.Errorf("fill(%d) used %d, want %d", n, used, 36+n>>3)
		}
	}
	for _, n := range []int64{0, 1, 1000} {
		if _, used := m.mustCall("tfill", plenty, uint64(n)); used != 36+n<<6 {
			t.Errorf("tfill(%d) used %d, want %d", n, used, 36+n<<6)
		}
	}
	if res, used := m.mustCall("grow", plenty, 1); res[0] != 2 || used != 130 {
		t.Errorf("grow(1) = %d using %d, want 2 using 130", res[0], used)
	}
	// The charge comes before the work: a budget one short of a fill's
	// size stops it before any byte is written.
	if left := m.mustExhaust("fill", 36+65536>>3-1, 65536); left != -1 {
		t.Errorf("fill with budget one short: counter %d, want -1", left)
	}
	// A runaway doing its work in bulk stops within one iteration's charge.
	perIteration := int64(32+3+2+1) + 65536>>3 // region {i32.const×3, memory.fill, br, end} + bytes
	if left := m.mustExhaust("fillspin", 10_000_000); left >= 0 || left < -perIteration {
		t.Errorf("fillspin: counter %d, want within [-%d, -1]", left, perIteration)
	}
	// Parameters and locals keep their values next to the scratch local.
	orig := load(t, rt, "plain", bin)
	want := plain(t, orig, "params", 1<<40, 100)
	if got, _ := m.mustCall("params", plenty, 1<<40, 100); !slices.Equal(got, want) || want[0] != 1<<40+141 {
		t.Errorf("params = %v, want %v (= %d)", got, want, int64(1<<40+141))
	}
	// CostSite counts entries and iterations only.
	s := loadMetered(t, rt, "site", bin, fuel.Options{Model: fuel.CostSite})
	if _, used := s.mustCall("fill", plenty, 65536); used != 1 {
		t.Errorf("CostSite fill used %d, want 1", used)
	}
}

func TestCachedCounterIsStoredAtEveryExit(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t, nil)
	chargeHost(t, rt)
	m := loadMetered(t, rt, "exits", watFile(t, "exits"), fuel.Options{})
	for _, n := range []int64{1, 2, 100} {
		for _, c := range []struct {
			fn         string
			want, used int64
		}{
			{"calls", n, 5 + 13*(n+1) + 4*n},
			{"early", n, 3 + 13*(n+1)},
			{"brout", n, 3 + 12*(n+1)},
			{"tableout", -1, 2 + 9*n},
			{"hostcharge", -1, 2 + 1011*n},
		} {
			res, used := m.mustCall(c.fn, plenty, uint64(n))
			if used != c.used || (c.want >= 0 && int64(res[0]) != c.want) {
				t.Errorf("%s(%d) = %v using %d, want %d using %d", c.fn, n, res, used, c.want, c.used)
			}
			short := c.used - 1
			if c.fn == "hostcharge" {
				// The host's last charge overdraws the counter, but no
				// site follows it: the call completes with the counter
				// at -1. One charge fewer stops the guest.
				if _, used, err := m.call(c.fn, short, uint64(n)); err != nil || used != c.used {
					t.Errorf("hostcharge(%d) with budget %d: used %d, %v", n, short, used, err)
				}
				short -= 1000
			}
			if left := m.mustExhaust(c.fn, short, uint64(n)); left >= 0 {
				t.Errorf("%s(%d) with budget %d: counter %d", c.fn, n, short, left)
			}
		}
	}
	// A trap that is not exhaustion leaves a non-negative counter, so End
	// passes the trap through; the counter may not reflect the work done
	// since the function last stored it.
	m.meter.Begin(1000)
	_, err := m.mod.ExportedFunction("oob").Call(ctx)
	if _, err := m.meter.End(err); err == nil || errors.Is(err, fuel.ErrExhausted) ||
		!strings.Contains(err.Error(), "out of bounds") {
		t.Errorf("oob: %v, want an out-of-bounds trap that is not exhaustion", err)
	}
	if left := m.meter.Remaining(); left < 0 || left > 1000 {
		t.Errorf("oob left the counter at %d", left)
	}
}
