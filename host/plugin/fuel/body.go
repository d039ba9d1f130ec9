package fuel

import "github.com/sluicehq/sluice/internal/wasmbin"

// siteKind says what code a site gets.
type siteKind uint8

const (
	siteEntry      siteKind = iota // the body's start: a static charge
	siteLoop                       // just after a loop's block type: a static charge
	siteBulkMemory                 // just before memory.init/copy/fill: n>>3 at run time
	siteBulkTable                  // just before table.init/copy/fill: n<<6 at run time
	siteSyncOut                    // before a call or an exit: store the cached counter
	siteSyncIn                     // after a call: reload the cached counter
	siteFunc                       // a function index (call, ref.func) that the refuel import renumbers
	siteChunk                      // within a region, where a path would run past the cap uncharged: a static charge
)

// site is a place in a function body where code is inserted.
type site struct {
	at   int // offset in the body
	kind siteKind
	cost uint64 // static charge of siteEntry and siteLoop; the old index of siteFunc
	skip int    // bytes of the input the site replaces (siteFunc: the old index)
	// params says a siteLoop's loop takes parameters (with the refuel
	// import, its refuel path falls through instead of branching back).
	params bool
}

// plan is what rewriteBody needs to know about one function body.
type plan struct {
	sites     []site // in body order
	groupsEnd int    // offset just past the count of local declaration groups
	groups    uint32 // local declaration groups
	localsEnd int    // offset of the first instruction
	locals    uint32 // locals declared, not counting parameters
	cached    bool   // the body has loops: it keeps the counter in a local
	bulk      bool   // the body has run-time charges: it needs an i32 local
}

// maxLocals caps the locals one function may declare, as the JS API's
// implementation limits do (WebAssembly JavaScript Interface, "Limits").
// Locals are declared run-length encoded, so six bytes can declare 2^32-1
// of them, and wazero 1.12 allocates a slice of the declared total before
// it validates anything.
const maxLocals = 50000

// frame is one open label while walking a body.
type frame struct {
	kind    kind // kBlock, kLoop or kIf (kElse once an if has seen its else)
	regions int  // len(regions) to restore when the frame closes
	// For chunk sites (see chunked): the longest path since a site at
	// the if (the start of its else), at the end of its then arm, and of
	// the branches to the label's end; for a loop, at the loop (its site
	// charges its own region only: the code before it and after its end
	// is still uncharged).
	atIf, thenEnd, brMax, atLoop uint64
}

