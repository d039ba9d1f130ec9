package fuel_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/plugin/fuel"
	"github.com/tetratelabs/wazero/api"
)

const plenty = int64(1) << 40

func TestInfiniteLoopStopsAtItsBudget(t *testing.T) {
	m := loadMetered(t, newRuntime(t, nil), "loops", watFile(t, "loops"), fuel.Options{})
	// spin charges 2 at entry and 2 per iteration, so an even budget is
	// spent exactly and the next charge leaves -2; an odd one leaves -1.
	for _, c := range []struct{ budget, left int64 }{{1_000_000, -2}, {999_999, -1}, {0, -2}, {1, -1}} {
		if got := m.mustExhaust("spin", c.budget); got != c.left {
			t.Errorf("spin with budget %d: counter %d after the trap, want %d", c.budget, got, c.left)
		}
	}
	_, _, err := m.call("spin", 10)
	if err == nil || !strings.Contains(err.Error(), "unreachable") || !strings.Contains(err.Error(), "budget 10") {
		t.Errorf("error %q should name the budget and wrap the trap", err)
	}
}

func TestBoundedLoopFuelIsExact(t *testing.T) {
	rt := newRuntime(t, nil)
	region := loadMetered(t, rt, "region", watFile(t, "loops"), fuel.Options{})
	site := loadMetered(t, rt, "site", watFile(t, "loops"), fuel.Options{Model: fuel.CostSite})
	for _, n := range []int64{0, 1, 10, 1000, 100_000} {
		want := 5 + 10*(n+1)
		res, used := region.mustCall("count", plenty, uint64(n))
		if int64(res[0]) != n || used != want {
			t.Errorf("count(%d) = %d using %d fuel, want %d using %d", n, res[0], used, n, want)
		}
		// An exact budget is enough and leaves 0; one less runs out on the
		// last loop header.
		if _, used := region.mustCall("count", want, uint64(n)); used != want || region.meter.Remaining() != 0 {
			t.Errorf("count(%d) with exact budget: used %d, left %d", n, used, region.meter.Remaining())
		}
		if left := region.mustExhaust("count", want-1, uint64(n)); left != -1 {
			t.Errorf("count(%d) with budget %d: counter %d, want -1", n, want-1, left)
		}
		if _, used := site.mustCall("count", plenty, uint64(n)); used != 1+(n+1) {
			t.Errorf("CostSite count(%d) used %d, want %d", n, used, 1+(n+1))
		}
	}
}

func TestNestedLoops(t *testing.T) {
	rt := newRuntime(t, nil)
	region := loadMetered(t, rt, "region", watFile(t, "loops"), fuel.Options{})
	site := loadMetered(t, rt, "site", watFile(t, "loops"), fuel.Options{Model: fuel.CostSite})
	for _, n := range []int64{0, 1, 7, 300} {
		want := 7 + 15*(n+1) + 14*n*(n+1)
		res, used := region.mustCall("nested", plenty, uint64(n))
		if int64(res[0]) != n*n || used != want {
			t.Errorf("nested(%d) = %d using %d fuel, want %d using %d", n, res[0], used, n*n, want)
		}
		if left := region.mustExhaust("nested", want-1, uint64(n)); left != -1 {
			t.Errorf("nested(%d) with budget %d: counter %d, want -1", n, want-1, left)
		}
		if _, used := site.mustCall("nested", plenty, uint64(n)); used != 1+(n+1)+n*(n+1) {
			t.Errorf("CostSite nested(%d) used %d, want %d", n, used, 1+(n+1)+n*(n+1))
		}
	}
}

func TestRecursionChargesEveryEntry(t *testing.T) {
	m := loadMetered(t, newRuntime(t, nil), "loops", watFile(t, "loops"), fuel.Options{})
	for _, n := range []int64{0, 1, 50, 5000} {
		res, used := m.mustCall("rec", plenty, uint64(n))
		if int64(res[0]) != n*(n+1)/2 || used != 13*(n+1) {
			t.Errorf("rec(%d) = %d using %d, want %d using %d", n, res[0], used, n*(n+1)/2, 13*(n+1))
		}
	}
	// Unbounded recursion runs out of fuel (5 per call) before the stack
	// runs out: 200 calls fit a budget of 1000, the 201st traps.
	if left := m.mustExhaust("deep", 1000, 0); left != -5 {
		t.Errorf("deep: counter %d after the trap, want -5", left)
	}
}

