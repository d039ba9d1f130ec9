package sdk

import (
	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/sdk/go/internal/hostcall"
)

// Timers, as Flink's TimerService and KeyedProcessFunction.onTimer
// (abi/timers.go): a KeyedProcess registers timers for the current key
// with ctx.Timers(), and the function given to OnTimer runs when one
// fires, with the timer's key as ctx.Key() and its keyed state:
//
//	sdk.KeyedProcess(func(r sdk.Record, ctx sdk.Context) error {
//		t, _ := r.Time()
//		return ctx.Timers().RegisterEventTime(t + 10_000)
//	}).OnTimer(func(t sdk.Timer, ctx sdk.Context) error {
//		ctx.Emit(sdk.NewRecord().SetStr("silent", ctx.Key().Str()))
//		return nil
//	})

// TimeDomain is the kind of a timer: event time or processing time.
type TimeDomain int32

const (
	EventTime      TimeDomain = abi.TimerEventTime
	ProcessingTime TimeDomain = abi.TimerProcessingTime
)

// Timer is a timer that fired: its domain and its time (epoch ms).
type Timer struct {
	Domain TimeDomain
	Time   int64
}

// OnTimer sets the function called when a timer of the current operator
// fires (Flink's onTimer). Records it emits carry the timer's time when it
// is an event-time timer and no time for a processing-time one, as Flink's
// TimestampedCollector stamps them. Only for a KeyedProcess.
func (o *Operator) OnTimer(fn func(Timer, Context) error) *Operator {
	need(fn == nil, "OnTimer")
	if !o.keyed || o.kind != abi.KindProcess {
		panic("sluice sdk: OnTimer is for a KeyedProcess: timers are keyed")
	}
	o.timerFn = fn
	return o
}

// TimerService registers and deletes the timers of the current key and
// reads the operator's clocks (Flink's TimerService).
type TimerService struct{}

// Timers returns the timer service of the current call.
func (Context) Timers() TimerService { return TimerService{} }

// CurrentWatermark is the operator's input watermark (math.MinInt64
// before the first).
func (TimerService) CurrentWatermark() int64 { return hostcall.CurrentWatermark() }

// CurrentProcessingTime is the processing-time clock in epoch ms: the real
// clock when the plugin is granted clock, else the host's deterministic one.
func (TimerService) CurrentProcessingTime() int64 { return hostcall.CurrentProcessingTime() }

// RegisterEventTime registers an event-time timer at ms for the current
// key: it fires once the watermark reaches ms. Registering it again does
// nothing.
func (TimerService) RegisterEventTime(ms int64) error { return timerCall(true, EventTime, ms) }

// RegisterProcessingTime registers a processing-time timer at ms.
func (TimerService) RegisterProcessingTime(ms int64) error {
	return timerCall(true, ProcessingTime, ms)
}

// DeleteEventTime deletes the current key's event-time timer at ms.
func (TimerService) DeleteEventTime(ms int64) error { return timerCall(false, EventTime, ms) }

// DeleteProcessingTime deletes the current key's processing-time timer at ms.
func (TimerService) DeleteProcessingTime(ms int64) error {
	return timerCall(false, ProcessingTime, ms)
}

func timerCall(register bool, d TimeDomain, ms int64) error {
	if reg.op == nil || reg.op.timerFn == nil {
		return errState("timers need an OnTimer function: sdk.KeyedProcess(fn).OnTimer(onTimer)")
	}
	key, err := currentKey()
	if err != nil {
		return err
	}
	if register {
		return hostStatus("timer_register", hostcall.TimerRegister(int32(d), key, ms))
	}
	return hostStatus("timer_delete", hostcall.TimerDelete(int32(d), key, ms))
}

// currentKey is the key of the record being processed, or of the timer
// firing.
func currentKey() ([]byte, error) {
	if eng.cur == nil {
		if eng.timerKey != nil {
			return eng.timerKey, nil
		}
		return nil, errState("keyed state is only usable while processing a record or a timer")
	}
	key := eng.cur.keyRaw()
	if key == nil {
		return nil, errState("keyed state needs a keyed input: the record has no key")
	}
	return key, nil
}

func guestOnTimer(kind int32, ts int64, key []byte) (st int32) {
	defer finish(&st)
	return report(eng.onTimer(kind, ts, key))
}

// onTimer implements sluice_on_timer.
func (e *engine) onTimer(kind int32, ts int64, key []byte) error {
	op := reg.op
	if op == nil {
		return errNoOperator
	}
	if op.timerFn == nil {
		return unsupported("sluice_on_timer: the operator has no OnTimer function")
	}
	e.beginCall()
	e.inCall = true
	e.timerKey = key
	e.timerTime, e.hasTimerTime = ts, TimeDomain(kind) == EventTime
	err := op.timerFn(Timer{Domain: TimeDomain(kind), Time: ts}, Context{})
	e.timerKey, e.hasTimerTime = nil, false
	if err == nil {
		err = e.err
	}
	if err != nil {
		return err
	}
	e.inCall = false
	return e.flush()
}
