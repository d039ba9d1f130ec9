package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/plan"
)

// subtask is one parallel instance of a task: one goroutine running the
// task's chain of operators.
type subtask struct {
	e       *Execution
	task    *plan.Task
	index   int
	ops     []*chainOp // head first
	gate    *gate      // nil for a source task
	outs    []*edgeOut // network outputs of every operator of the chain
	metrics *taskCounters

	source Source
	total  atomic.Int64 // source records to come; -1 unknown or not open yet
	err    *OpError
	ck     *subtaskCheckpoint // nil: checkpointing off
	// event time (eventtime.go): a source's watermark generation, the
	// valves over the input channels; nil when the job has none
	time  *sourceTime
	valve *inputValves
	// wall-clock processing-time timers (timers.go): the chain's
	// operators that may have them, and the timer that wakes the loop
	pt      []*chainOp
	ptTimer *time.Timer
}

func (s *subtask) parallelism() int { return s.task.Parallelism }

// run is the subtask's goroutine:
//
//	setup: make and open the chain's operators (tail first, as Flink does)
//	run:   the source's loop, or receive batches from the gate until every
//	       input channel ended
//	close: head to tail, each Close may emit into the next (batch finals)
//	end:   send what is pending and the end of every output channel
//
// On a failure, its own or another subtask's, what was emitted still flows
// downstream (the job drains: sources stop, ends propagate) and a failed
// subtask keeps consuming its input until its upstream ended. On teardown
// (cancel, drain timeout) every blocking call gives up at once. Whatever
// happens, every operator, source, partitioner and key selector made is
// closed.
func (s *subtask) run() {
	e := s.e
	defer e.wg.Done()
	s.metrics.started.Store(time.Now().UnixNano())
	defer func() { s.metrics.ended.Store(time.Now().UnixNano()) }()

	err := s.setup()
	if err == nil && s.gate != nil && e.deps.Restore != nil {
		err = s.replayChannelState()
	}
	if err == nil {
		switch {
		case s.source != nil:
			err = s.runSource()
		case s.ck != nil:
			err = s.runInputCheckpointed()
		default:
			err = s.runInput()
		}
	}
	if err == nil && s.ck != nil && !e.failed() {
		err = s.checkpointEnd()
	}
	if err == nil && s.closeChain(true) == nil && s.err == nil && !e.failed() && !e.hardStopped() {
		_ = s.endOutputs() // the end of event time, before the ends
	}
	if s.err != nil {
		e.fail(s.err) // first: sources stop while this subtask cleans up
	}
	_ = s.closeChain(false)
	s.closeState()
	if s.source != nil {
		if cerr := s.source.Close(); cerr != nil && s.err == nil {
			s.ops[0].fail(cerr)
		}
	}
	if !e.hardStopped() {
		for _, o := range s.outs {
			if err := o.end(); err != nil {
				break // torn down meanwhile
			}
		}
	}
	for _, o := range s.outs {
		if cerr := o.close(); cerr != nil && s.err == nil {
			s.ownerOf(o).fail(cerr)
		}
	}
	if s.err != nil {
		e.fail(s.err)
	}
	if s.gate != nil {
		s.drain()
	}
}

// setup makes the chain's operators, the edge plugin instances, and opens
// the operators from the tail to the head.
func (s *subtask) setup() error {
	e := s.e
	for _, co := range s.ops {
		if err := s.makeOperator(co); err != nil {
			return co.fail(err)
		}
	}
	for _, o := range s.outs {
		if err := s.makeEdgePlugins(o); err != nil {
			return s.ownerOf(o).fail(err)
		}
	}
	for i := len(s.ops) - 1; i >= 0; i-- {
		co := s.ops[i]
		ctx, oerr := s.openContext(co)
		if oerr != nil {
			return co.fail(oerr)
		}
		var restored checkpoint.Restore
		if e.deps.Restore != nil {
			var err error
			if restored, err = s.restoreOp(co); err != nil {
				return co.fail(fmt.Errorf("restoring from a checkpoint: %w", err))
			}
		}
		var err error
		if co.op != nil {
			err = co.op.Open(ctx)
		} else {
			ctx.idle = &s.metrics.idle
			err = s.source.Open(ctx)
		}
		co.opened = true
		if err == nil && e.deps.Restore != nil {
			if err = s.restoreState(co, restored); err != nil {
				err = fmt.Errorf("restoring from a checkpoint: %w", err)
			}
		}
		if err != nil {
			return co.fail(err)
		}
		if co.op == nil {
			s.total.Store(s.source.Total()) // after a restore: what is left
		}
		if e.hardStopped() {
			return errStopped
		}
	}
	return nil
}

