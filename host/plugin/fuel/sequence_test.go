package fuel_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// The design study behind the emitter's sequences: hand-written variants
// of the metering check on bench.wat's workloads, compiled by wazero 1.12.
// Instrument emits "cached" in functions with loops and the "if-else"
// check in the others; the rest are the alternatives they were measured
// against.
const sequenceModule = `(module
  (memory 2)
  (global $f (export "fuel") (mut i64) (i64.const 0))
  (func (export "sum") (param $n i32) (result i32)
    (local $i i32) (local $s i32) (local $fl i64)
    PRE ENTRY
    (block $done
      (loop $l
        CHECK
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $s (i32.add (local.get $s) (i32.load8_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (local.get $s) POST)
  (func (export "nested") (param $n i32) (result i32)
    (local $i i32) (local $j i32) (local $s i32) (local $fl i64)
    PRE ENTRY
    (block $do
      (loop $lo
        CHECK
        (br_if $do (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $j (i32.const 0))
        (block $di
          (loop $li
            CHECK
            (br_if $di (i32.ge_u (local.get $j) (local.get $n)))
            (local.set $s (i32.add (local.get $s) (i32.xor (i32.mul (local.get $i) (local.get $j)) (local.get $s))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $li)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $lo)))
    (local.get $s) POST))`

const charge = "global.get $f i64.const 10 i64.sub global.set $f global.get $f i64.const 0 "

var sequences = []struct{ name, pre, entry, check, post string }{
	{"none", "", "", "", ""},
	// Chosen for loops: the counter in a local, stored back at the exit
	// (and, in general, around calls and before the trap).
	{"cached", "",
		"global.get $f i64.const 10 i64.sub local.tee $fl i64.const 0 i64.ge_s if else local.get $fl global.set $f unreachable end",
		"local.get $fl i64.const 10 i64.sub local.tee $fl i64.const 0 i64.ge_s if else local.get $fl global.set $f unreachable end",
		"local.get $fl global.set $f"},
	// The global form: one not-taken fused compare-and-branch to an
	// out-of-line trap, but a store and a load per iteration that chain
	// the loop through memory (fast only when the CPU forwards them).
	{"if-else", "", charge + "i64.ge_s if else unreachable end", charge + "i64.ge_s if else unreachable end", ""},
	// The trap inline: a taken branch over it at every site.
	{"if-then", "", charge + "i64.lt_s if unreachable end", charge + "i64.lt_s if unreachable end", ""},
	// br_if to one trap block per function: wazero splits the shared
	// edge and loses the compare fusion (setl, movzx, test, jne).
	{"br_if-trap-block", "block $trap block (result i32)", charge + "i64.lt_s br_if $trap", charge + "i64.lt_s br_if $trap", "end return end unreachable"},
}

// BenchmarkCheckSequence interleaves the variants call by call (see
// BenchmarkRatio) and reports each one's median ns per call and its ratio
// to "none".
func BenchmarkCheckSequence(b *testing.B) {
	ctx := context.Background()
	for _, w := range []struct {
		fn string
		n  uint64
	}{{"sum", 65536}, {"nested", 256}} {
		b.Run(w.fn, func(b *testing.B) {
			fns := make([]api.Function, len(sequences))
			gs := make([]api.MutableGlobal, len(sequences))
			for i, seq := range sequences {
				src := strings.NewReplacer("PRE", seq.pre, "ENTRY", seq.entry, "CHECK", seq.check, "POST", seq.post).Replace(sequenceModule)
				mod := load(b, newRuntime(b, nil), "seq", watText(b, src))
				fns[i], gs[i] = mod.ExportedFunction(w.fn), mod.ExportedGlobal("fuel").(api.MutableGlobal)
			}
			times := make([][]float64, len(sequences))
			stack := make([]uint64, 1)
			for b.Loop() {
				for i, fn := range fns {
					gs[i].Set(1 << 40)
					stack[0] = w.n
					t0 := time.Now()
					if err := fn.CallWithStack(ctx, stack); err != nil {
						b.Fatal(err)
					}
					times[i] = append(times[i], float64(time.Since(t0).Nanoseconds()))
				}
			}
			base := median(times[0])
			for i, seq := range sequences {
				b.ReportMetric(median(times[i]), seq.name+"-ns/call")
				if i > 0 {
					b.ReportMetric(median(times[i])/base, seq.name+"-x")
				}
			}
		})
	}
}
