package watermark

import (
	"testing"
	"time"
)

// BoundedOutOfOrdernessWatermarks: starts below anything (no watermark
// before an event), then max − bound − 1; monotonous is bound 0.
func TestBoundedOutOfOrderness(t *testing.T) {
	g := NewGenerator(&Strategy{Kind: BoundedOutOfOrderness, MaxOutOfOrderness: 10 * time.Millisecond})
	if e := g.OnPeriodicEmit(0); e.HasWatermark {
		t.Fatalf("a watermark %d before any event", e.Watermark)
	}
	if g.Current() != Min {
		t.Fatalf("Current %d before any event, want Long.MIN_VALUE", g.Current())
	}
	for _, c := range []struct {
		ts   int64
		want int64
		emit bool
	}{{100, 89, true}, {95, 89, false}, {120, 109, true}, {0, 109, false}, {121, 110, true}} {
		g.OnEvent(c.ts)
		e := g.OnPeriodicEmit(0)
		if e.HasWatermark != c.emit || g.Current() != c.want || (c.emit && e.Watermark != c.want) {
			t.Fatalf("after %d: emit %+v, Current %d; want %d (emitted: %v)", c.ts, e, g.Current(), c.want, c.emit)
		}
	}
	if e := g.End(); !e.HasWatermark || e.Watermark != Max {
		t.Fatalf("End emitted %+v, want the MaxWatermark", e)
	}
	m := NewGenerator(&Strategy{Kind: Monotonous, MaxOutOfOrderness: time.Hour})
	m.OnEvent(7)
	if e := m.OnPeriodicEmit(0); e.Watermark != 6 {
		t.Fatalf("monotonous after 7 emitted %+v, want 6", e)
	}
}

// Flink's WatermarksWithIdlenessTest on the IdlenessTimer, through the
// generator: a countdown starts at the first emit with no events, idle
// when strictly more than the timeout passed; an event makes it active,
// and the next watermark carries ACTIVE first.
func TestIdleness(t *testing.T) {
	ms := time.Millisecond
	g := NewGenerator(&Strategy{Kind: Monotonous, Idleness: 10 * ms})
	if e := g.OnPeriodicEmit(1000 * ms); e != (Emit{}) { // initially active: starts the timer
		t.Fatalf("first emit %+v", e)
	}
	if e := g.OnPeriodicEmit(1010 * ms); e != (Emit{}) { // exactly the timeout: not more
		t.Fatalf("at the timeout: %+v", e)
	}
	if e := g.OnPeriodicEmit(1011 * ms); !e.Idle {
		t.Fatalf("past the timeout: %+v, want IDLE", e)
	}
	if e := g.OnPeriodicEmit(1111 * ms); e != (Emit{}) { // repeated checks: still idle, said once
		t.Fatalf("repeated idle check emitted %+v", e)
	}
	g.OnEvent(50)
	if e := g.OnPeriodicEmit(1112 * ms); !e.Active || !e.HasWatermark || e.Watermark != 49 {
		t.Fatalf("after an event: %+v, want ACTIVE then 49", e)
	}
	g.OnPeriodicEmit(1113 * ms) // idle again: starts the timer
	if e := g.OnPeriodicEmit(1124 * ms); !e.Idle {
		t.Fatalf("idle again: %+v", e)
	}
	// no idleness configured: never idle
	n := NewGenerator(&Strategy{Kind: Monotonous})
	for i := 0; i < 5; i++ {
		if e := n.OnPeriodicEmit(time.Duration(i) * time.Hour); e.Idle {
			t.Fatal("idle without an idleness")
		}
	}
}