// scanBody walks one function body of the code section (§5.5.13 "Code
// Section": vec(locals) expr) and plans its instrumentation. It checks the
// body's structure (labels balanced, the final end exactly at the body's
// last byte) and, through readInstr, refuses any global.get/global.set of
// the counter's index: guest code must never reach the counter.
//
// Cost model (CostRegion): every instruction belongs to one region, the
// innermost loop enclosing it or else the function; a loop's own opcode
// belongs to the enclosing region, its end to the loop. A site charges the
// weighted count of instructions in its region (see weight). Within one
// pass through a region control only moves forward (the only backward
// edges in wasm are branches to loop headers, which start a new pass and
// pay again), so each of its instructions runs at most once per charge:
// the charge is an upper bound on the instructions executed, exact for
// straight-line code.
//
// A body with loops keeps the counter in a local while it runs (see
// rewriteBody), so it also gets sync sites around calls and at every exit:
// return, the final end, and branches to the function's own label.
//
// Under sh, every function index (call, ref.func) gets a site that
// renumbers it, and the plan records what the refuel paths save (see
// emitter).
//
// It also enforces the compile limits (limits.go): the locals of lim's
// module so far, and the nesting, blocks and loops of this body.
func scanBody(body []byte, base int, b bounds, params []byte, cm costing, sh funcShift, lim *limits) (plan, error) {
	model := cm.model
	var p plan
	r := wasmbin.NewReader(body, base)
	groups, err := r.Count()
	if err != nil {
		return p, err
	}
	p.groups, p.groupsEnd = groups, r.Off
	var locals uint64
	for ; groups > 0; groups-- {
		n, err := r.U32()
		if err != nil {
			return p, err
		}
		if locals += uint64(n); locals > maxLocals {
			return p, limitf("more than %d locals, the limit for one function", maxLocals)
		}
		c, err := r.Byte()
		if err != nil {
			return p, err
		}
		if !wasmbin.IsValType(c) {
			r.Off--
			return p, r.Errorf(ErrUnsupported, "local type %#02x", c)
		}
	}
	p.locals, p.localsEnd = uint32(locals), r.Off
	nlocals := uint64(len(params)) + locals
	if lim.locals += nlocals; lim.locals > MaxModuleLocals {
		return p, limitf("brings the module's locals and parameters to %d, more than the limit of %d for all functions together", lim.locals, MaxModuleLocals)
	}
	var blocks, loops, instrs int
	// With a cap on a site's charge, no path may run more than the span
	// (Options.ChunkSpan) past its last site uncharged: a region site
	// charges at most the cap for the code up to the region's next sites,
	// however long the region, and a million straight-line instructions
	// after one charge of 64 ran a slice of fuel for a minute. dist is the longest path, in
	// weight, from the last site any path to here passed (an upper bound:
	// a br and a br_if alike are taken to fall through, a br_table to
	// reach every label up to its largest); before an instruction that
	// would take it past the span, a chunk site charges the span again.
	chunked := cm.maxCharge > 0 && model == CostRegion
	limit := uint64(max(cm.span, 0))
	var dist uint64
	sites := []site{{at: r.Off, kind: siteEntry}}
	regions := []int{0} // indices into sites; the last is the current region
	frames := []frame{{kind: kBlock, regions: 1}}
	for {
		if r.EOF() {
			return p, r.Errorf(ErrMalformed, "function body ends before its final end")
		}
		start := r.Off
		in, err := readInstr(r, b)
		if err != nil {
			return p, err
		}
		if instrs++; instrs > MaxInstructions {
			return p, limitf("more than %d instructions, the limit for one function", MaxInstructions)
		}
		if model == CostSite {
			in.kind = plainForSites(in.kind)
		}
		w := weight(in.kind)
		sites[regions[len(regions)-1]].cost += w
		outer := uint32(len(frames) - 1) // the label index of the function itself
		var renumber site
		if in.fn && sh.on {
			renumber = site{at: in.fat, kind: siteFunc, cost: uint64(in.fidx), skip: r.Off - in.fat}
		}
		if in.isLocal && uint64(in.local) >= nlocals {
			// Invalid, and after the rewrite it would name the counter's
			// local.
			r.Off = start
			return p, r.Errorf(ErrMalformed, "local index %d out of range (%d locals)", in.local, nlocals)
		}
		if chunked {
			if dist+w > limit {
				sites = append(sites, site{at: start, kind: siteChunk, cost: max(limit, w)})
				dist = 0
			}
			dist += w
			switch in.kind {
			case kBr, kBrTable: // the labels it may reach: their ends see this path
				// a label outside a loop sees the path to the loop too
				var before uint64
				for l := 0; l <= int(in.label) && l < len(frames)-1; l++ {
					if f := &frames[len(frames)-1-l]; f.kind != kLoop {
						f.brMax = max(f.brMax, before+dist)
					} else {
						before += f.atLoop
					}
				}
			}
		}
		switch in.kind {
		case kBlock, kIf, kLoop:
			if blocks++; blocks > MaxBlocks {
				return p, limitf("more than %d blocks (block, loop and if), the limit", MaxBlocks)
			}
			if lim.blocks++; lim.blocks > MaxModuleBlocks {
				return p, limitf("brings the module's blocks (block, loop and if) to more than %d, the limit for all functions together", MaxModuleBlocks)
			}
			if depth := len(frames); depth > MaxNesting { // frames[0] is the body itself
				return p, limitf("blocks nested %d deep, more than the limit of %d", depth, MaxNesting)
			}
		}
		switch in.kind {
		case kBlock, kIf:
			frames = append(frames, frame{kind: in.kind, regions: len(regions), atIf: dist})
		case kLoop:
			if loops++; loops > MaxLoops {
				return p, limitf("more than %d loops, the limit", MaxLoops)
			}
			frames = append(frames, frame{kind: kLoop, regions: len(regions), atLoop: dist})
			sites = append(sites, site{at: r.Off, kind: siteLoop, params: in.params})
			regions = append(regions, len(sites)-1)
			p.cached = true
			dist = 0 // the loop's site, for the loop's own region
		case kBulkMemory:
			sites = append(sites, site{at: start, kind: siteBulkMemory})
			p.bulk = true
		case kBulkTable:
			sites = append(sites, site{at: start, kind: siteBulkTable})
			p.bulk = true
		case kCall:
			sites = append(sites, site{at: start, kind: siteSyncOut})
			if renumber.skip > 0 {
				sites = append(sites, renumber)
			}
			sites = append(sites, site{at: r.Off, kind: siteSyncIn})
		case kPlain:
			if renumber.skip > 0 { // ref.func
				sites = append(sites, renumber)
			}
		case kReturn:
			sites = append(sites, site{at: start, kind: siteSyncOut})
		case kBr, kBrTable:
			if in.label >= outer {
				sites = append(sites, site{at: start, kind: siteSyncOut})
			}
		case kElse:
			top := &frames[len(frames)-1]
			if top.kind != kIf {
				r.Off = start
				return p, r.Errorf(ErrMalformed, "else without if")
			}
			top.kind = kElse
			top.thenEnd, dist = dist, top.atIf
		case kEnd:
			top := frames[len(frames)-1]
			frames = frames[:len(frames)-1]
			switch top.kind { // the paths that meet here
			case kBlock:
				dist = max(dist, top.brMax)
			case kIf: // no else: the false path skips the arm
				dist = max(dist, top.atIf, top.brMax)
			case kElse:
				dist = max(dist, top.thenEnd, top.brMax)
			case kLoop: // out of the loop, on in the region around it
				dist += top.atLoop
			}
			regions = regions[:top.regions]
			if len(frames) > 0 {
				continue
			}
			if !r.EOF() {
				return p, r.Errorf(ErrMalformed, "%d bytes after the function's final end", len(body)-r.Off)
			}
			sites = append(sites, site{at: start, kind: siteSyncOut})
			if !p.cached { // no loop: the counter stays in the global, nothing to sync
				kept := sites[:0]
				for _, s := range sites {
					if s.kind != siteSyncOut && s.kind != siteSyncIn {
						kept = append(kept, s)
					}
				}
				sites = kept
			}
			for i := range sites {
				if sites[i].kind != siteEntry && sites[i].kind != siteLoop {
					continue
				}
				if model == CostSite {
					sites[i].cost = 1
				}
				if cm.maxCharge > 0 {
					sites[i].cost = min(sites[i].cost, uint64(cm.maxCharge))
				}
			}
			p.sites = sites
			return p, nil
		}
	}
}

