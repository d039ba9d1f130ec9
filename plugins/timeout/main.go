// Command timeout is a sluice keyed process plugin with event-time timers,
// Flink's classic KeyedProcessFunction example (CountWithTimeoutFunction):
// it counts the records of each key and, when no record of a key arrived
// for timeout-ms of event time (default 10 s), emits
//
//	{"key": K, "count": n, "last": <event time of K's last record>, "message": "key K silent for 10 s"}
//
// stamped with the timer's time. Each record registers an event-time timer
// at its time + timeout; a timer that fires checks that it is the one the
// key's last record set (a later record set a later one), as Flink's
// example does.
package main

import (
	"strconv"

	sdk "github.com/sluicehq/sluice/sdk/go"
)

const (
	slotLast  = 0 // event time of the key's last record
	slotCount = 1 // records of the key
)

var timeout int64 = 10_000

func init() {
	sdk.OnOpen(func(oc sdk.OpenContext) error {
		timeout = oc.ConfigInt("timeout-ms", 10_000)
		if timeout <= 0 {
			return sdk.ConfigError("config timeout-ms: want a positive number of milliseconds, got " + strconv.FormatInt(timeout, 10))
		}
		return nil
	})
	sdk.KeyedProcess(func(r sdk.Record, ctx sdk.Context) error {
		ts, ok := r.Time()
		if !ok {
			return nil // no event time: nothing to time out
		}
		n, err := intState(ctx, slotCount)
		if err != nil {
			return err
		}
		if err := ctx.State(slotCount).PutInt(n + 1); err != nil {
			return err
		}
		if err := ctx.State(slotLast).PutInt(ts); err != nil {
			return err
		}
		return ctx.Timers().RegisterEventTime(ts + timeout)
	}).OnTimer(func(t sdk.Timer, ctx sdk.Context) error {
		last, err := intState(ctx, slotLast)
		if err != nil || t.Time != last+timeout {
			return err // a later record of the key set a later timer
		}
		n, err := intState(ctx, slotCount)
		if err != nil {
			return err
		}
		k := ctx.Key().Str()
		ctx.Emit(sdk.NewRecord().SetStr("key", k).SetInt("count", n).SetInt("last", last).
			SetStr("message", "key "+k+" silent for "+seconds(timeout)))
		return nil
	}).Named("timeout")
}

// intState reads an integer slot of the current key, 0 when unset.
func intState(ctx sdk.Context, slot int) (int64, error) {
	v, ok, err := ctx.State(slot).Get()
	if err != nil || !ok {
		return 0, err
	}
	return v.Int(), nil
}

// seconds renders ms as "10 s" or "1.5 s".
func seconds(ms int64) string {
	if ms%1000 == 0 {
		return strconv.FormatInt(ms/1000, 10) + " s"
	}
	return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + " s"
}

func main() {}
