package plugin

import (
	"context"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/sluicehq/sluice/abi"
	"github.com/tetratelabs/wazero/api"
)

// The host functions of module abi.ImportModule. Each reads its arguments
// from the stack as wasm passes them (i32 in the low 32 bits), checks
// every (ptr, len) pair in 64-bit arithmetic, and records any violation
// on the call so that the call fails whatever the guest returns next.

type hostFunc struct {
	name   string
	params []string
	fn     api.GoModuleFunc
}

var hostFuncs = []hostFunc{
	{abi.ImportEmit, []string{"port", "ptr", "len", "count"}, hostEmit},
	{abi.ImportEmitEnds, []string{"port", "ptr", "len", "count", "ends"}, hostEmitEnds},
	{abi.ImportPort, []string{"ptr", "len"}, hostPort},
	{abi.ImportError, []string{"ptr", "len"}, hostError},
	{abi.ImportStateGet, []string{"slot", "key_ptr", "key_len", "buf_ptr", "buf_cap"}, hostStateGet},
	{abi.ImportStatePut, []string{"slot", "key_ptr", "key_len", "val_ptr", "val_len"}, hostStatePut},
	{abi.ImportStateDel, []string{"slot", "key_ptr", "key_len"}, hostStateDel},
	{abi.ImportStateListGet, []string{"slot", "key_ptr", "key_len", "buf_ptr", "buf_cap"}, hostStateListGet},
	{abi.ImportStateListAppend, []string{"slot", "key_ptr", "key_len", "val_ptr", "val_len"}, hostStateListAppend},
	{abi.ImportStateListUpdate, []string{"slot", "key_ptr", "key_len", "buf_ptr", "buf_len"}, hostStateListUpdate},
	{abi.ImportStateMapGet, []string{"slot", "key_ptr", "key_len", "ukey_ptr", "ukey_len", "buf_ptr", "buf_cap"}, hostStateMapGet},
	{abi.ImportStateMapPut, []string{"slot", "key_ptr", "key_len", "ukey_ptr", "ukey_len", "val_ptr", "val_len"}, hostStateMapPut},
	{abi.ImportStateMapDel, []string{"slot", "key_ptr", "key_len", "ukey_ptr", "ukey_len"}, hostStateMapDel},
	{abi.ImportStateMapContains, []string{"slot", "key_ptr", "key_len", "ukey_ptr", "ukey_len"}, hostStateMapContains},
	{abi.ImportStateMapEntries, []string{"slot", "key_ptr", "key_len", "buf_ptr", "buf_cap"}, hostStateMapEntries},
	{abi.ImportStateClear, []string{"slot", "key_ptr", "key_len"}, hostStateClear},
	{abi.ImportTimerRegister, []string{"kind", "key_ptr", "key_len", "ts"}, hostTimerRegister},
	{abi.ImportTimerDelete, []string{"kind", "key_ptr", "key_len", "ts"}, hostTimerDelete},
	{abi.ImportCurrentWatermark, nil, hostCurrentWatermark},
	{abi.ImportCurrentProcessingTime, nil, hostCurrentProcessingTime},
}

// Host functions bill the call's fuel for the work they do (callBound.
// charge): hostCallFuel a call and one unit per bytesPerFuel bytes they
// read, copy or hash. Fuel is otherwise spent only at the guest's function
// entries and loop headers, so a loop of host calls each copying 8 MiB
// ran 130,000 copies (175 s past a 1 s call-timeout, deaf to cancel)
// before the guest spent a slice. At these rates host work costs about
// what the guest's own work of the same time does (a C guest burns 2–7
// units a nanosecond; the host copies a few bytes a nanosecond), and the
// ordinary path, a batch's emits, costs a fraction of one slice.
const (
	hostCallFuel = 32
	bytesPerFuel = 2
)

// bill charges the call for a host function that handles n bytes.
func (in *instance) bill(n uint64) {
	if in.bound != nil {
		in.bound.charge(hostCallFuel + int64(min(n, math.MaxInt32)/bytesPerFuel))
	}
}

