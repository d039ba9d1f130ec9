package plugin

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/tetratelabs/wazero/api"
)

// Timers of a keyed process plugin (abi/timers.go, Flink's TimerService):
// the host functions timer_register, timer_delete, current_watermark and
// current_processing_time, and the operator's side: the subtask's
// runtime.Timers over its keyed state (through the call's undo journal),
// fired into sluice_on_timer when the watermark or the processing-time
// clock passes them.

// timeEnv is what the timer host functions reach; one per operator,
// shared by the instances that replace one another.
type timeEnv struct {
	timers *runtime.Timers // nil: the operator is unkeyed or imports no timer_register
	wm     int64           // the operator's input watermark
	now    func() int64    // the processing-time clock, ms
}

// usesTime reports whether the module imports any of the timer calls.
func (m *Module) usesTime() bool {
	for _, name := range [...]string{abi.ImportTimerRegister, abi.ImportTimerDelete, abi.ImportCurrentWatermark, abi.ImportCurrentProcessingTime} {
		if m.bin.importsHost(name) {
			return true
		}
	}
	return false
}

// openTime makes the operator's timers and clocks when the module imports
// the timer calls (after openState, which may have made the TTL clock).
func (o *Operator) openTime(oc *runtime.OpenContext) error {
	m := o.r.m
	if !m.usesTime() {
		return nil
	}
	if m.bin.importsHost(abi.ImportTimerRegister) && o.kind != "" && o.kind != pipeline.KindProcess && o.kind != pipeline.KindCoProcess {
		// on_timer's output is a process's: any count, which a map's or a
		// filter's output check would not hold
		return fmt.Errorf("it imports %s, but timers are for a keyed process (or co-process) plugin, and it runs here as a %s", abi.ImportTimerRegister, o.kind)
	}
	t := &timeEnv{wm: abi.MinTimestamp}
	if m.host.cfg.AllowClock || m.grants.Clock {
		t.now = func() int64 { return time.Now().UnixMilli() }
	} else {
		if o.clock == nil {
			o.clock = &eventClock{}
		}
		t.now = o.clock.now
	}
	if oc.State != nil && m.bin.importsHost(abi.ImportTimerRegister) {
		backend, _ := oc.State.(runtime.StateBackend)
		timers, err := runtime.NewTimers(o.r.env.state, backend)
		if err != nil {
			return err
		}
		t.timers = timers
	}
	o.tm, o.r.env.time = t, t
	return nil
}

// ProcessWatermark fires the event-time timers the watermark passed, in
// timestamp order, before the engine forwards the watermark (Flink's
// InternalTimerServiceImpl.advanceWatermark), then the processing-time
// timers the clock passed. A plugin without timers only notes it for
// current_watermark.
func (o *Operator) ProcessWatermark(wm int64, out runtime.Collector) error {
	if o.tm == nil {
		return nil
	}
	if wm > o.tm.wm {
		o.tm.wm = wm
	}
	if err := o.fireTimers(abi.TimerEventTime, o.tm.wm, out); err != nil {
		return err
	}
	return o.fireProcessing(out)
}

// NextProcessingTime is when the earliest processing-time timer is due
// on the wall clock (runtime.ProcessingTimeOperator): only for a plugin
// granted the real clock; the deterministic clock moves with the input.
func (o *Operator) NextProcessingTime() (int64, bool) {
	if o.tm == nil || o.tm.timers == nil || o.clock != nil || o.closed {
		return 0, false
	}
	ts, ok, err := o.tm.timers.Next(abi.TimerProcessingTime)
	return ts, ok && err == nil
}

// OnProcessingTime fires the processing-time timers due now.
func (o *Operator) OnProcessingTime(out runtime.Collector) error {
	if o.closed {
		return nil
	}
	return o.fireProcessing(out)
}