func TestImportedGlobalsKeepTheirIndices(t *testing.T) {
	ctx := context.Background()
	env, imports := watFile(t, "env"), watFile(t, "imports")
	want := func() []uint64 {
		rt := newRuntime(t, nil)
		load(t, rt, "env", env)
		mod := load(t, rt, "plain", imports)
		return append(plain(t, mod, "bump", 5), plain(t, mod, "d0")...)
	}()
	rt := newRuntime(t, nil)
	envMod := load(t, rt, "env", env)
	m := loadMetered(t, rt, "metered", imports, fuel.Options{})
	res, _ := m.mustCall("bump", plenty, 5)
	d0, _ := m.mustCall("d0", plenty)
	if got := append(res, d0...); !slices.Equal(got, want) {
		t.Fatalf("instrumented bump(5), d0() = %v, want %v", got, want)
	}
	// The imported mutable global is shared with env: 100 + 5.
	if g1 := envMod.ExportedGlobal("g1").Get(); g1 != 105 {
		t.Errorf("env.g1 = %d, want 105", g1)
	}
	// The counter must be a distinct global: setting it leaves d0 alone.
	m.meter.Begin(12345)
	if got := m.meter.Remaining(); got != 12345 {
		t.Errorf("counter reads %d after Begin(12345)", got)
	}
	res2, err := m.mod.ExportedFunction("d0").Call(ctx)
	if err != nil || res2[0] != d0[0] {
		t.Errorf("d0 after setting the counter: %v %v, want %d", res2, err, d0[0])
	}
	if left := m.mustExhaust("bump", 30, 1000); left >= 0 {
		t.Errorf("bump with budget 30 left %d", left)
	}
}

func TestMultiValueBlocksAndLoops(t *testing.T) {
	bin := watFile(t, "multivalue")
	orig := load(t, newRuntime(t, nil), "plain", bin)
	m := loadMetered(t, newRuntime(t, nil), "metered", bin, fuel.Options{})
	for _, n := range []uint64{1, 2, 10, 40} {
		res, _ := m.mustCall("fib", plenty, n)
		if want := plain(t, orig, "fib", n); !slices.Equal(res, want) {
			t.Errorf("fib(%d) = %v, want %v", n, res, want)
		}
	}
	if res, _ := m.mustCall("fib", plenty, 10); res[0] != 55 {
		t.Errorf("fib(10) = %d, want 55", res[0])
	}
	if res, _ := m.mustCall("divmod", plenty, 47, 5); !slices.Equal(res, []uint64{9, 2}) {
		t.Errorf("divmod(47, 5) = %v", res)
	}
	if left := m.mustExhaust("fib", 20, 40); left >= 0 {
		t.Errorf("fib with budget 20 left %d", left)
	}
}

func TestPostMVPInstructionsSurvive(t *testing.T) {
	bin := watFile(t, "features")
	orig := load(t, newRuntime(t, nil), "plain", bin)
	m := loadMetered(t, newRuntime(t, nil), "metered", bin, fuel.Options{})
	for _, fn := range []string{"simd", "bulk", "numeric"} {
		want := plain(t, orig, fn)
		got, used := m.mustCall(fn, plenty)
		if !slices.Equal(got, want) {
			t.Errorf("%s() = %v instrumented, %v plain", fn, got, want)
		}
		if used <= 0 {
			t.Errorf("%s() used %d fuel", fn, used)
		}
	}
	// Bulk memory also leaves memory identical.
	mem := func(mod api.Module) []byte {
		b, _ := mod.Memory().Read(0, 512)
		return b
	}
	if !slices.Equal(mem(orig), mem(m.mod)) {
		t.Error("memory differs after the same calls")
	}
}