// emitOverhead is what one emit costs the host besides its bytes (the
// span that hands it on, 40 bytes, and slack), counted toward
// max-output-bytes: a guest emitting nothing in a loop grew the host's
// list of spans by 40 bytes an emit, unbounded (1.7 GB in one call).
const emitOverhead = 64

// maxPorts bounds the side-output tags one instance may register.
const maxPorts = 1024

func current(ctx context.Context) *instance {
	in, _ := ctx.Value(instanceKey{}).(*instance)
	return in
}

func i32(v uint64) int32  { return int32(uint32(v)) }
func u32(v uint64) uint32 { return uint32(v) }
func word(v int32) uint64 { return uint64(uint32(v)) }

func hostEmit(ctx context.Context, _ api.Module, stack []uint64) {
	in := current(ctx)
	if in == nil {
		stack[0] = word(int32(abi.StatusHost))
		return
	}
	stack[0] = word(int32(in.emit(i32(stack[0]), u32(stack[1]), u32(stack[2]), i32(stack[3]))))
}

func hostEmitEnds(ctx context.Context, _ api.Module, stack []uint64) {
	in := current(ctx)
	if in == nil {
		stack[0] = word(int32(abi.StatusHost))
		return
	}
	stack[0] = word(int32(in.emitEnds(i32(stack[0]), u32(stack[1]), u32(stack[2]), i32(stack[3]), u32(stack[4]))))
}

func hostPort(ctx context.Context, _ api.Module, stack []uint64) {
	in := current(ctx)
	if in == nil {
		stack[0] = word(int32(abi.StatusHost))
		return
	}
	stack[0] = word(in.port(u32(stack[0]), u32(stack[1])))
}

func hostError(ctx context.Context, _ api.Module, stack []uint64) {
	if in := current(ctx); in != nil {
		in.errorText(u32(stack[0]), u32(stack[1]))
	}
}

func hostStateGet(ctx context.Context, _ api.Module, stack []uint64) {
	in := current(ctx)
	if in == nil {
		stack[0] = word(int32(abi.StatusHost))
		return
	}
	stack[0] = word(in.stateGet(i32(stack[0]), u32(stack[1]), u32(stack[2]), u32(stack[3]), u32(stack[4])))
}

func hostStatePut(ctx context.Context, _ api.Module, stack []uint64) {
	in := current(ctx)
	if in == nil {
		stack[0] = word(int32(abi.StatusHost))
		return
	}
	stack[0] = word(int32(in.statePut(i32(stack[0]), u32(stack[1]), u32(stack[2]), u32(stack[3]), u32(stack[4]))))
}

func hostStateDel(ctx context.Context, _ api.Module, stack []uint64) {
	in := current(ctx)
	if in == nil {
		stack[0] = word(int32(abi.StatusHost))
		return
	}
	stack[0] = word(int32(in.stateDel(i32(stack[0]), u32(stack[1]), u32(stack[2]))))
}

// view returns guest memory [ptr, ptr+n) when it lies inside memory. The
// view is valid only until the guest runs again.
func (in *instance) view(ptr, n uint32) ([]byte, bool) {
	if uint64(ptr)+uint64(n) > uint64(in.mem.Size()) {
		return nil, false
	}
	return in.mem.Read(ptr, n)
}

func (in *instance) outOfRange(fn, what string, ptr, n uint32) abi.Status {
	return in.c.violate("%s: %s range ptr=0x%x len=0x%x ends at 0x%x, past the end of guest memory (%d bytes)",
		fn, what, ptr, n, uint64(ptr)+uint64(n), in.mem.Size())
}

func (in *instance) emit(port int32, ptr, n uint32, count int32) abi.Status {
	return in.emitWith(port, ptr, n, count, false, 0)
}

// emitEnds is emit with the end of each record given (abi.ImportEmitEnds):
// count little-endian u32 at endsPtr, which the output check uses.
func (in *instance) emitEnds(port int32, ptr, n uint32, count int32, endsPtr uint32) abi.Status {
	return in.emitWith(port, ptr, n, count, true, endsPtr)
}

