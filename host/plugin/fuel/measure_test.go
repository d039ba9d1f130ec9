package fuel

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/wasmbin"
)

// TestMeasureModules prints, for every module named in FUEL_MEASURE
// (a colon-separated list of files or globs), the figures the compile
// limits (limits.go) are chosen from: defined functions, the deepest
// control nesting of any function, the locals of the function with the
// most and of the whole module, and the largest body. Skipped unless set.
func TestMeasureModules(t *testing.T) {
	spec := os.Getenv("FUEL_MEASURE")
	if spec == "" {
		t.Skip("set FUEL_MEASURE to a colon-separated list of .wasm files or globs")
	}
	for _, pat := range strings.Split(spec, ":") {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			wasm, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			st, err := measure(wasm)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			t.Logf("%-50s %8d B funcs %6d  depth %5d nestloops %2d blocks/fn %5d loops/fn %4d params %3d results %3d  maxlocals/fn %6d  locals %8d params %6d  maxbody %8d  code %8d  all blocks %7d loops %6d",
				filepath.Base(f), len(wasm), st.funcs, st.depth, st.loops, st.blocks, st.fnLoops, st.maxParams, st.maxResults, st.fnLocals, st.locals, st.params, st.body, st.code, st.allBlocks, st.allLoops)
		}
	}
}

type moduleStats struct {
	funcs, depth, loops, blocks, fnLoops, maxParams, maxResults, fnLocals, locals, params, body, code int
	allBlocks, allLoops                                                                               int // over all functions
}

func measure(wasm []byte) (moduleStats, error) {
	var st moduleStats
	m, err := wasmbin.Decode(wasm)
	if err != nil {
		return st, err
	}
	typeParams := make([][]byte, len(m.Types))
	for i, t := range m.Types {
		typeParams[i] = t.Params
		st.maxParams = max(st.maxParams, len(t.Params))
		st.maxResults = max(st.maxResults, len(t.Results))
	}
	for _, ft := range m.Funcs {
		st.params += len(typeParams[ft])
	}
	for _, s := range m.Sections {
		if s.ID != secCode {
			continue
		}
		st.code = len(s.Payload)
		b := bounds{types: uint32(len(typeParams)), params: typeParams, globals: math.MaxUint32}
		r := wasmbin.NewReader(s.Payload, s.Offset)
		n, err := r.Count()
		if err != nil {
			return st, err
		}
		st.funcs = int(n)
		for ; n > 0; n-- {
			size, err := r.U32()
			if err != nil {
				return st, err
			}
			body, err := r.Bytes(uint64(size))
			if err != nil {
				return st, err
			}
			st.body = max(st.body, len(body))
			br := wasmbin.NewReader(body, 0)
			groups, _ := br.Count()
			locals := 0
			for ; groups > 0; groups-- {
				c, _ := br.U32()
				br.Byte()
				locals += int(c)
			}
			st.fnLocals = max(st.fnLocals, locals)
			st.locals += locals
			var loops []bool
			depth, inLoops, blocks, nloops := 1, 0, 0, 0
			for !br.EOF() {
				in, err := readInstr(br, b)
				if err != nil {
					return st, err
				}
				switch in.kind {
				case kBlock, kLoop, kIf:
					depth++
					st.depth = max(st.depth, depth)
					loops = append(loops, in.kind == kLoop)
					blocks++
					st.allBlocks++
					st.blocks = max(st.blocks, blocks)
					if in.kind == kLoop {
						st.allLoops++
						nloops++
						st.fnLoops = max(st.fnLoops, nloops)
					}
					if in.kind == kLoop {
						inLoops++
						st.loops = max(st.loops, inLoops)
					}
				case kEnd:
					depth--
					if len(loops) > 0 {
						if loops[len(loops)-1] {
							inLoops--
						}
						loops = loops[:len(loops)-1]
					}
				}
			}
		}
	}
	return st, nil
}