// runSource runs the source until it ends. A source stopped because the
// job drains after a failure elsewhere ends normally.
func (s *subtask) runSource() error {
	var out Collector = s.ops[0].out
	if s.ck != nil {
		out = &sourceOut{c: s.ops[0].out, s: s}
	}
	if s.time != nil {
		out = &timedOut{next: out, s: s, t: s.time}
	} else if t := s.batchTimestamps(); t != nil {
		out = &stampedOut{timedOut{next: out, s: s, t: t}}
	}
	err := s.source.Run(s.e.srcCtx, out)
	switch {
	case err == nil, errors.Is(err, errSourceStopped) && s.ck != nil && s.ck.stopped:
		return nil
	case s.err != nil:
		return s.err // an operator of the chain failed inside Emit
	case s.e.hardStopped():
		return errStopped
	case s.e.srcCtx.Err() != nil && errors.Is(err, context.Canceled):
		return nil
	}
	return s.ops[0].fail(err)
}

// runInput feeds the head operator until every input channel ended.
func (s *subtask) runInput() error {
	g, head := s.gate, s.ops[0]
	done := s.e.ctx.Done()
	wake := s.wakeFunc()
	for g.ended < len(g.inputs) {
		m, ok := g.receive(done, &s.metrics.idle, wake)
		if !ok {
			return errStopped
		}
		switch m.kind {
		case msgTimer:
			if err := s.fireProcessing(); err != nil {
				return err
			}
		case msgData:
			err := head.processBatch(g.inputs[m.channel], m.buf)
			m.buf.release()
			if err != nil {
				return err
			}
		case msgEnd:
			g.ended++
			if err := s.inputTime(m); err != nil {
				return err
			}
		case msgWatermark, msgStatus:
			if err := s.inputTime(m); err != nil {
				return err
			}
		}
	}
	return nil
}

// drain consumes and drops what still arrives, so that upstream subtasks
// never block on a subtask that stopped early, until every channel ended
// or the job is torn down.
func (s *subtask) drain() {
	g := s.gate
	done := s.e.ctx.Done()
	if s.ck != nil { // what alignment held back
		for _, m := range s.ck.takeHeld() {
			if m.kind == msgData {
				m.buf.release()
			} else if m.kind == msgEnd {
				g.ended++
			}
		}
	}
	for g.ended < len(g.inputs) {
		m, ok := g.receive(done, &s.metrics.idle, nil)
		if !ok {
			return
		}
		if m.kind == msgData {
			m.buf.release()
		} else if m.kind == msgEnd {
			g.ended++
		}
	}
}

// closeChain closes the operators not closed yet, head to tail. With
// emit (a clean end of input) each Close gets its collector and may emit
// final results into the operators after it; otherwise (failure,
// teardown) Close(nil) only releases resources. A subtask whose input
// ended because the job failed elsewhere (its upstream drained) has no
// clean end: as Flink cancels the other tasks of a failed job, none
// finishes, and a BATCH aggregation emits no "final" value of the input
// that reached it before the failure.
func (s *subtask) closeChain(emit bool) error {
	for _, co := range s.ops {
		if co.op == nil && emit && s.err == nil && !s.e.hardStopped() && !s.e.failed() && !s.stoppedAtSavepoint() {
			_ = co.endWatermark() // a source: its input ended (no operator to call)
		}
		if co.op == nil || co.closed {
			continue
		}
		co.closed = true
		var out Collector
		if emit && s.err == nil && !s.e.hardStopped() && !s.e.failed() {
			out = co.out
			if s.stoppedAtSavepoint() {
				// no end of event time: the job resumes from the savepoint
			} else if err := co.endWatermark(); err != nil {
				_ = co.op.Close(nil)
				return err
			}
		}
		if err := co.op.Close(out); err != nil && out != nil {
			return co.fail(err)
		} else if err != nil && s.err == nil && !errors.Is(err, errStopped) {
			co.fail(err)
		}
	}
	return nil
}

// closeState closes the keyed state of the chain's operators (a Pebble
// database goes with its files), once they are closed.
func (s *subtask) closeState() {
	for _, co := range s.ops {
		if co.store == nil {
			continue
		}
		co.measureState(true) // the size it ended with stays in the metrics
		if err := co.store.Close(); err != nil && s.err == nil {
			co.fail(fmt.Errorf("closing keyed state: %w", err))
		}
		co.store = nil
	}
}

func (s *subtask) ownerOf(o *edgeOut) *chainOp {
	for _, co := range s.ops {
		if co.spec.ID == o.edge.From {
			return co
		}
	}
	return s.ops[0]
}