func (in *instance) emitWith(port int32, ptr, n uint32, count int32, hasEnds bool, endsPtr uint32) abi.Status {
	c := &in.c
	in.bill(uint64(n) + 4*uint64(max(count, 0)))
	switch {
	case c.mode == outNone:
		return c.violate("emit during %s, which has no output", c.export)
	case hasEnds && c.mode != outRecords:
		return c.violate("emit_ends during %s, whose output is not records (use emit)", c.export)
	case port < 0 || int(port) >= len(in.ports):
		return c.violate("emit to unknown port %d (this instance has ports 0 to %d: 0 is the main output, port returns the others)", port, len(in.ports)-1)
	case port != 0 && c.mode != outRecords:
		return c.violate("emit to port %d during %s, which outputs on port 0 only", port, c.export)
	case count < 0:
		return c.violate("emit with a negative count %d", count)
	}
	b, ok := in.view(ptr, n)
	if !ok {
		return in.outOfRange("emit", "output", ptr, n)
	}
	var ends []byte
	if hasEnds {
		size := 4 * uint64(count)
		if size > math.MaxUint32 {
			return c.violate("emit_ends: %d records need %d bytes of ends, more than wasm32 memory holds", count, size)
		}
		if ends, ok = in.view(endsPtr, uint32(size)); !ok {
			return in.outOfRange("emit_ends", "ends", endsPtr, uint32(size))
		}
	}
	if c.failed() {
		return c.failStatus // the call fails anyway: copy nothing more
	}
	rp := in.ports[port]
	if rp < 0 {
		return abi.StatusOK // a side output nothing consumes: dropped
	}
	// what the host keeps of the emit: its bytes, its ends and its span
	cost := int64(n) + int64(len(ends)) + emitOverhead
	if c.mode == outState {
		// operator state lives in guest memory: a snapshot never needs
		// more than the memory limit, whatever max-output-bytes says
		if limit := in.snapshotLimit(); int64(c.bytes)+cost > limit {
			return c.refuse(abi.StatusLimit, fmt.Errorf("%w: the snapshot emitted %d bytes, then %d more, past the limit of %s for a plugin's operator state (the instance's memory limit, the memory-pages setting; each emit counts %d bytes besides its elements)",
				ErrOutputLimit, c.bytes, cost, sizeText(uint64(limit)), emitOverhead))
		}
	} else if max := in.m.host.cfg.MaxOutputBytes; int64(c.bytes)+cost > int64(max) {
		return c.refuse(abi.StatusLimit, fmt.Errorf("%w: the call emitted %d bytes, then %d more, past the limit of %d bytes per call (the max-output-bytes setting; each emit counts %d bytes besides its records)",
			ErrOutputLimit, c.bytes, cost, max, emitOverhead))
	}
	checked := -1 // where the ends go in c.ends once checked
	if c.mode != outRecords || in.m.host.cfg.CheckOutput {
		var err error
		if hasEnds {
			err = abi.CheckBatchEnds(b, ends, int(count))
			checked = len(c.ends)
		} else {
			err = checkOutput(c.mode, b, int(count))
		}
		if err != nil {
			return c.refuse(abi.StatusMalformed, fmt.Errorf("%w on port %d from %s: %w", ErrMalformedOutput, port, c.export, err))
		}
	}
	if checked >= 0 { // handed on with the records: a key-by reads only their heads
		c.ends = append(c.ends, ends...)
	}
	start := len(c.out)
	c.out = append(c.out, b...)
	c.emits = append(c.emits, emitSpan{port: rp, start: start, end: len(c.out), count: int(count), ends: checked})
	c.bytes += int(cost)
	c.count += int(count)
	return abi.StatusOK
}