func TestStartFunctionRunsOnInitialFuel(t *testing.T) {
	bin := watFile(t, "start")
	rt := newRuntime(t, nil)
	// Default InitialFuel 0: the start function traps at its entry.
	if _, err := rt.Instantiate(context.Background(), instrument(t, bin, fuel.Options{})); err == nil ||
		!strings.Contains(err.Error(), "unreachable") {
		t.Errorf("start function with no fuel: %v, want an unreachable trap", err)
	}
	// 100 iterations: function region {loop, end} = 2, loop region 9 each.
	mod := load(t, rt, "funded", instrument(t, bin, fuel.Options{InitialFuel: 1_000_000}))
	if g := mod.ExportedGlobal("g").Get(); g != 100 {
		t.Errorf("g = %d after start, want 100", g)
	}
	if left := meterOf(t, mod).Remaining(); left != 1_000_000-902 {
		t.Errorf("counter %d after start, want %d", left, 1_000_000-902)
	}
}

func TestInitialFuelEncoding(t *testing.T) {
	bin := watText(t, `(module (func (export "f")))`)
	rt := newRuntime(t, nil)
	for i, v := range []int64{0, 1, -1, 63, 64, -64, -65, 1 << 40, math.MaxInt64, math.MinInt64} {
		mod := load(t, rt, "m"+string(rune('a'+i)), instrument(t, bin, fuel.Options{InitialFuel: v}))
		if got := meterOf(t, mod).Remaining(); got != v {
			t.Errorf("InitialFuel %d reads back as %d", v, got)
		}
	}
}

func TestModuleWithoutGlobalsOrExports(t *testing.T) {
	// No global, export, function or code section: both are inserted in
	// order before the data section.
	bin := watText(t, `(module (memory 1) (data (i32.const 0) "x"))`)
	mod := load(t, newRuntime(t, nil), "m", instrument(t, bin, fuel.Options{InitialFuel: 7}))
	if got := meterOf(t, mod).Remaining(); got != 7 {
		t.Errorf("counter = %d, want 7", got)
	}
}

func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		wasm []byte
		want error
	}{
		{"exports the counter name", watFile(t, "exported"), fuel.ErrExportExists},
		{"touches the counter's index", watFile(t, "badglobal", "--no-check"), fuel.ErrExportExists},
		{"exports the counter's index", watText(t, `(module (global (mut i64) (i64.const 0)) (export "g" (global 1)))`, "--no-check"), fuel.ErrExportExists},
		{"tail call", watText(t, `(module (func $f (return_call $f)))`, "--enable-tail-call"), fuel.ErrUnsupported},
		{"exceptions", watText(t, `(module (tag $e) (func (throw $e)))`, "--enable-exceptions"), fuel.ErrUnsupported},
		{"relaxed simd", watText(t, `(module (func (result v128) (i8x16.relaxed_swizzle (v128.const i64x2 0 0) (v128.const i64x2 0 0))))`, "--enable-relaxed-simd"), fuel.ErrUnsupported},
		{"memory64", watText(t, `(module (memory i64 1))`, "--enable-memory64"), fuel.ErrUnsupported},
	} {
		_, err := fuel.Instrument(c.wasm, fuel.Options{})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := fuel.Instrument(watFile(t, "loops"), fuel.Options{Model: 9}); err == nil {
		t.Error("unknown cost model accepted")
	}
}

