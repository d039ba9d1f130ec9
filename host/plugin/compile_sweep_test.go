package plugin

import (
	"context"
	"encoding/binary"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestCompileSweep measures what wazero's compiler costs on generated
// modules along the axes of the compile limits (fuel.CheckLimits): control
// nesting depth and declared locals. It runs the host's own compile path
// (the fuel rewrite, then CompileModule) on a fresh Host without a cache
// and prints wall time, bytes allocated and the peak Go heap. Skipped
// unless SLUICE_COMPILE_SWEEP lists cases, e.g.
// "block:10000,loop:5000,if:5000,locals:20x50000,fuel=none".
func TestCompileSweep(t *testing.T) {
	spec := os.Getenv("SLUICE_COMPILE_SWEEP")
	if spec == "" {
		t.Skip("set SLUICE_COMPILE_SWEEP")
	}
	intr := InterruptFuel
	for _, c := range strings.Split(spec, ",") {
		if v, ok := strings.CutPrefix(c, "fuel="); ok {
			intr = v
			continue
		}
		kind, arg, _ := strings.Cut(c, ":")
		var bin []byte
		switch kind {
		case "block", "loop", "if":
			n, _ := strconv.Atoi(arg)
			bin = nestedModule(kind, n)
		case "locals": // FUNCSxLOCALS
			f, l, _ := strings.Cut(arg, "x")
			nf, _ := strconv.Atoi(f)
			nl, _ := strconv.Atoi(l)
			bin = localsModule(nf, nl)
		case "seqloop", "seqblock": // N loops or blocks one after another
			n, _ := strconv.Atoi(arg)
			op := byte(0x03)
			if kind == "seqblock" {
				op = 0x02
			}
			body := []byte{0}
			for i := 0; i < n; i++ {
				body = append(body, op, 0x40, 0x0b)
			}
			bin = sweepModule([][]byte{append(body, 0x0b)})
		case "file":
			var err error
			if bin, err = os.ReadFile(arg); err != nil {
				t.Fatal(err)
			}
		case "blocks": // FUNCSxDEPTH
			f, l, _ := strings.Cut(arg, "x")
			nf, _ := strconv.Atoi(f)
			d, _ := strconv.Atoi(l)
			body := nestedBody("block", d)
			bodies := make([][]byte, nf)
			for i := range bodies {
				bodies[i] = body
			}
			bin = sweepModule(bodies)
		case "params": // FUNCSxPARAMS
			f, l, _ := strings.Cut(arg, "x")
			nf, _ := strconv.Atoi(f)
			np, _ := strconv.Atoi(l)
			bin = paramsModule(nf, np)
		default:
			t.Fatalf("unknown case %q", c)
		}
		h := newHost(t, func(cfg *Config) { cfg.Interruption = intr; cfg.CacheDir = "" })
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		var peak atomic.Uint64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			var m runtime.MemStats
			for {
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc)
				}
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		start := time.Now()
		var prepared []byte
		_, dec, err := parseWasm(bin)
		if err == nil {
			prepared, err = h.intr.prepare(bin, dec)
		}
		if err == nil {
			_, err = compileGuarded(context.Background(), h.rt, prepared)
		}
		wall := time.Since(start)
		close(stop)
		<-done
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		t.Logf("%-8s %-30s %8d B  %8.3f s  alloc %7.1f MB  peak heap %7.1f MB  err=%v",
			intr, c, len(bin), wall.Seconds(), float64(after.TotalAlloc-before.TotalAlloc)/1e6,
			float64(peak.Load()-min(peak.Load(), before.HeapAlloc))/1e6, err)
		h.Close(context.Background())
	}
}

// sweepModule wraps bodies (each a complete function body: locals and
// expression) into a module of that many functions of type () -> ().
func sweepModule(bodies [][]byte) []byte {
	return sweepModuleOf([]byte{1, 0x60, 0, 0}, bodies)
}

// paramsModule is funcs functions of one type with params i32 parameters.
func paramsModule(funcs, params int) []byte {
	typ := []byte{1, 0x60}
	typ = binary.AppendUvarint(typ, uint64(params))
	for i := 0; i < params; i++ {
		typ = append(typ, 0x7f)
	}
	typ = append(typ, 0)
	bodies := make([][]byte, funcs)
	for i := range bodies {
		bodies[i] = []byte{0, 0x0b}
	}
	return sweepModuleOf(typ, bodies)
}

func sweepModuleOf(types []byte, bodies [][]byte) []byte {
	leb := binary.AppendUvarint
	sec := func(dst []byte, id byte, payload []byte) []byte {
		return append(leb(append(dst, id), uint64(len(payload))), payload...)
	}
	out := []byte("\x00asm\x01\x00\x00\x00")
	out = sec(out, 1, types)
	fs := leb(nil, uint64(len(bodies)))
	for range bodies {
		fs = append(fs, 0)
	}
	out = sec(out, 3, fs)
	code := leb(nil, uint64(len(bodies)))
	for _, b := range bodies {
		code = append(leb(code, uint64(len(b))), b...)
	}
	return sec(out, 10, code)
}

// nestedModule is one function of n nested blocks, loops or ifs.
func nestedModule(kind string, n int) []byte {
	return sweepModule([][]byte{nestedBody(kind, n)})
}

func nestedBody(kind string, n int) []byte {
	body := []byte{0}
	for i := 0; i < n; i++ {
		switch kind {
		case "block":
			body = append(body, 0x02, 0x40)
		case "loop":
			body = append(body, 0x03, 0x40)
		case "if":
			body = append(body, 0x41, 0x00, 0x04, 0x40)
		}
	}
	for i := 0; i <= n; i++ {
		body = append(body, 0x0b)
	}
	return body
}

// localsModule is funcs functions each declaring locals i32 locals.
func localsModule(funcs, locals int) []byte {
	body := []byte{1}
	body = binary.AppendUvarint(body, uint64(locals))
	body = append(body, 0x7f, 0x0b)
	bodies := make([][]byte, funcs)
	for i := range bodies {
		bodies[i] = body
	}
	return sweepModule(bodies)
}
