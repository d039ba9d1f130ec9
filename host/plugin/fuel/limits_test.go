package fuel_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/plugin/fuel"
)

// limitsModule builds a module importing one function (so the defined
// ones start at index 1) whose defined functions have the given bodies
// (locals and expression), all of type 0, which has params i32
// parameters and results i32 results; the name section names function i
// "f<i>".
func limitsModule(params, results int, bodies ...[]byte) []byte {
	leb := func(dst []byte, v int) []byte { return binary.AppendUvarint(dst, uint64(v)) }
	sec := func(dst []byte, id byte, payload []byte) []byte {
		return append(leb(append(dst, id), len(payload)), payload...)
	}
	out := []byte("\x00asm\x01\x00\x00\x00")
	typ := leb([]byte{2, 0x60}, params)
	typ = append(typ, []byte(strings.Repeat("\x7f", params))...)
	typ = leb(typ, results)
	typ = append(typ, []byte(strings.Repeat("\x7f", results))...)
	typ = append(typ, 0x60, 0, 0) // type 1: the import's
	out = sec(out, 1, typ)
	out = sec(out, 2, []byte{1, 1, 'm', 1, 'f', 0, 1})
	fs := leb(nil, len(bodies))
	for range bodies {
		fs = append(fs, 0)
	}
	out = sec(out, 3, fs)
	code := leb(nil, len(bodies))
	for _, b := range bodies {
		code = append(leb(code, len(b)), b...)
	}
	out = sec(out, 10, code)
	names := leb(nil, len(bodies))
	for i := range bodies {
		n := fmt.Sprintf("f%d", i+1)
		names = append(leb(leb(names, i+1), len(n)), n...)
	}
	custom := append(leb(nil, 4), "name"...)
	custom = sec(custom, 1, names)
	return sec(out, 0, custom)
}

// nest is a body of n nested (or, seq, consecutive) blocks of op
// (0x02 block, 0x03 loop, 0x04 if), with results results on the stack.
func nest(op byte, n int, seq bool, results int) []byte {
	b := []byte{0}
	open := []byte{op, 0x40}
	if op == 0x04 {
		open = []byte{0x41, 0, 0x04, 0x40}
	}
	for i := 0; i < n; i++ {
		b = append(b, open...)
		if seq {
			b = append(b, 0x0b)
		}
	}
	if !seq {
		b = append(b, []byte(strings.Repeat("\x0b", n))...)
	}
	for i := 0; i < results; i++ {
		b = append(b, 0x41, 0)
	}
	return append(b, 0x0b)
}

// withLocals is a body declaring n i32 locals (one group).
func withLocals(n int) []byte {
	b := []byte{1}
	b = binary.AppendUvarint(b, uint64(n))
	return append(b, 0x7f, 0x0b)
}