func (in *instance) port(ptr, n uint32) int32 {
	c := &in.c
	in.bill(uint64(n))
	tag, ok := in.view(ptr, n)
	if !ok {
		return int32(in.outOfRange("port", "tag", ptr, n))
	}
	if n > abi.MaxTagLen {
		return int32(c.violate("port: a tag of %d bytes, longer than the limit of %d", n, abi.MaxTagLen))
	}
	if n == 0 {
		return 0
	}
	if p, ok := in.tags[string(tag)]; ok {
		return p
	}
	if !utf8.Valid(tag) {
		return int32(c.violate("port: tag %q is not UTF-8", tag))
	}
	if len(in.ports) >= maxPorts {
		return int32(c.violate("port: more than %d side-output tags", maxPorts-1))
	}
	s := string(tag)
	rp := -1
	if in.env.port != nil {
		rp = in.env.port(s)
	}
	in.ports = append(in.ports, rp)
	p := int32(len(in.ports) - 1)
	in.tags[s] = p
	return p
}

func (in *instance) errorText(ptr, n uint32) {
	in.bill(uint64(min(n, abi.MaxErrorText)))
	b, ok := in.view(ptr, n)
	if !ok {
		in.outOfRange("error", "text", ptr, n)
		return
	}
	if len(b) > abi.MaxErrorText {
		b = b[:abi.MaxErrorText]
	}
	in.c.errText = append(in.c.errText[:0], b...)
}

// unkeyed refuses a state call on an operator without keyed state.
func (in *instance) unkeyed(fn string) abi.Status {
	return in.c.refuse(abi.StatusState, fmt.Errorf("%w: %s on an unkeyed operator: keyed state needs a keyBy before this operator", ErrState, fn))
}

func (in *instance) stateGet(slot int32, kp, kl, bp, bc uint32) int32 {
	in.bill(uint64(kl)) // the key is hashed; the value is billed below
	key, ok := in.view(kp, kl)
	if !ok {
		return int32(in.outOfRange("state_get", "key", kp, kl))
	}
	if uint64(bp)+uint64(bc) > uint64(in.mem.Size()) {
		return int32(in.outOfRange("state_get", "buffer", bp, bc))
	}
	if in.env.state == nil {
		return int32(in.unkeyed("state_get"))
	}
	if st, bad := in.badSlot("state_get", slot, 0); bad {
		return int32(st)
	}
	val, found, err := in.valueGet(int(slot), key)
	if err != nil {
		return int32(in.c.refuse(abi.StatusState, fmt.Errorf("%w: state_get slot %d: %w", ErrState, slot, err)))
	}
	if !found {
		return -1
	}
	in.buf = val[:0]
	in.bill(uint64(len(val))) // read from the store, and maybe copied
	if len(val) > math.MaxInt32 {
		return int32(in.c.refuse(abi.StatusState, fmt.Errorf("%w: state_get slot %d: a value of %d bytes", ErrState, slot, len(val))))
	}
	if uint64(len(val)) <= uint64(bc) {
		in.mem.Write(bp, val) // in range: checked above
	}
	return int32(len(val))
}

// badSlot refuses a slot outside 0..abi.MaxStateSlots-1 or a value longer
// than abi.MaxStateValue, whatever store holds the state (a job's, or
// host plugin run's and check's in memory), so a plugin meets the same
// limits everywhere.
func (in *instance) badSlot(fn string, slot int32, valLen int) (abi.Status, bool) {
	switch {
	case slot < 0 || slot >= abi.MaxStateSlots:
		return in.c.refuse(abi.StatusState, fmt.Errorf("%w: %s: state slot %d is out of range: slots are 0 to %d", ErrState, fn, slot, abi.MaxStateSlots-1)), true
	case valLen > abi.MaxStateValue:
		return in.c.refuse(abi.StatusState, fmt.Errorf("%w: %s slot %d: a state value of %d bytes is longer than the limit of %d", ErrState, fn, slot, valLen, abi.MaxStateValue)), true
	}
	return abi.StatusOK, false
}

