package fuel_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/plugin/fuel"
)

// refuelCase is one export called with a list of budgets; nil budgets
// means plenty, then exactly what plenty used, one less, and half.
type refuelCase struct {
	fixture, fn string
	args        []uint64
	budgets     []int64
}

var refuelCases = []refuelCase{
	{"loops", "spin", nil, []int64{0, 1, 2, 999, 1000, 100_000}},
	{"loops", "count", []uint64{100}, nil},
	{"loops", "nested", []uint64{7}, nil},
	{"loops", "rec", []uint64{50}, nil},
	{"loops", "deep", []uint64{0}, []int64{999, 1000}},
	{"exits", "calls", []uint64{5}, nil},
	{"exits", "early", []uint64{5}, nil},
	{"exits", "brout", []uint64{5}, nil},
	{"exits", "tableout", []uint64{5}, nil},
	{"exits", "hostcharge", []uint64{5}, nil},
	{"features", "simd", nil, nil},
	{"features", "numeric", nil, nil},
	{"features", "bulk", nil, []int64{plenty}}, // drops its data segment: one run only
	{"bulk", "fill", []uint64{65536}, nil},
	{"bulk", "tfill", []uint64{1000}, nil},
	{"bulk", "grow", []uint64{1}, nil},
	{"bulk", "fillspin", nil, []int64{1_000_001, 10_000_000}},
	{"bulk", "params", []uint64{1 << 40, 100}, nil},
	{"multivalue", "fib", []uint64{20}, nil},
	{"multivalue", "divmod", []uint64{47, 5}, nil},
	{"imports", "bump", []uint64{5}, nil},
	{"imports", "d0", nil, nil},
}

// outcome is what one call did, as the host sees it.
type outcome struct {
	res       []uint64
	used      int64
	exhausted bool
	failed    bool
	left      int64 // the counter after a call that ran out
}

func (o outcome) String() string {
	return fmt.Sprintf("res %v used %d exhausted %v failed %v left %d", o.res, o.used, o.exhausted, o.failed, o.left)
}

// runRefuelCases makes a runtime (with the imports the fixtures need),
// instruments every fixture with or without the refuel import (slice 0:
// without), and makes every call of refuelCases in order.
func runRefuelCases(t *testing.T, slice int64) ([]outcome, int) {
	rt := newRuntime(t, nil)
	load(t, rt, "env", watFile(t, "env"))
	chargeHost(t, rt)
	r := newRefueler(t, rt)
	mods := map[string]metered{}
	var out []outcome
	for _, c := range refuelCases {
		m, ok := mods[c.fixture]
		if !ok {
			if slice == 0 {
				m = loadMetered(t, rt, c.fixture, watFile(t, c.fixture), fuel.Options{})
			} else {
				m = r.load(t, rt, c.fixture, watFile(t, c.fixture), fuel.Options{}, slice)
			}
			mods[c.fixture] = m
		}
		budgets := c.budgets
		if budgets == nil {
			_, used := m.mustCall(c.fn, plenty, c.args...)
			budgets = []int64{plenty, used, used - 1, used / 2}
		}
		for _, b := range budgets {
			res, used, err := m.call(c.fn, b, c.args...)
			o := outcome{res: res, used: used, exhausted: errors.Is(err, fuel.ErrExhausted), failed: err != nil}
			if o.exhausted {
				o.left = m.meter.Remaining()
			}
			out = append(out, o)
		}
	}
	return out, r.calls
}

// TestRefuelTrapsAtTheSameInstruction: whatever the slice, a call handed
// its budget in slices returns the same results, uses the same fuel and
// runs out at the same site, with the same counter, as one given it at
// once by a module without the refuel import.
func TestRefuelTrapsAtTheSameInstruction(t *testing.T) {
	want, _ := runRefuelCases(t, 0)
	for _, slice := range []int64{1, 3, 64, 1000, 1 << 20} {
		got, refuels := runRefuelCases(t, slice)
		if refuels < 50 {
			t.Errorf("slice %d: %d refuels over all the calls", slice, refuels)
		}
		i := 0
		for _, c := range refuelCases {
			n := len(c.budgets)
			if n == 0 {
				n = 4
			}
			for j := 0; j < n; j, i = j+1, i+1 {
				if got[i].String() != want[i].String() {
					t.Errorf("slice %d: %s.%s%v call %d: %s, want %s", slice, c.fixture, c.fn, c.args, j, got[i], want[i])
				}
			}
		}
	}
}