// TestCompileLimits: a module just over each compile limit is refused by
// Instrument and by CheckLimits with ErrLimit and a message naming the
// limit and the function (the host refuses on that error before any
// compiler sees the module: host/sandbox's TestSandbox20_CompileBomb
// checks that nothing was compiled); one at the limit is accepted and
// compiles.
func TestCompileLimits(t *testing.T) {
	empty := []byte{0, 0x0b}
	per := 50000
	full := fuel.MaxModuleLocals / per // functions of 50000 locals that fill the module's
	many := func(n int, body []byte, last []byte) [][]byte {
		bs := make([][]byte, n)
		for i := range bs {
			bs[i] = body
		}
		return append(bs, last)
	}
	cases := []struct {
		name      string
		ok, over  []byte
		wantOver  string
		compileOK bool
	}{
		{"nesting", limitsModule(0, 0, empty, nest(0x02, fuel.MaxNesting, false, 0)),
			limitsModule(0, 0, empty, nest(0x02, fuel.MaxNesting+1, false, 0)),
			fmt.Sprintf("function 2 ($f2): blocks nested %d deep, more than the limit of %d", fuel.MaxNesting+1, fuel.MaxNesting), true},
		{"nested ifs", limitsModule(0, 0, nest(0x04, fuel.MaxNesting, false, 0)),
			limitsModule(0, 0, nest(0x04, fuel.MaxNesting+1, false, 0)),
			fmt.Sprintf("function 1 ($f1): blocks nested %d deep", fuel.MaxNesting+1), false},
		{"blocks", limitsModule(0, 0, nest(0x02, fuel.MaxBlocks, true, 0)),
			limitsModule(0, 0, nest(0x02, fuel.MaxBlocks+1, true, 0)),
			fmt.Sprintf("function 1 ($f1): more than %d blocks (block, loop and if), the limit", fuel.MaxBlocks), true},
		{"loops", limitsModule(0, 0, nest(0x03, fuel.MaxLoops, true, 0)),
			limitsModule(0, 0, nest(0x03, fuel.MaxLoops+1, true, 0)),
			fmt.Sprintf("function 1 ($f1): more than %d loops, the limit", fuel.MaxLoops), true},
		{"nested loops", limitsModule(0, 0, nest(0x03, fuel.MaxLoops, false, 0)),
			limitsModule(0, 0, nest(0x03, fuel.MaxLoops+1, false, 0)),
			fmt.Sprintf("function 1 ($f1): more than %d loops, the limit", fuel.MaxLoops), false},
		{"module locals", limitsModule(0, 0, many(full-1, withLocals(per), withLocals(per))...),
			limitsModule(0, 0, many(full, withLocals(per), withLocals(1))...),
			fmt.Sprintf("function %d ($f%d): brings the module's locals and parameters to %d, more than the limit of %d", full+1, full+1, fuel.MaxModuleLocals+1, fuel.MaxModuleLocals), true},
		{"module blocks", limitsModule(0, 0, many(fuel.MaxModuleBlocks/fuel.MaxBlocks-1, nest(0x02, fuel.MaxBlocks, true, 0), nest(0x02, fuel.MaxBlocks, true, 0))...),
			limitsModule(0, 0, many(fuel.MaxModuleBlocks/fuel.MaxBlocks, nest(0x02, fuel.MaxBlocks, true, 0), nest(0x02, 1, true, 0))...),
			fmt.Sprintf("function %d ($f%d): brings the module's blocks (block, loop and if) to more than %d, the limit for all functions together", fuel.MaxModuleBlocks/fuel.MaxBlocks+1, fuel.MaxModuleBlocks/fuel.MaxBlocks+1, fuel.MaxModuleBlocks), false},
		{"instructions", limitsModule(0, 0, append(append([]byte{0}, strings.Repeat("\x01", fuel.MaxInstructions-1)...), 0x0b)),
			limitsModule(0, 0, append(append([]byte{0}, strings.Repeat("\x01", fuel.MaxInstructions)...), 0x0b)),
			fmt.Sprintf("function 1 ($f1): more than %d instructions, the limit for one function", fuel.MaxInstructions), true},
		{"function locals", limitsModule(0, 0, withLocals(per)), limitsModule(0, 0, withLocals(per+1)),
			"function 1 ($f1): more than 50000 locals, the limit for one function", true},
		{"params", limitsModule(fuel.MaxParams, 0, empty), limitsModule(fuel.MaxParams+1, 0, empty),
			fmt.Sprintf("type 0 has %d parameters, more than the limit of %d", fuel.MaxParams+1, fuel.MaxParams), true},
		{"results", limitsModule(0, fuel.MaxResults, nest(0x01, 0, true, fuel.MaxResults)),
			limitsModule(0, fuel.MaxResults+1, nest(0x01, 0, true, fuel.MaxResults+1)),
			fmt.Sprintf("type 0 has %d results, more than the limit of %d", fuel.MaxResults+1, fuel.MaxResults), true},
	}
	rt := newRuntime(t, nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := fuel.Instrument(c.over, fuel.Options{Refuel: true})
			if !errors.Is(err, fuel.ErrLimit) || !strings.Contains(err.Error(), c.wantOver) {
				t.Errorf("Instrument over the limit: %v, want ErrLimit %q", err, c.wantOver)
			}
			if err := fuel.CheckLimits(c.over); !errors.Is(err, fuel.ErrLimit) || !strings.Contains(err.Error(), c.wantOver) {
				t.Errorf("CheckLimits over the limit: %v, want ErrLimit %q", err, c.wantOver)
			}
			if err := fuel.CheckLimits(c.ok); err != nil {
				t.Errorf("CheckLimits at the limit: %v", err)
			}
			out, err := fuel.Instrument(c.ok, fuel.Options{Refuel: true})
			if err != nil {
				t.Fatalf("Instrument at the limit: %v", err)
			}
			if c.compileOK && !testing.Short() {
				if _, err := rt.CompileModule(t.Context(), out); err != nil {
					t.Errorf("compile at the limit: %v", err)
				}
			}
		})
	}
}