func (in *instance) statePut(slot int32, kp, kl, vp, vl uint32) abi.Status {
	in.bill(uint64(kl) + uint64(vl))
	key, ok := in.view(kp, kl)
	if !ok {
		return in.outOfRange("state_put", "key", kp, kl)
	}
	val, ok := in.view(vp, vl)
	if !ok {
		return in.outOfRange("state_put", "value", vp, vl)
	}
	if in.env.state == nil {
		return in.unkeyed("state_put")
	}
	if st, bad := in.badSlot("state_put", slot, len(val)); bad {
		return st
	}
	if err := in.valuePut(int(slot), key, val); err != nil {
		return in.c.refuse(abi.StatusState, fmt.Errorf("%w: state_put slot %d: %w", ErrState, slot, err))
	}
	return abi.StatusOK
}

func (in *instance) stateDel(slot int32, kp, kl uint32) abi.Status {
	in.bill(uint64(kl))
	key, ok := in.view(kp, kl)
	if !ok {
		return in.outOfRange("state_del", "key", kp, kl)
	}
	if in.env.state == nil {
		return in.unkeyed("state_del")
	}
	if st, bad := in.badSlot("state_del", slot, 0); bad {
		return st
	}
	if err := in.valueDel(int(slot), key); err != nil {
		return in.c.refuse(abi.StatusState, fmt.Errorf("%w: state_del slot %d: %w", ErrState, slot, err))
	}
	return abi.StatusOK
}

// stateCall runs f with the instance of ctx, or returns StatusHost.
func stateCall(ctx context.Context, stack []uint64, f func(in *instance) int32) {
	in := current(ctx)
	if in == nil {
		stack[0] = word(int32(abi.StatusHost))
		return
	}
	stack[0] = word(f(in))
}

func hostStateListGet(ctx context.Context, _ api.Module, s []uint64) {
	stateCall(ctx, s, func(in *instance) int32 {
		return in.stateListGet(i32(s[0]), u32(s[1]), u32(s[2]), u32(s[3]), u32(s[4]))
	})
}

func hostStateListAppend(ctx context.Context, _ api.Module, s []uint64) {
	stateCall(ctx, s, func(in *instance) int32 {
		return int32(in.stateListAppend(i32(s[0]), u32(s[1]), u32(s[2]), u32(s[3]), u32(s[4])))
	})
}

func hostStateListUpdate(ctx context.Context, _ api.Module, s []uint64) {
	stateCall(ctx, s, func(in *instance) int32 {
		return int32(in.stateListUpdate(i32(s[0]), u32(s[1]), u32(s[2]), u32(s[3]), u32(s[4])))
	})
}

func hostStateMapGet(ctx context.Context, _ api.Module, s []uint64) {
	stateCall(ctx, s, func(in *instance) int32 {
		return in.stateMapGet(i32(s[0]), u32(s[1]), u32(s[2]), u32(s[3]), u32(s[4]), u32(s[5]), u32(s[6]))
	})
}

func hostStateMapPut(ctx context.Context, _ api.Module, s []uint64) {
	stateCall(ctx, s, func(in *instance) int32 {
		return int32(in.stateMapPut(i32(s[0]), u32(s[1]), u32(s[2]), u32(s[3]), u32(s[4]), u32(s[5]), u32(s[6])))
	})
}

func hostStateMapDel(ctx context.Context, _ api.Module, s []uint64) {
	stateCall(ctx, s, func(in *instance) int32 {
		return int32(in.stateMapDel(i32(s[0]), u32(s[1]), u32(s[2]), u32(s[3]), u32(s[4])))
	})
}

func hostStateMapContains(ctx context.Context, _ api.Module, s []uint64) {
	stateCall(ctx, s, func(in *instance) int32 {
		return in.stateMapContains(i32(s[0]), u32(s[1]), u32(s[2]), u32(s[3]), u32(s[4]))
	})
}

func hostStateMapEntries(ctx context.Context, _ api.Module, s []uint64) {
	stateCall(ctx, s, func(in *instance) int32 {
		return in.stateMapEntries(i32(s[0]), u32(s[1]), u32(s[2]), u32(s[3]), u32(s[4]))
	})
}

func hostStateClear(ctx context.Context, _ api.Module, s []uint64) {
	stateCall(ctx, s, func(in *instance) int32 { return int32(in.stateClear(i32(s[0]), u32(s[1]), u32(s[2]))) })
}