// TestRefuelOncePerSlice: a runaway given n slices calls the host n
// times, the last time to be told to trap; a call that fits its first
// slice never calls it.
func TestRefuelOncePerSlice(t *testing.T) {
	rt := newRuntime(t, nil)
	r := newRefueler(t, rt)
	const slice = 1000
	m := r.load(t, rt, "loops", watFile(t, "loops"), fuel.Options{}, slice)
	for _, n := range []int64{1, 2, 10, 1000} {
		r.calls = 0
		if left := m.mustExhaust("spin", n*slice); left != -2 {
			t.Errorf("spin with %d slices: counter %d after the trap, want -2", n, left)
		}
		if r.calls != int(n) {
			t.Errorf("spin with a budget of %d slices refueled %d times, want %d", n, r.calls, n)
		}
	}
	r.calls = 0
	if _, used := m.mustCall("count", 10*slice, 10); used != 5+10*11 || r.calls != 0 {
		t.Errorf("count(10) used %d and refueled %d times, want %d and 0", used, r.calls, 5+10*11)
	}
	// count(1000) uses 10015: ten refuels, none of them the last.
	if _, used := m.mustCall("count", plenty, 1000); used != 10015 || r.calls != 10 {
		t.Errorf("count(1000) used %d and refueled %d times, want 10015 and 10", used, r.calls)
	}
}

// TestRefuelRenumbersFunctions: the import shifts every defined
// function's index; the start function, the exports' names in the name
// section and calls through tables still reach the right functions.
func TestRefuelRenumbersFunctions(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t, nil)
	r := newRefueler(t, rt)
	// The start function runs on InitialFuel during instantiation, when
	// no meter is known: 1e6 is enough, 0 traps.
	bin := watFile(t, "start")
	mod := load(t, rt, "funded", instrument(t, bin, fuel.Options{Refuel: true, InitialFuel: 1_000_000}))
	if g := mod.ExportedGlobal("g").Get(); g != 100 {
		t.Errorf("g = %d after start, want 100", g)
	}
	if _, err := rt.Instantiate(ctx, instrument(t, bin, fuel.Options{Refuel: true})); err == nil ||
		!strings.Contains(err.Error(), "unreachable") {
		t.Errorf("start function with no fuel: %v, want an unreachable trap", err)
	}
	cm, err := rt.CompileModule(ctx, instrument(t, watFile(t, "loops"), fuel.Options{Refuel: true}))
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range []string{"rec", "deep"} {
		if got := cm.ExportedFunctions()[fn].Name(); got != fn {
			t.Errorf("export %s is named %q in the name section, want %q", fn, got, fn)
		}
	}
	imps := cm.ImportedFunctions()
	if last := imps[len(imps)-1]; len(imps) != 1 || last.Name() != "" && last.Name() != fuel.RefuelName {
		t.Errorf("imports %v, want only the refuel import", imps)
	}
	if mi, name, _ := imps[0].Import(); mi != fuel.RefuelModule || name != fuel.RefuelName {
		t.Errorf("imports %s.%s, want %s.%s", mi, name, fuel.RefuelModule, fuel.RefuelName)
	}
	// A module whose functions sit past an import: features calls through
	// a table filled by element segments and ref.func.
	m := r.load(t, rt, "features", watFile(t, "features"), fuel.Options{}, 7)
	if res, _ := m.mustCall("bulk", plenty); !slices.Equal(res, plain(t, load(t, rt, "plain", watFile(t, "features")), "bulk")) {
		t.Errorf("bulk() = %v instrumented with refuel", res)
	}
}

