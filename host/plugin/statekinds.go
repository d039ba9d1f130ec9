package plugin

import (
	"fmt"
	"math"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
)

// The host functions of list and map state, state_clear, and the value
// calls' kind and TTL checks (abi.ImportStateListGet and the rest):
// runtime.StateKinds does the work over the operator's keyed state (or
// the call's undo journal over it), so list and map state are undone,
// checkpointed and rescaled as values are.

// stateKinds returns the instance's list and map state, made on first use
// when the operator made none (host plugin run and check).
func (in *instance) stateKinds() *runtime.StateKinds {
	if in.env.kinds == nil {
		in.env.kinds, _ = runtime.NewStateKinds(in.env.state, nil, nil) // no TTL: cannot fail
	}
	return in.env.kinds
}

// valueGet is state_get's read: the slot must hold value state; a TTL
// hides and drops an expired value.
func (in *instance) valueGet(slot int, key []byte) ([]byte, bool, error) {
	k := in.env.kinds
	if k == nil {
		return in.env.state.Get(slot, key, in.buf[:0])
	}
	if err := k.Claim(abi.ImportStateGet, slot, runtime.KindValue); err != nil {
		return nil, false, err
	}
	if k.HasTTL(slot) {
		return k.ValueGet(slot, key, in.buf[:0])
	}
	return in.env.state.Get(slot, key, in.buf[:0])
}

func (in *instance) valuePut(slot int, key, val []byte) error {
	k := in.env.kinds
	if k == nil {
		return in.env.state.Put(slot, key, val)
	}
	if err := k.Claim(abi.ImportStatePut, slot, runtime.KindValue); err != nil {
		return err
	}
	return k.ValuePut(slot, key, val)
}

func (in *instance) valueDel(slot int, key []byte) error {
	if k := in.env.kinds; k != nil {
		if err := k.Claim(abi.ImportStateDel, slot, runtime.KindValue); err != nil {
			return err
		}
	}
	return in.env.state.Delete(slot, key)
}

// stateArgs reads the (ptr, len) pairs of a state call and checks the
// slot and that the operator is keyed; st is non-zero when refused.
func (in *instance) stateArgs(fn string, slot int32, pairs ...uint32) (bufs [3][]byte, st abi.Status) {
	var n uint64
	for i := 0; i+1 < len(pairs); i += 2 {
		n += uint64(pairs[i+1])
	}
	in.bill(n)
	names := [...]string{"key", "user key", "value"}
	for i := 0; i+1 < len(pairs); i += 2 {
		b, ok := in.view(pairs[i], pairs[i+1])
		if !ok {
			return bufs, in.outOfRange(fn, names[i/2], pairs[i], pairs[i+1])
		}
		bufs[i/2] = b
	}
	if in.env.state == nil {
		return bufs, in.unkeyed(fn)
	}
	if st, bad := in.badSlot(fn, slot, 0); bad {
		return bufs, st
	}
	return bufs, abi.StatusOK
}

// stateRefused fails the call with err from the state.
func (in *instance) stateRefused(fn string, slot int32, err error) abi.Status {
	return in.c.refuse(abi.StatusState, fmt.Errorf("%w: %s slot %d: %w", ErrState, fn, slot, err))
}

// giveBack copies val into the guest's buffer when it fits and returns
// its length (or -1 when !found), as state_get does.
func (in *instance) giveBack(fn string, slot int32, val []byte, found bool, bp, bc uint32) int32 {
	if !found {
		return -1
	}
	in.buf = val[:0]
	in.bill(uint64(len(val)))
	if len(val) > math.MaxInt32 {
		return int32(in.stateRefused(fn, slot, fmt.Errorf("%d bytes", len(val))))
	}
	if uint64(len(val)) <= uint64(bc) {
		in.mem.Write(bp, val) // in range: checked by the caller
	}
	return int32(len(val))
}

// getInto checks a result buffer's range.
func (in *instance) getInto(fn string, bp, bc uint32) (abi.Status, bool) {
	if uint64(bp)+uint64(bc) > uint64(in.mem.Size()) {
		return in.outOfRange(fn, "buffer", bp, bc), false
	}
	return abi.StatusOK, true
}

