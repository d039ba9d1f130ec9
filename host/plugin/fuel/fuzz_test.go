package fuel_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/host/plugin/fuel"
	"github.com/tetratelabs/wazero"
)

// FuzzInstrument feeds arbitrary bytes to Instrument, with and without the
// refuel import (which renumbers functions): it must never panic, every
// error must carry one of the package's classes, and whenever the input is
// a module wazero compiles, the output must compile too and be refused if
// instrumented a second time.
func FuzzInstrument(f *testing.F) {
	for _, name := range []string{"loops", "env", "imports", "multivalue", "features", "bulk", "exits", "start", "exported"} {
		f.Add(watFile(f, name))
	}
	f.Add(oneFunc(0, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b))
	f.Add(module())
	ctx := context.Background()
	// The interpreter validates like the compiler but compiles faster.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, wasm []byte) {
		// a span of 2 puts a chunk site before nearly every instruction:
		// at every kind of place one may go, the output must validate
		for _, opts := range []fuel.Options{{}, {Refuel: true}, {Refuel: true, MaxSiteCharge: 2, ChunkSpan: 2}} {
			fuzzOne(t, ctx, rt, wasm, opts)
		}
	})
}

func fuzzOne(t *testing.T, ctx context.Context, rt wazero.Runtime, wasm []byte, opts fuel.Options) {
	out, err := fuel.Instrument(wasm, opts)
	if err != nil {
		if !errors.Is(err, fuel.ErrMalformed) && !errors.Is(err, fuel.ErrUnsupported) && !errors.Is(err, fuel.ErrExportExists) && !errors.Is(err, fuel.ErrLimit) {
			t.Fatalf("Refuel %v: error without a class: %v", opts.Refuel, err)
		}
		return
	}
	if _, err := fuel.Instrument(out, opts); !errors.Is(err, fuel.ErrExportExists) {
		t.Fatalf("Refuel %v: instrumenting twice: %v, want %v", opts.Refuel, err, fuel.ErrExportExists)
	}
	// wazero must never panic on an output: Instrument has checked every
	// count it allocates from.
	outErr := compile(ctx, rt, out)
	if errors.Is(outErr, errPanic) {
		t.Fatalf("Refuel %v: instrumented module: %v", opts.Refuel, outErr)
	}
	// A valid input gives a valid output. The input is compiled without
	// its custom sections: wazero 1.12 allocates from the counts of a
	// malformed name section (which Instrument drops) and may not return.
	if outErr == nil || compile(ctx, rt, stripCustom(wasm)) != nil {
		return
	}
	// The code: whatever the custom sections, the instrumented code
	// compiles.
	if err := compile(ctx, rt, stripCustom(out)); err != nil {
		t.Fatalf("Refuel %v: input compiles but the instrumented code does not: %v", opts.Refuel, err)
	}
	// The custom sections Instrument keeps (verbatim, or the name section
	// renumbered) compile as the input's do: wazero 1.12 refuses some
	// valid ones, e.g. an empty custom section at the end of the module
	// (its reader's EOF), and the output keeps those as they are.
	if compile(ctx, rt, stripName(wasm)) == nil {
		t.Fatalf("Refuel %v: input compiles but the instrumented module does not: %v", opts.Refuel, outErr)
	}
}

// stripName returns wasm without its "name" custom sections (wasm must be
// well framed).
func stripName(wasm []byte) []byte {
	out := append([]byte(nil), wasm[:8]...)
	for off := 8; off < len(wasm); {
		start := off
		off++ // id
		size := leb(wasm, &off)
		body := off
		off += size
		if wasm[start] == 0 {
			if n := leb(wasm, &body); body+n <= off && string(wasm[body:body+n]) == "name" {
				continue
			}
		}
		out = append(out, wasm[start:off]...)
	}
	return out
}

// leb reads the unsigned LEB128 at wasm[*off] and moves *off past it.
func leb(wasm []byte, off *int) int {
	v, shift := 0, 0
	for {
		c := wasm[*off]
		*off++
		v |= int(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			return v
		}
	}
}

var errPanic = errors.New("wazero panicked")

// stripCustom returns wasm without its custom sections; wasm must be
// well framed (Instrument accepted it).
func stripCustom(wasm []byte) []byte {
	out := append([]byte(nil), wasm[:8]...)
	for off := 8; off < len(wasm); {
		start := off
		off++ // id
		size, shift := 0, 0
		for {
			c := wasm[off]
			off++
			size |= int(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				break
			}
		}
		off += size
		if wasm[start] != 0 {
			out = append(out, wasm[start:off]...)
		}
	}
	return out
}

// compile compiles and releases wasm, turning a runtime panic into an
// error: wazero 1.12 panics on some invalid modules, and which ones is not
// this package's property.
func compile(ctx context.Context, rt wazero.Runtime, wasm []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errPanic, p)
		}
	}()
	cm, err := rt.CompileModule(ctx, wasm)
	if err == nil {
		err = cm.Close(ctx)
	}
	return err
}