func TestRefuelRefusesItsOwnImport(t *testing.T) {
	bin := watText(t, `(module (import "sluice_fuel" "refuel" (func (param i64) (result i64))))`)
	for _, refuel := range []bool{false, true} {
		if _, err := fuel.Instrument(bin, fuel.Options{Refuel: refuel}); !errors.Is(err, fuel.ErrExportExists) {
			t.Errorf("Refuel %v: a module importing the refuel function: %v, want %v", refuel, err, fuel.ErrExportExists)
		}
	}
	// An index past the module's functions cannot be renumbered onto a
	// valid one.
	bad := watText(t, `(module (func (export "f")) (export "g" (func 5)))`, "--no-check")
	if _, err := fuel.Instrument(bad, fuel.Options{Refuel: true}); !errors.Is(err, fuel.ErrMalformed) {
		t.Errorf("export of function 5 of 1: %v, want %v", err, fuel.ErrMalformed)
	}
}

// counter is a fuel.Counter in memory.
type counter struct{ v uint64 }

func (c *counter) Get() uint64  { return c.v }
func (c *counter) Set(v uint64) { c.v = v }

// TestMeterRefuel checks the host side alone: slices, a site charging
// more than a slice, the end of the budget, and forged counters.
func TestMeterRefuel(t *testing.T) {
	var c counter
	m := fuel.NewMeter(&c)
	m.BeginSliced(100, 30)
	if got := m.Remaining(); got != 30 {
		t.Fatalf("first slice %d, want 30", got)
	}
	if got := m.Refuel(5); got != 5 {
		t.Errorf("Refuel(5) = %d: a counter that is not negative gets nothing", got)
	}
	if got := m.Refuel(-1); got != 29 || m.Spent(29) != 31 {
		t.Errorf("Refuel(-1) = %d (spent %d), want 29 (31)", got, m.Spent(29))
	}
	if got := m.Refuel(-35); got != 5 { // 40 left: 35 for the site, 5 more
		t.Errorf("Refuel(-35) = %d, want 5", got)
	}
	if got := m.Refuel(-6); got != -6 { // 0 left
		t.Errorf("Refuel(-6) with the budget spent = %d, want -6", got)
	}
	c.Set(^uint64(5)) // -6: what the guest stores before it traps
	if used, err := m.End(errors.New("trap")); used != 106 || !errors.Is(err, fuel.ErrExhausted) {
		t.Errorf("End = %d, %v; want 106 and exhaustion", used, err)
	}
	m.BeginSliced(math.MaxInt64, math.MaxInt64/2)
	if got := m.Refuel(math.MinInt64); got >= 0 {
		t.Errorf("Refuel(MinInt64) = %d, want it to stay negative", got)
	}
	m.BeginSliced(10, 0) // no slice: the whole budget at once
	if got := m.Remaining(); got != 10 {
		t.Errorf("BeginSliced(10, 0) set %d", got)
	}
}

// globalCount is the entry count of wasm's global section (0 without one).
func globalCount(t *testing.T, wasm []byte) uint64 {
	t.Helper()
	for off := 8; off < len(wasm); {
		id := wasm[off]
		size, n := binary.Uvarint(wasm[off+1:])
		if n <= 0 {
			t.Fatalf("bad section size at %d", off+1)
		}
		body := off + 1 + n
		if id == 6 {
			count, m := binary.Uvarint(wasm[body:])
			if m <= 0 {
				t.Fatalf("bad global count at %d", body)
			}
			return count
		}
		off = body + int(size)
	}
	return 0
}

// TestRefuelAddsOneGlobal holds the refuel rewrite to one global more than
// its input, the counter: a site's refuel path keeps the locals where they
// are (no spill globals, which cost compiled plugins' loops more than they
// saved), and the rewritten module compiles.
func TestRefuelAddsOneGlobal(t *testing.T) {
	for _, name := range []string{"loops", "bench", "bulk", "features", "multivalue", "imports"} {
		t.Run(name, func(t *testing.T) {
			in := watFile(t, name)
			out := instrument(t, in, fuel.Options{Refuel: true})
			if got, want := globalCount(t, out), globalCount(t, in)+1; got != want {
				t.Errorf("%d globals after the rewrite, want %d (the input's and the counter)", got, want)
			}
			rt := newRuntime(t, nil)
			if _, err := rt.CompileModule(context.Background(), out); err != nil {
				t.Fatalf("the rewrite does not compile: %v", err)
			}
		})
	}
}
