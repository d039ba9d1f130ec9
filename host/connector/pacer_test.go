package connector

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// The subtasks' allowances add up to the source's floor(t*rate)+1 at every
// instant, split by sequence number.
func TestPacerSplitsTheRateAcrossSubtasks(t *testing.T) {
	start := time.Unix(1000, 0)
	const rate = 1000.0
	pacers := []*pacer{newPacer(start, rate, 0, 3), newPacer(start, rate, 1, 3), newPacer(start, rate, 2, 3)}
	emitted := make([]uint64, 3)
	for ms := 0; ms <= 2000; ms += 7 {
		now := start.Add(time.Duration(ms) * time.Millisecond)
		var sum uint64
		for i, p := range pacers {
			emitted[i] += p.due(now, emitted[i])
			sum += emitted[i]
		}
		if want := uint64(ms) + 1; sum != want {
			t.Fatalf("at %d ms the subtasks may have emitted %d records, want %d", ms, sum, want)
		}
		if want := splitCount(uint64(ms)+1, 1, 3); emitted[1] != want {
			t.Fatalf("at %d ms subtask 1 emitted %d, want %d", ms, emitted[1], want)
		}
	}
	if d := pacers[0].due(start.Add(-time.Second), 0); d != 1 {
		t.Errorf("before the start: due %d, want the first record only", d)
	}
}

// After a stall the pacer catches up at most one second (or one batch) of
// records, then keeps the rate from there.
func TestPacerForgivesLongStalls(t *testing.T) {
	start := time.Unix(0, 0)
	p := newPacer(start, 10_000, 0, 1) // burst: 10,000 records
	if d := p.due(start.Add(5*time.Second), 0); d != 10_000 {
		t.Fatalf("after a 5 s stall: due %d, want the 10,000-record burst", d)
	}
	if d := p.due(start.Add(5*time.Second+100*time.Millisecond), 10_000); d != 1000 {
		t.Fatalf("100 ms later: due %d, want 1000", d)
	}
	low := newPacer(start, 1, 0, 1) // burst floor: one batch
	if d := low.due(start.Add(time.Hour), 0); d != maxBatchRecords {
		t.Fatalf("slow source after an hour: due %d, want %d", d, maxBatchRecords)
	}
}

func TestPacerTick(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		p    int
		want time.Duration
	}{{1e6, 1, 5 * time.Millisecond}, {1, 1, 100 * time.Millisecond}, {50, 1, 20 * time.Millisecond}, {100, 2, 20 * time.Millisecond}, {1e-12, 4, 100 * time.Millisecond}} {
		if got := newPacer(time.Time{}, tc.rate, 0, tc.p).tick(); got != tc.want {
			t.Errorf("rate %v p %d: tick %v, want %v", tc.rate, tc.p, got, tc.want)
		}
	}
}

// A paced generator runs on a fake clock (testing/synctest): record n of
// the source is never emitted before n/rate, and the run takes as long as
// the rate says.
func TestGeneratorRateOnFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate, count = 200.0, 100
		type stamp struct {
			n  int
			at time.Duration
		}
		var stamps []stamp
		for sub := 0; sub < 2; sub++ {
			src, err := (&Builtin{}).Source(genSpec(map[string]any{"preset": "sequence", "count": count, "rate": rate}), sub, 2)
			if err != nil {
				t.Fatal(err)
			}
			c := &collector{t: t}
			begin := time.Now()
			c.onEmit = func(c *collector) {
				for i := len(stamps); i < len(c.records); i++ {
					stamps = append(stamps, stamp{int(seqOf(t, "sequence", c.records[i])), time.Since(begin)})
				}
			}
			stamps = stamps[:0]
			if err := src.Run(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			if len(c.records) != count/2 {
				t.Fatalf("subtask %d: %d records", sub, len(c.records))
			}
			for _, s := range stamps {
				if due := time.Duration(float64(s.n) / rate * float64(time.Second)); s.at < due {
					t.Errorf("subtask %d: record %d emitted at %v, due at %v", sub, s.n, s.at, due)
				}
			}
			// The last record of subtask 1 (n=99) is due at 495 ms; ticks
			// come every 10 ms.
			if took := time.Since(begin); took < 490*time.Millisecond || took > 510*time.Millisecond {
				t.Errorf("subtask %d took %v, want about 0.5 s", sub, took)
			}
		}
	})
}

func TestGeneratorRateStopsOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, err := (&Builtin{}).Source(genSpec(map[string]any{"preset": "sequence", "rate": 100}), 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c := &collector{t: t}
		if err := src.Run(ctx, c); err != context.DeadlineExceeded {
			t.Fatalf("Run = %v, want the deadline", err)
		}
		// 0 .. 1 s at 100/s: records 0..100, give or take the last tick.
		if n := len(c.records); n < 99 || n > 101 {
			t.Errorf("%d records in one second at 100/s", n)
		}
	})
}
