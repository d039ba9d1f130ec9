package watermark

import (
	"testing"
	"time"
)

// TestSplitsCombineTheMinimum: Flink's per-split watermarks (a
// WatermarkOutputMultiplexer of deferred outputs): the subtask's
// watermark is the lowest of its splits' (each max timestamp − bound − 1);
// a split assigned but without records holds it at the start, a released
// one holds nothing back, and it never goes backwards.
func TestSplitsCombineTheMinimum(t *testing.T) {
	s := &Strategy{Kind: BoundedOutOfOrderness, MaxOutOfOrderness: 2 * time.Millisecond, Interval: DefaultInterval}
	m := NewSplits(s, NewGenerator(s))
	m.Add("t-0")
	m.Add("t-1")
	m.OnEvent("t-0", 100)
	if e := m.OnPeriodicEmit(0); e.HasWatermark || e.Idle {
		t.Fatalf("t-1 has no record yet, so no watermark: %+v", e)
	}
	m.OnEvent("t-1", 40)
	if e := m.OnPeriodicEmit(time.Millisecond); !e.HasWatermark || e.Watermark != 37 {
		t.Fatalf("emit %+v, want min(100, 40) − 2 − 1 = 37", e)
	}
	if wm, idle := m.Watermark("t-0"); wm != 97 || idle {
		t.Errorf("t-0's partial watermark %d (idle %v), want 97", wm, idle)
	}
	m.OnEvent("t-1", 30) // out of order: its own max stays 40
	if e := m.OnPeriodicEmit(2 * time.Millisecond); e.HasWatermark {
		t.Errorf("nothing advanced, yet %+v", e)
	}
	m.OnEvent("t-1", 200)
	if e := m.OnPeriodicEmit(3 * time.Millisecond); e.Watermark != 97 {
		t.Errorf("emit %+v, want t-0's 97 now that t-1 is past it", e)
	}
	m.Add("t-2") // a new partition: holds the watermark where it is (never backwards)
	m.OnEvent("t-0", 300)
	if e := m.OnPeriodicEmit(4 * time.Millisecond); e.HasWatermark {
		t.Errorf("t-2 has no record: %+v", e)
	}
	m.Release("t-2")
	if e := m.OnPeriodicEmit(5 * time.Millisecond); e.Watermark != 197 {
		t.Errorf("t-2 released: emit %+v, want min(297, 197) = 197", e)
	}
}

// TestSplitsIdleness: a split without records for longer than idleness
// is idle and stops holding the others back (WatermarksWithIdleness per
// split); when every split is idle the subtask is marked idle once; a
// record makes its split hold back again, and the next advancing
// watermark marks the output active before it.
func TestSplitsIdleness(t *testing.T) {
	s := &Strategy{Kind: Monotonous, Interval: DefaultInterval, Idleness: time.Second}
	m := NewSplits(s, NewGenerator(s))
	m.Add("fast")
	m.Add("quiet")
	tick := func(at time.Duration) Emit { return m.OnPeriodicEmit(at) }
	m.OnEvent("fast", 1000)
	if e := tick(0); e.HasWatermark {
		t.Fatalf("quiet is not idle yet: %+v", e)
	}
	m.OnEvent("fast", 2000)
	if e := tick(500 * time.Millisecond); e.HasWatermark {
		t.Fatalf("quiet is not idle yet: %+v", e)
	}
	m.OnEvent("fast", 3000)
	// quiet's timer started at 0: at 1.5 s it has been idle longer than 1 s
	if e := tick(1500 * time.Millisecond); !e.HasWatermark || e.Watermark != 2999 || e.Idle {
		t.Fatalf("quiet idle: emit %+v, want fast's 2999", e)
	}
	if _, idle := m.Watermark("quiet"); !idle {
		t.Error("quiet is not marked idle")
	}
	// fast stops too: its timer starts at 2 s, idle past 3 s
	if e := tick(2 * time.Second); e.HasWatermark || e.Idle {
		t.Errorf("emit %+v at 2 s", e)
	}
	if e := tick(3100 * time.Millisecond); !e.Idle || e.HasWatermark {
		t.Fatalf("every split idle: emit %+v, want the subtask idle", e)
	}
	if e := tick(3200 * time.Millisecond); e.Idle {
		t.Errorf("marked idle twice: %+v", e)
	}
	m.OnEvent("quiet", 5000)
	if e := tick(3300 * time.Millisecond); !e.Active || e.Watermark != 4999 {
		t.Errorf("quiet has a record, fast is idle: emit %+v, want active then 4999", e)
	}
}