func TestCustomSections(t *testing.T) {
	bin := watFile(t, "loops") // --debug-names: has a "name" section
	custom := func(name, payload string) []byte {
		body := append([]byte{byte(len(name))}, name+payload...)
		return append([]byte{0, byte(len(body))}, body...)
	}
	bin = append(bin, custom(".debug_info", "\x01\x02\x03")...)
	bin = append(bin, custom("sourceMappingURL", "x.map")...)
	bin = append(bin, custom("producers", "\x00")...)
	out := instrument(t, bin, fuel.Options{})
	for _, gone := range []string{".debug_info", "sourceMappingURL"} {
		if strings.Contains(string(out), gone) {
			t.Errorf("custom section %q kept", gone)
		}
	}
	if !strings.Contains(string(out), "producers") {
		t.Error("custom section producers dropped")
	}
	cm, err := newRuntime(t, nil).CompileModule(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Name() != "loops" {
		t.Errorf("module name %q after instrumenting, want loops (name section kept)", cm.Name())
	}
	if _, ok := cm.ExportedFunctions()["count"]; !ok {
		t.Error("export count lost")
	}
}

func TestMeterRefusesNegativeBudget(t *testing.T) {
	m := loadMetered(t, newRuntime(t, nil), "loops", watFile(t, "loops"), fuel.Options{})
	m.meter.Begin(-50)
	if got := m.meter.Remaining(); got != 0 {
		t.Errorf("Begin(-50) set the counter to %d, want 0", got)
	}
	// A failure that is not exhaustion passes through unchanged.
	other := errors.New("host failure")
	m.meter.Begin(10)
	if used, err := m.meter.End(other); err != other || used != 0 {
		t.Errorf("End(other) = %d, %v", used, err)
	}
}

// TestMaxSiteChargeCapsEachSite: count(n) charges 5 at entry and 10 per
// loop header under the region model. A cap of 4 charges at most 4 a
// site, and with a chunk span of 4 chunk sites make no path run more than 4 units past
// its last charge: the loop's 10 get two more (its header, then before
// its 5th and 9th instruction: 12 a pass), and the 3 after it one (the
// exit's br_if is the 4th of the pass): 4 + 12n + 4 + 4. A cap above both
// changes nothing.
func TestMaxSiteChargeCapsEachSite(t *testing.T) {
	rt := newRuntime(t, nil)
	capped := loadMetered(t, rt, "capped", watFile(t, "loops"), fuel.Options{MaxSiteCharge: 4, ChunkSpan: 4})
	loose := loadMetered(t, rt, "loose", watFile(t, "loops"), fuel.Options{MaxSiteCharge: 1000})
	for _, n := range []int64{0, 3, 100} {
		if _, used := capped.mustCall("count", plenty, uint64(n)); used != 12+12*n {
			t.Errorf("capped count(%d) used %d, want %d", n, used, 12+12*n)
		}
		if _, used := loose.mustCall("count", plenty, uint64(n)); used != 5+10*(n+1) {
			t.Errorf("loose count(%d) used %d, want %d", n, used, 5+10*(n+1))
		}
	}
}

// TestChunkSitesChargeLongCode: a capped site charges at most 64 however
// long its region, so a function of 20001 straight-line instructions was
// charged 64 a call (a million of them ran a slice of fuel for a minute).
// Chunk sites charge the span again wherever a path would run past it
// uncharged: the call is charged its length to within a span, on each
// arm of an if, and after a block a branch leaves.
func TestChunkSitesChargeLongCode(t *testing.T) {
	long := strings.Repeat("(drop (i32.const 1))\n", 10000) // 20000 instructions
	// an empty loop every 4000 instructions: its site charges its own
	// region (1), not the code around it (a reviewer's attack: 96,000
	// instructions were charged 88)
	loops := strings.Repeat(strings.Repeat("(drop (i32.const 1))\n", 2000)+"(loop)\n", 24)
	src := `(module
  (func (export "line") ` + long + `)
  (func (export "arms") (param i32)
    (if (local.get 0) (then ` + long + `) (else ` + long + `)))
  (func (export "skip") (param i32)
    (block (br_if 0 (local.get 0)) ` + long + `) ` + long + `)
  (func (export "loops") ` + loops + `)
  (func (export "leave") (param i32)
    (block (loop (br_if 1 (local.get 0)) ` + long + `)) ` + long + `))`
	rt := newRuntime(t, nil)
	m := loadMetered(t, rt, "chunks", watText(t, src), fuel.Options{MaxSiteCharge: 64})
	const span = 64 * 64
	for _, c := range []struct {
		fn   string
		arg  []uint64
		runs int64
	}{
		{"line", nil, 20001},
		{"arms", []uint64{1}, 20004}, {"arms", []uint64{0}, 20004},
		{"skip", []uint64{0}, 40006}, {"skip", []uint64{1}, 20006},
		{"loops", nil, 24*4002 + 1},
		{"leave", []uint64{0}, 40008}, {"leave", []uint64{1}, 20008},
	} {
		_, used := m.mustCall(c.fn, plenty, c.arg...)
		if used < c.runs-span || used > c.runs+2*span {
			t.Errorf("%s%v runs %d instructions and was charged %d, want within a span (%d)", c.fn, c.arg, c.runs, used, span)
		}
	}
}