// fireProcessing fires the processing-time timers the clock passed.
func (o *Operator) fireProcessing(out runtime.Collector) error {
	if o.tm == nil || o.tm.timers == nil || o.tm.timers.Queued(abi.TimerProcessingTime) == 0 {
		return nil
	}
	return o.fireTimers(abi.TimerProcessingTime, o.tm.now(), out)
}

// endTimers fires what is left at the end of the input, once the engine
// gave the end of event time (ProcessWatermark(MaxWatermark) fired the
// event-time timers): the event-time timers those callbacks registered,
// and every processing-time timer, as the host's windows fire at the end
// of input and Flink's BATCH execution fires every timer. A close
// without the end of event time is a stop-with-savepoint: the timers stay
// in the savepoint and fire after the job resumes, not now and again.
func (o *Operator) endTimers(out runtime.Collector) error {
	if o.tm == nil || o.tm.timers == nil || o.tm.wm != runtime.MaxWatermark {
		return nil
	}
	if err := o.fireTimers(abi.TimerEventTime, runtime.MaxWatermark, out); err != nil {
		return err
	}
	return o.fireTimers(abi.TimerProcessingTime, math.MaxInt64, out)
}

// fireTimers calls sluice_on_timer for each timer of kind up to upTo and
// hands its output on. A failed on_timer fails the operator: there is no
// record to skip or dead-letter.
func (o *Operator) fireTimers(kind int, upTo int64, out runtime.Collector) error {
	if o.tm.timers == nil {
		return nil
	}
	return o.tm.timers.Advance(kind, upTo, func(key []byte, ts int64) error {
		in, err := o.r.call(expOnTimer, outRecords, key, func(s []uint64, ptr uint32) {
			s[0], s[1], s[2], s[3] = uint64(uint32(int32(kind))), uint64(ts), uint64(ptr), uint64(len(key))
		})
		if err != nil {
			return err
		}
		return in.deliver(out)
	})
}

func hostTimerRegister(ctx context.Context, _ api.Module, s []uint64) {
	stateCall(ctx, s, func(in *instance) int32 {
		return int32(in.timerCall(abi.ImportTimerRegister, i32(s[0]), u32(s[1]), u32(s[2]), int64(s[3])))
	})
}

func hostTimerDelete(ctx context.Context, _ api.Module, s []uint64) {
	stateCall(ctx, s, func(in *instance) int32 {
		return int32(in.timerCall(abi.ImportTimerDelete, i32(s[0]), u32(s[1]), u32(s[2]), int64(s[3])))
	})
}

func hostCurrentWatermark(ctx context.Context, _ api.Module, s []uint64) {
	wm := abi.MinTimestamp
	if in := current(ctx); in != nil && in.env.time != nil {
		wm = in.env.time.wm
	}
	s[0] = uint64(wm)
}

func hostCurrentProcessingTime(ctx context.Context, _ api.Module, s []uint64) {
	var now int64
	if in := current(ctx); in != nil {
		if in.env.time != nil {
			now = in.env.time.now()
		} else if in.m.host.cfg.AllowClock || in.m.grants.Clock {
			now = time.Now().UnixMilli()
		}
	}
	s[0] = uint64(now)
}

// timerCall is timer_register and timer_delete.
func (in *instance) timerCall(fn string, kind int32, kp, kl uint32, ts int64) abi.Status {
	in.bill(uint64(kl))
	key, ok := in.view(kp, kl)
	if !ok {
		return in.outOfRange(fn, "key", kp, kl)
	}
	t := in.env.time
	if in.env.state == nil || t == nil || t.timers == nil {
		return in.c.refuse(abi.StatusState, fmt.Errorf("%w: %s on an unkeyed operator: timers are keyed state and need a keyBy before this operator", ErrState, fn))
	}
	var err error
	if fn == abi.ImportTimerRegister {
		err = t.timers.Register(int(kind), key, ts)
	} else {
		err = t.timers.Delete(int(kind), key, ts)
	}
	if err != nil {
		return in.c.refuse(abi.StatusState, fmt.Errorf("%w: %s: %w", ErrState, fn, err))
	}
	return abi.StatusOK
}
