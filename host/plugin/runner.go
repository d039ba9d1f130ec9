package plugin

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/sluicehq/sluice/host/restart"
)

// runner owns the instance of one subtask: it makes it on first use and
// makes a fresh one, opened again with the same arguments, after a call
// poisoned the last.
type runner struct {
	m      *Module
	ctx    context.Context
	who    target
	env    env
	args   openArgs
	opened bool // open succeeded once: replacements are opened again
	inst   *instance
	// tails of the last instance, kept after it is closed
	stdout, stderr string
	// journal, when set, undoes the keyed-state writes of a failed call
	journal *journal
	// accept, when set, judges the output of a call that returned OK; an
	// error fails the call as if the guest had, state writes undone
	accept func(*instance) error
	// crashes holds when records poisoned an instance (restart policy)
	crashes restart.Crashes
	// logDropped counts the guest log lines every instance dropped; made
	// with the first instance
	logDropped *atomic.Int64
}

type openArgs struct {
	config                               []byte
	subtask, parallelism, maxParallelism int32
}

// get returns the live instance, making (and opening) one when needed.
func (r *runner) get() (*instance, error) {
	if r.inst != nil && !r.inst.dead {
		return r.inst, nil
	}
	r.drop()
	if r.logDropped == nil {
		r.logDropped = new(atomic.Int64)
	}
	r.env.logDropped = r.logDropped
	in, err := r.m.instantiate(r.ctx, r.who, r.env)
	if err != nil {
		return nil, err
	}
	r.inst = in
	if r.opened {
		if err := r.callOpen(in); err != nil {
			r.drop()
			return nil, err
		}
	}
	return in, nil
}

// open calls sluice_open with a; later replacements are opened with it too.
func (r *runner) open(a openArgs) error {
	r.args, r.opened = a, false
	in, err := r.get()
	if err != nil {
		return err
	}
	if err := r.callOpen(in); err != nil {
		r.drop()
		return err
	}
	r.opened = true
	return nil
}

func (r *runner) callOpen(in *instance) error {
	ptr, err := in.writeInput(r.args.config)
	if err != nil {
		return err
	}
	in.stack[0], in.stack[1] = uint64(ptr), uint64(len(r.args.config))
	in.stack[2] = uint64(uint32(r.args.subtask))
	in.stack[3] = uint64(uint32(r.args.parallelism))
	in.stack[4] = uint64(uint32(r.args.maxParallelism))
	_, err = in.invoke(expOpen, outNone)
	return err
}

// call writes input into the guest and calls export e with params built
// by set from the buffer's pointer; the output stays in the instance.
func (r *runner) call(e int, mode outMode, input []byte, set func(stack []uint64, ptr uint32)) (*instance, error) {
	in, err := r.get()
	if err != nil {
		return nil, err
	}
	ptr, err := in.writeInput(input)
	if err != nil {
		r.settle()
		return nil, err
	}
	set(in.stack[:], ptr)
	return r.invoke(in, e, mode)
}

// callWith is call with a second input written after the first (see
// instance.writeInputs), for the guest's current instance in.
func (r *runner) callWith(in *instance, e int, mode outMode, input, extra []byte, set func(stack []uint64, ptr, extraPtr uint32)) (*instance, error) {
	ptr, extraPtr, err := in.writeInputs(input, extra)
	if err != nil {
		r.settle()
		return nil, err
	}
	set(in.stack[:], ptr, extraPtr)
	return r.invoke(in, e, mode)
}

// invoke calls export e of in, undoing the call's state writes when it
// fails.
func (r *runner) invoke(in *instance, e int, mode outMode) (*instance, error) {
	if r.journal != nil {
		r.journal.begin()
	}
	_, err := in.invoke(e, mode)
	if err == nil && r.accept != nil {
		err = r.accept(in)
	}
	if err != nil {
		r.settle()
		if r.journal != nil {
			if uerr := r.journal.undo(); uerr != nil {
				return nil, in.fail(exportNames[e], fmt.Errorf("%w: undoing the failed call's state writes: %w; call: %w", ErrState, uerr, err))
			}
		}
		return nil, err
	}
	if r.journal != nil { // the call stands: its old values are dropped now, or its batch applied
		if err := r.journal.commit(); err != nil {
			r.settle()
			return nil, in.fail(exportNames[e], fmt.Errorf("%w: applying the call's state writes: %w", ErrState, err))
		}
	}
	return in, nil
}

// settle drops the instance when the last call poisoned it.
func (r *runner) settle() {
	if r.inst != nil && r.inst.dead {
		r.drop()
	}
}

// drop forgets the current instance, closing it, and keeps its output tails.
func (r *runner) drop() {
	if r.inst == nil {
		return
	}
	r.stdout, r.stderr = r.inst.stdout.String(), r.inst.stderr.String()
	r.inst.close()
	r.inst = nil
}

// Output returns the tails of the guest's stdout and stderr: of the live
// instance, or of the last one when it was closed.
func (r *runner) output() (stdout, stderr string) {
	if r.inst != nil {
		return r.inst.stdout.String(), r.inst.stderr.String()
	}
	return r.stdout, r.stderr
}

// encodeConfig encodes an operator's configuration as the msgpack map
// sluice_open receives; nil is an empty map. Keys are sorted so the bytes
// are the same on every run.
func encodeConfig(cfg map[string]any) ([]byte, error) {
	if cfg == nil {
		cfg = map[string]any{}
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.UseCompactInts(true)
	if err := enc.Encode(cfg); err != nil {
		return nil, fmt.Errorf("encode the operator config as msgpack: %w", err)
	}
	return buf.Bytes(), nil
}