func (in *instance) stateListGet(slot int32, kp, kl, bp, bc uint32) int32 {
	const fn = abi.ImportStateListGet
	b, st := in.stateArgs(fn, slot, kp, kl)
	if st != abi.StatusOK {
		return int32(st)
	}
	if st, ok := in.getInto(fn, bp, bc); !ok {
		return int32(st)
	}
	val, found, err := in.stateKinds().ListGet(int(slot), b[0], in.buf[:0])
	if err != nil {
		return int32(in.stateRefused(fn, slot, err))
	}
	return in.giveBack(fn, slot, val, found, bp, bc)
}

func (in *instance) stateListAppend(slot int32, kp, kl, vp, vl uint32) abi.Status {
	const fn = abi.ImportStateListAppend
	b, st := in.stateArgs(fn, slot, kp, kl, 0, 0, vp, vl)
	if st != abi.StatusOK {
		return st
	}
	if err := in.stateKinds().ListAppend(int(slot), b[0], b[2]); err != nil {
		return in.stateRefused(fn, slot, err)
	}
	return abi.StatusOK
}

func (in *instance) stateListUpdate(slot int32, kp, kl, vp, vl uint32) abi.Status {
	const fn = abi.ImportStateListUpdate
	b, st := in.stateArgs(fn, slot, kp, kl, 0, 0, vp, vl)
	if st != abi.StatusOK {
		return st
	}
	if err := in.stateKinds().ListUpdate(int(slot), b[0], b[2]); err != nil {
		return in.stateRefused(fn, slot, err)
	}
	return abi.StatusOK
}

func (in *instance) stateMapGet(slot int32, kp, kl, up, ul, bp, bc uint32) int32 {
	const fn = abi.ImportStateMapGet
	b, st := in.stateArgs(fn, slot, kp, kl, up, ul)
	if st != abi.StatusOK {
		return int32(st)
	}
	if st, ok := in.getInto(fn, bp, bc); !ok {
		return int32(st)
	}
	val, found, err := in.stateKinds().MapGet(int(slot), b[0], b[1], in.buf[:0])
	if err != nil {
		return int32(in.stateRefused(fn, slot, err))
	}
	return in.giveBack(fn, slot, val, found, bp, bc)
}

func (in *instance) stateMapPut(slot int32, kp, kl, up, ul, vp, vl uint32) abi.Status {
	const fn = abi.ImportStateMapPut
	b, st := in.stateArgs(fn, slot, kp, kl, up, ul, vp, vl)
	if st != abi.StatusOK {
		return st
	}
	if err := in.stateKinds().MapPut(int(slot), b[0], b[1], b[2]); err != nil {
		return in.stateRefused(fn, slot, err)
	}
	return abi.StatusOK
}

func (in *instance) stateMapDel(slot int32, kp, kl, up, ul uint32) abi.Status {
	const fn = abi.ImportStateMapDel
	b, st := in.stateArgs(fn, slot, kp, kl, up, ul)
	if st != abi.StatusOK {
		return st
	}
	if err := in.stateKinds().MapDelete(int(slot), b[0], b[1]); err != nil {
		return in.stateRefused(fn, slot, err)
	}
	return abi.StatusOK
}

func (in *instance) stateMapContains(slot int32, kp, kl, up, ul uint32) int32 {
	const fn = abi.ImportStateMapContains
	b, st := in.stateArgs(fn, slot, kp, kl, up, ul)
	if st != abi.StatusOK {
		return int32(st)
	}
	ok, err := in.stateKinds().MapContains(int(slot), b[0], b[1])
	if err != nil {
		return int32(in.stateRefused(fn, slot, err))
	}
	if ok {
		return 1
	}
	return 0
}

func (in *instance) stateMapEntries(slot int32, kp, kl, bp, bc uint32) int32 {
	const fn = abi.ImportStateMapEntries
	b, st := in.stateArgs(fn, slot, kp, kl)
	if st != abi.StatusOK {
		return int32(st)
	}
	if st, ok := in.getInto(fn, bp, bc); !ok {
		return int32(st)
	}
	val, found, err := in.stateKinds().MapEntries(int(slot), b[0], in.buf[:0])
	if err != nil {
		return int32(in.stateRefused(fn, slot, err))
	}
	return in.giveBack(fn, slot, val, found, bp, bc)
}

func (in *instance) stateClear(slot int32, kp, kl uint32) abi.Status {
	const fn = abi.ImportStateClear
	b, st := in.stateArgs(fn, slot, kp, kl)
	if st != abi.StatusOK {
		return st
	}
	if err := in.stateKinds().Clear(int(slot), b[0]); err != nil {
		return in.stateRefused(fn, slot, err)
	}
	return abi.StatusOK
}