// plainForSites maps the kinds CostSite does not charge differently to
// kPlain: it counts function entries and loop iterations only.
func plainForSites(k kind) kind {
	if k == kGrow || k == kBulkMemory || k == kBulkTable {
		return kPlain
	}
	return k
}

// rewriteBody appends body to dst with the code of every site inserted
// (see emit.go). Scratch locals go after all others, declared by appended
// groups, so no existing local index changes: the cached counter (i64,
// index params+locals) if the body has loops, then the bulk operand (i32)
// if it has bulk instructions.
//
// self is the function's index after renumbering, thunk that of its
// thunk (a function without loops has one), both used with the refuel
// import only.
func rewriteBody(dst, body []byte, p plan, counter, params uint32, sh funcShift, self, thunk uint32) []byte {
	e := emitter{counter: counter, cached: p.cached, sh: sh, self: self, thunk: thunk, params: params}
	prev := 0
	if p.cached || p.bulk {
		next, groups := params+p.locals, p.groups
		var extra []byte
		if p.cached {
			e.fuel, next, groups = next, next+1, groups+1
			extra = append(extra, 0x01, valI64)
		}
		if p.bulk {
			e.n, groups = next, groups+1
			extra = append(extra, 0x01, valI32)
		}
		dst = wasmbin.AppendU32(dst, groups)
		dst = append(dst, body[p.groupsEnd:p.localsEnd]...)
		dst = append(dst, extra...)
		prev = p.localsEnd
	}
	for _, s := range p.sites {
		dst = append(dst, body[prev:s.at]...)
		dst = e.site(dst, s)
		prev = s.at + s.skip
	}
	return append(dst, body[prev:]...)
}
