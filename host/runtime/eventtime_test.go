package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/pipeline"
)

// Event time end to end, on fakes: a fake clock (Deps.Now) that the
// sources advance by one watermark interval after each record, so that a
// periodic emit follows every record; a spy WatermarkOperator that keeps
// the watermarks it gets, in order, and the records that reached it late.

type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) add(d time.Duration)     { c.ns.Add(int64(d)) }
func newFakeClock() *fakeClock               { c := &fakeClock{}; c.ns.Store(int64(time.Hour)); return c }
func (c *fakeClock) deps(d Deps) Deps        { d.Now = c.now; return d }
func (c *fakeClock) String() string          { return c.now().String() }
func (c *fakeClock) since(t time.Time) int64 { return c.now().Sub(t).Milliseconds() }

// etConnectors: a "generator" source whose records carry the event times
// times(op, subtask) gives ({"t": time, "sub": subtask} values, the time
// also in the envelope unless noTime), one record per batch, the clock
// advanced by step after each; with hold set, an unbounded source keeps
// emitting records with rising times until hold closes.
type etConnectors struct {
	*fakeConnectors
	clock  *fakeClock
	step   time.Duration
	times  func(op string, subtask int) []int64
	noTime bool
	value  func(t int64) []byte // the value of a record of time t; nil: {"t": t, "sub": i}
	hold   chan struct{}
	holdOn func(subtask int) bool // which subtasks keep emitting while held
}

func (c *etConnectors) Source(spec *pipeline.Operator, subtask, parallelism int) (Source, error) {
	c.open.Add(1)
	return &etSource{c: c, op: spec.ID, sub: subtask}, nil
}

type etSource struct {
	c   *etConnectors
	op  string
	sub int
}

func (s *etSource) Open(*OpenContext) error { return nil }
func (s *etSource) Total() int64            { return -1 }
func (s *etSource) Close() error            { s.c.open.Add(-1); return nil }

func (s *etSource) Run(ctx context.Context, out Collector) error {
	mb, _ := out.(SourceMailbox)
	var w abi.Writer
	emit := func(t int64) error {
		w.Reset()
		v := enc("t", t, "sub", int64(s.sub))
		if s.c.value != nil {
			v = s.c.value(t)
		}
		w.Append(t, !s.c.noTime, nil, v)
		if err := out.Emit(0, w.Buf, w.Count); err != nil {
			return err
		}
		s.c.clock.add(s.c.step)
		if mb != nil {
			return mb.Yield()
		}
		return nil
	}
	ts := s.c.times(s.op, s.sub)
	for _, t := range ts {
		if err := emit(t); err != nil {
			return err
		}
	}
	if s.c.hold == nil {
		return nil
	}
	next := int64(0)
	if len(ts) > 0 {
		next = slices.Max(ts)
	}
	for {
		select {
		case <-s.c.hold:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if s.c.holdOn != nil && s.c.holdOn(s.sub) {
			next++
			if err := emit(next); err != nil {
				return err
			}
		} else {
			s.c.clock.add(s.c.step)
			if mb == nil {
				return fmt.Errorf("source %s: no SourceMailbox with a watermark strategy", s.op)
			}
			if err := mb.Yield(); err != nil {
				return err
			}
		}
		time.Sleep(200 * time.Microsecond) // pacing only: the clock is the fake's
	}
}

// spyLog is what every spy subtask saw.
type spyLog struct {
	mu   sync.Mutex
	wms  map[string][]int64 // "op/subtask" -> watermarks in order
	late map[string]int     // records with a time at or below the watermark
	recs map[string]int
	seen chan int64 // every watermark, for tests that wait on one
}

func newSpyLog() *spyLog {
	return &spyLog{wms: map[string][]int64{}, late: map[string]int{}, recs: map[string]int{}, seen: make(chan int64, 1<<16)}
}

func (l *spyLog) get(key string) []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int64(nil), l.wms[key]...)
}

// spyOp is a WatermarkOperator: it passes its records on, and in
// ProcessWatermark emits a marker record {"wm": wm} before the engine
// forwards the watermark (what a window firing does).
type spyOp struct {
	log    *spyLog
	key    string
	wm     int64
	marker bool
	w      abi.Writer
}

func (o *spyOp) Open(ctx *OpenContext) error {
	o.key = fmt.Sprintf("%s/%d", ctx.Operator, ctx.Subtask)
	o.wm = MinWatermark
	return nil
}

func (o *spyOp) Process(_ int, b []byte, count int, out Collector) error {
	rd := abi.NewReader(b, count)
	o.log.mu.Lock()
	for rd.Next() {
		r := rd.Current()
		if _, isMarker, _ := abi.MapField(r.Value, "wm"); isMarker {
			continue
		}
		o.log.recs[o.key]++
		if r.HasTime && r.Time <= o.wm {
			o.log.late[o.key]++
		}
	}
	o.log.mu.Unlock()
	if err := rd.Err(); err != nil {
		return err
	}
	return out.Emit(0, b, count)
}

func (o *spyOp) ProcessWatermark(wm int64, out Collector) error {
	if wm <= o.wm {
		return fmt.Errorf("%s: watermark %d after %d", o.key, wm, o.wm)
	}
	o.wm = wm
	o.log.mu.Lock()
	o.log.wms[o.key] = append(o.log.wms[o.key], wm)
	o.log.mu.Unlock()
	select {
	case o.log.seen <- wm:
	default:
	}
	if !o.marker {
		return nil
	}
	o.w.Reset()
	o.w.Append(wm, true, nil, enc("wm", wm))
	return out.Emit(0, o.w.Buf, o.w.Count)
}

func (o *spyOp) Close(Collector) error { return nil }

// spyPlugins makes spy operators for plugin "spy" (and "marker", a spy
// that emits markers), the fakes' otherwise.
type spyPlugins struct {
	*fakePlugins
	log *spyLog
}

func (p *spyPlugins) Operator(opID, plugin string, subtask int) (Operator, error) {
	switch plugin {
	case "spy":
		return &spyOp{log: p.log}, nil
	case "marker":
		return &spyOp{log: p.log, marker: true}, nil
	}
	return p.fakePlugins.Operator(opID, plugin, subtask)
}

func runET(t *testing.T, src string, conn *etConnectors, edit func(*pipeline.Pipeline)) (*spyLog, *Result) {
	t.Helper()
	log := newSpyLog()
	res, err := Run(context.Background(), planYAML(t, src, edit), conn.clock.deps(Deps{Plugins: &spyPlugins{newFakePlugins(), log}, Connectors: conn}))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return log, res
}

func strictlyRising(wms []int64) bool {
	for i := 1; i < len(wms); i++ {
		if wms[i] <= wms[i-1] {
			return false
		}
	}
	return true
}

const etPlugins = `
plugins:
  spy: { path: spy.wasm }
  marker: { path: marker.wasm }
  twice: { path: twice.wasm }
`

// Out-of-order input within the bound gives what sorted input gives: no
// record late at the WatermarkOperator, the same last watermark
// (max − bound − 1), then the end of event time; the out-of-order run's
// watermarks are among the sorted run's.
func TestWatermarksOutOfOrderWithinBound(t *testing.T) {
	src := `
version: 1
name: ooo
` + etPlugins + `
operators:
  - id: src
    source:
      type: generator
      preset: sequence
      count: 100
      watermarks: { strategy: bounded-out-of-orderness, max-out-of-orderness: 10ms, interval: 5ms }
  - id: w
    process: spy
  - id: out
    sink: { type: discard }
`
	sorted := make([]int64, 100)
	for i := range sorted {
		sorted[i] = int64(i)
	}
	shuffled := slices.Clone(sorted)
	for i := 0; i+10 <= len(shuffled); i += 10 { // reverse each run of 10: at most 9 behind the max
		slices.Reverse(shuffled[i : i+10])
	}
	got := map[string][]int64{}
	for name, ts := range map[string][]int64{"sorted": sorted, "shuffled": shuffled} {
		conn := &etConnectors{fakeConnectors: newFakeConnectors(), clock: newFakeClock(), step: 5 * time.Millisecond,
			times: func(string, int) []int64 { return ts }}
		log, res := runET(t, src, conn, nil)
		wms := log.get("w/0")
		if n := log.late["w/0"]; n != 0 {
			t.Errorf("%s: %d records late at w", name, n)
		}
		if log.recs["w/0"] != 100 {
			t.Errorf("%s: w got %d records, want 100", name, log.recs["w/0"])
		}
		if !strictlyRising(wms) || len(wms) < 2 || wms[len(wms)-1] != MaxWatermark || wms[len(wms)-2] != 99-10-1 {
			t.Fatalf("%s: w saw %v, want rising, ending 88 then MaxWatermark", name, wms)
		}
		got[name] = wms
		m := res.Operator("w").Subtasks[0]
		if m.InputWatermark != MaxWatermark || m.OutputWatermark != MaxWatermark {
			t.Errorf("%s: metrics say input %d output %d at the end", name, m.InputWatermark, m.OutputWatermark)
		}
	}
	if got["sorted"][0] != -11 || len(got["sorted"]) != 100+1 {
		t.Errorf("sorted: one watermark per record from -11: %v", got["sorted"])
	}
	for _, wm := range got["shuffled"] {
		if !slices.Contains(got["sorted"], wm) {
			t.Errorf("shuffled emitted %d, which sorted did not", wm)
		}
	}
}

// An idle source subtask does not hold the watermark back once idleness
// passed: subtask 1 of src reads nothing; subtask 0 keeps reading; the
// spy downstream sees watermarks rise while both still run. Without
// idleness it sees nothing but the end of event time.
func TestWatermarksIdleSubtask(t *testing.T) {
	for _, idle := range []bool{true, false} {
		t.Run(fmt.Sprintf("idleness=%v", idle), func(t *testing.T) {
			extra := ""
			if idle {
				extra = ", idleness: 50ms"
			}
			src := `
version: 1
name: idle
` + etPlugins + `
operators:
  - id: src
    parallelism: 2
    source:
      type: generator
      preset: sequence
      watermarks: { strategy: monotonous, interval: 10ms` + extra + ` }
  - id: w
    parallelism: 1
    process: spy
  - id: out
    sink: { type: discard }
`
			conn := &etConnectors{fakeConnectors: newFakeConnectors(), clock: newFakeClock(), step: 10 * time.Millisecond,
				times: func(_ string, sub int) []int64 {
					if sub == 0 {
						return []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
					}
					return nil
				},
				hold: make(chan struct{}), holdOn: func(sub int) bool { return sub == 0 }}
			log := newSpyLog()
			e, err := Start(context.Background(), planYAML(t, src, nil), conn.clock.deps(Deps{Plugins: &spyPlugins{newFakePlugins(), log}, Connectors: conn}))
			if err != nil {
				t.Fatal(err)
			}
			if idle {
				deadline := time.After(30 * time.Second) // a failure guard, not a measurement
			wait:
				for {
					select {
					case wm := <-log.seen:
						if wm >= 9 && wm != MaxWatermark {
							break wait
						}
					case <-deadline:
						close(conn.hold)
						e.Wait()
						t.Fatalf("no watermark passed 9 while subtask 1 was idle; w saw %v", log.get("w/0"))
					}
				}
			} else {
				time.Sleep(100 * time.Millisecond) // let both run a while: subtask 1 has no watermark, so none can pass
				if got := log.get("w/0"); len(got) != 0 {
					t.Fatalf("without idleness w saw %v while subtask 1, active, had no watermark", got)
				}
			}
			close(conn.hold)
			if _, err := e.Wait(); err != nil {
				t.Fatal(err)
			}
			wms := log.get("w/0")
			if !strictlyRising(wms) || wms[len(wms)-1] != MaxWatermark {
				t.Fatalf("w saw %v: want rising, ending at MaxWatermark", wms)
			}
			if n := log.late["w/0"]; n != 0 {
				t.Errorf("%d records late", n)
			}
		})
	}
}

// Across a HASH edge every downstream subtask takes the minimum over all
// upstream subtasks, which advance at different speeds: no record is
// late, watermarks rise and end at MaxWatermark, at parallelism 1 and 4.
func TestWatermarksAcrossHash(t *testing.T) {
	for _, p := range []int{1, 4} {
		t.Run(fmt.Sprintf("p%d", p), func(t *testing.T) {
			src := fmt.Sprintf(`
version: 1
name: hash
parallelism: %d
`+etPlugins+`
operators:
  - id: src
    source:
      type: generator
      preset: sequence
      count: 1
      watermarks: { strategy: bounded-out-of-orderness, max-out-of-orderness: 3ms, interval: 1ms }
  - id: w
    key-by: sub
    process: spy
  - id: out
    sink: { type: discard }
`, p)
			conn := &etConnectors{fakeConnectors: newFakeConnectors(), clock: newFakeClock(), step: time.Millisecond,
				times: func(_ string, sub int) []int64 {
					var ts []int64
					for i := int64(0); i < 200; i++ {
						ts = append(ts, i*int64(sub+1)) // subtask i runs i+1 times as fast through event time
					}
					return ts
				}}
			log, res := runET(t, src, conn, nil)
			finite := 0
			for i := 0; i < p; i++ {
				key := fmt.Sprintf("w/%d", i)
				wms := log.get(key)
				if !strictlyRising(wms) || len(wms) == 0 || wms[len(wms)-1] != MaxWatermark {
					t.Fatalf("%s saw %v", key, wms)
				}
				finite += len(wms) - 1
				if n := log.late[key]; n != 0 {
					t.Errorf("%s: %d records late", key, n)
				}
			}
			if finite == 0 {
				t.Error("no subtask of w saw a watermark before the end")
			}
			total := 0
			for _, s := range res.Operator("w").Subtasks {
				total += int(s.RecordsIn)
			}
			if total != 200*p {
				t.Errorf("w got %d records, want %d", total, 200*p)
			}
		})
	}
}

// A chain hands each watermark down in order: what a WatermarkOperator
// emits in ProcessWatermark reaches the next operator before the
// watermark does, chained and across the network.
func TestWatermarksThroughChain(t *testing.T) {
	src := `
version: 1
name: chain
` + etPlugins + `
operators:
  - id: src
    source:
      type: generator
      preset: sequence
      count: 1
      watermarks: { strategy: monotonous, interval: 1ms }
  - id: a
    process: marker
  - id: b
    flat-map: twice
  - id: c
    process: marker
  - id: d
    process: spy
  - id: out
    sink: { type: discard }
`
	for _, chained := range []bool{true, false} {
		conn := &etConnectors{fakeConnectors: newFakeConnectors(), clock: newFakeClock(), step: time.Millisecond,
			times: func(string, int) []int64 { return []int64{10, 20, 30} },
			value: func(t int64) []byte { return enc("n", t) }}
		log, _ := runET(t, src, conn, func(p *pipeline.Pipeline) { p.Chaining = chained })
		want := []int64{9, 19, 29, MaxWatermark}
		for _, op := range []string{"a", "c", "d"} {
			if got := log.get(op + "/0"); !slices.Equal(got, want) {
				t.Errorf("chaining %v: %s saw %v, want %v", chained, op, got, want)
			}
		}
		// markers are records stamped with their watermark: one that came
		// after its watermark would be late at c and d
		for _, op := range []string{"c/0", "d/0"} {
			if n := log.late[op]; n != 0 {
				t.Errorf("chaining %v: %d records late at %s", chained, n, op)
			}
		}
	}
}

// BATCH uses no watermarks while it runs: a keyed WatermarkOperator (fed
// from its sorted input) gets every record, then the end of event time,
// once; so does one reading a blocking exchange.
func TestWatermarksBatch(t *testing.T) {
	src := `
version: 1
name: batch
mode: batch
parallelism: 2
` + etPlugins + `
operators:
  - id: src
    source:
      type: generator
      preset: sequence
      count: 1
      watermarks: { strategy: monotonous, interval: 1ms }
  - id: k
    key-by: sub
    process: spy
  - id: r
    partition: rebalance
    process: spy
  - id: out
    sink: { type: discard }
`
	conn := &etConnectors{fakeConnectors: newFakeConnectors(), clock: newFakeClock(), step: time.Millisecond,
		times: func(string, int) []int64 { return []int64{3, 1, 2} }}
	log, _ := runET(t, src, conn, nil)
	for _, key := range []string{"k/0", "k/1", "r/0", "r/1"} {
		if got := log.get(key); !slices.Equal(got, []int64{MaxWatermark}) {
			t.Errorf("%s saw %v, want only MaxWatermark", key, got)
		}
		if log.late[key] != 0 {
			t.Errorf("%s: records after the end of event time", key)
		}
	}
}

// timestamp: {field: ...} writes the envelope's event time from the
// field, epoch millis or RFC 3339; a record without it goes to on-error.
func TestWatermarksTimestampField(t *testing.T) {
	for _, format := range []string{"epoch-millis", "rfc3339"} {
		src := `
version: 1
name: field
` + etPlugins + `
operators:
  - id: src
    on-error: skip
    source:
      type: generator
      preset: sequence
      count: 1
      watermarks: { strategy: monotonous, interval: 1ms, timestamp: { field: ts, format: ` + format + ` } }
  - id: d
    process: spy
  - id: out
    sink: { type: discard }
`
		conn := &etConnectors{fakeConnectors: newFakeConnectors(), clock: newFakeClock(), step: time.Millisecond, noTime: true,
			times: func(string, int) []int64 { return []int64{1000, 2000, -1, 3000} },
			value: func(t int64) []byte {
				if t < 0 {
					return enc("other", t)
				}
				if format == "rfc3339" {
					return enc("ts", time.UnixMilli(t).UTC().Format(time.RFC3339Nano))
				}
				return enc("ts", t)
			}}
		log, res := runET(t, src, conn, nil)
		if got, want := log.get("d/0"), []int64{999, 1999, 2999, MaxWatermark}; !slices.Equal(got, want) {
			t.Errorf("%s: d saw %v, want %v", format, got, want)
		}
		if m := res.Operator("src"); m.Skipped != 1 || m.RecordsOut != 3 {
			t.Errorf("%s: src skipped %d and emitted %d, want 1 and 3", format, m.Skipped, m.RecordsOut)
		}
	}
	if _, err := fieldTime(enc("ts", "yesterday"), "ts", "rfc3339"); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
		t.Errorf("a bad RFC 3339 text: %v", err)
	}
}

// Watermarks and checkpoint barriers share the queues: with exactly-once
// alignment at a two-channel gate, a checkpoint completes while
// watermarks flow, and the watermarks still rise, none late, to the end.
func TestWatermarksWithCheckpoints(t *testing.T) {
	src := `
version: 1
name: ck
` + etPlugins + `
operators:
  - id: src
    parallelism: 2
    source:
      type: generator
      preset: sequence
      watermarks: { strategy: bounded-out-of-orderness, max-out-of-orderness: 5ms, interval: 1ms }
  - id: w
    parallelism: 1
    process: spy
  - id: out
    sink: { type: discard }
`
	conn := &etConnectors{fakeConnectors: newFakeConnectors(), clock: newFakeClock(), step: time.Millisecond,
		times: func(_ string, sub int) []int64 { return []int64{int64(sub), int64(sub) + 10} },
		hold:  make(chan struct{}), holdOn: func(int) bool { return true }}
	log := newSpyLog()
	acks := NewAckRecorder()
	e, err := Start(context.Background(), planYAML(t, src, nil), conn.clock.deps(Deps{Plugins: &spyPlugins{newFakePlugins(), log}, Connectors: conn, Checkpoints: acks}))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.TriggerCheckpoint(1, checkpoint.KindCheckpoint, time.Now(), false); err != nil {
		t.Fatal(err)
	}
	acks.WaitAcked(t, e, 1)
	close(conn.hold)
	if _, err := e.Wait(); err != nil {
		t.Fatal(err)
	}
	wms := log.get("w/0")
	if !strictlyRising(wms) || len(wms) < 2 || wms[len(wms)-1] != MaxWatermark {
		t.Fatalf("w saw %v", wms)
	}
	if n := log.late["w/0"]; n != 0 {
		t.Errorf("%d records late", n)
	}
}

// A union and a two-input operator combine their inputs' watermarks
// through the valve: the minimum over both sources, which advance at
// different speeds, so no record is late, rising to the end of time.
func TestWatermarksUnionAndConnect(t *testing.T) {
	for _, shape := range []string{"input: [fast, slow]\n    process: spy", "connect: [fast, slow]\n    co-map: side"} {
		src := `
version: 1
name: two
parallelism: 2
` + etPlugins + `  side: { path: side.wasm }
operators:
  - id: fast
    source: { type: generator, preset: sequence, count: 1, watermarks: { strategy: monotonous, interval: 1ms } }
  - id: slow
    source: { type: generator, preset: sequence, count: 1, watermarks: { strategy: monotonous, interval: 1ms } }
  - id: both
    ` + shape + `
  - id: w
    process: spy
  - id: out
    sink: { type: discard }
`
		conn := &etConnectors{fakeConnectors: newFakeConnectors(), clock: newFakeClock(), step: time.Millisecond,
			times: func(op string, sub int) []int64 {
				var ts []int64
				speed := int64(1)
				if op == "fast" {
					speed = 7
				}
				for i := int64(0); i < 100; i++ {
					ts = append(ts, i*speed+int64(sub))
				}
				return ts
			},
			value: func(t int64) []byte { return enc("n", t) }}
		log, _ := runET(t, src, conn, func(p *pipeline.Pipeline) { p.Chaining = false })
		for _, key := range []string{"w/0", "w/1"} {
			wms := log.get(key)
			if !strictlyRising(wms) || len(wms) == 0 || wms[len(wms)-1] != MaxWatermark {
				t.Fatalf("%q: %s saw %v", shape, key, wms)
			}
			if n := log.late[key]; n != 0 {
				t.Errorf("%q: %s: %d records late", shape, key, n)
			}
		}
		if both := log.get("both/0"); strings.HasPrefix(shape, "input") && (len(both) == 0 || both[len(both)-1] != MaxWatermark) {
			t.Errorf("the union spy saw %v", both)
		}
	}
}

// A stop-with-savepoint ends the job without the end of event time (no
// window fires before the job resumes), as Flink's stop without --drain.
func TestWatermarksStopWithSavepoint(t *testing.T) {
	src := `
version: 1
name: stop
` + etPlugins + `
operators:
  - id: src
    parallelism: 2
    source:
      type: generator
      preset: sequence
      watermarks: { strategy: monotonous, interval: 1ms }
  - id: w
    parallelism: 1
    process: spy
  - id: out
    sink: { type: discard }
`
	conn := &etConnectors{fakeConnectors: newFakeConnectors(), clock: newFakeClock(), step: time.Millisecond,
		times: func(_ string, sub int) []int64 { return []int64{int64(sub) + 1} },
		hold:  make(chan struct{}), holdOn: func(int) bool { return true }}
	defer close(conn.hold)
	log := newSpyLog()
	acks := NewAckRecorder()
	e, err := Start(context.Background(), planYAML(t, src, nil), conn.clock.deps(Deps{Plugins: &spyPlugins{newFakePlugins(), log}, Connectors: conn, Checkpoints: acks}))
	if err != nil {
		t.Fatal(err)
	}
	for wm := range log.seen { // let watermarks flow first
		if wm > 5 {
			break
		}
	}
	if err := e.TriggerCheckpoint(1, checkpoint.KindSavepoint, time.Now(), true); err != nil {
		t.Fatal(err)
	}
	acks.WaitAcked(t, e, 1)
	e.NotifyCheckpointComplete(1)
	if _, err := e.Wait(); err != nil {
		t.Fatal(err)
	}
	wms := log.get("w/0")
	if len(wms) == 0 || !strictlyRising(wms) || slices.Contains(wms, MaxWatermark) {
		t.Fatalf("w saw %v: rising, and no end of event time after a stop-with-savepoint", wms)
	}
}

// Windows fire on the engine's watermarks while the source still runs: a
// tumbling count over a monotonous source emits each window once the
// watermark passed its end, long before the input ends.
func TestWatermarksFireWindowsMidStream(t *testing.T) {
	src := `
version: 1
name: win
operators:
  - id: src
    source:
      type: generator
      preset: sequence
      watermarks: { strategy: monotonous, interval: 1ms }
  - id: win
    key-by: sub
    window: { type: tumbling, size: 10ms }
    count: true
  - id: out
    sink: { type: discard }
`
	conn := &etConnectors{fakeConnectors: newFakeConnectors(), clock: newFakeClock(), step: time.Millisecond,
		times: func(string, int) []int64 {
			ts := make([]int64, 100)
			for i := range ts {
				ts[i] = int64(i)
			}
			return ts
		},
		hold: make(chan struct{}), holdOn: func(int) bool { return true }}
	e, err := Start(context.Background(), planYAML(t, src, nil), conn.clock.deps(Deps{Plugins: newFakePlugins(), Connectors: conn}))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second) // a failure guard, not a measurement
	for len(conn.records("out")) < 5 {
		select {
		case <-deadline:
			close(conn.hold)
			e.Wait()
			t.Fatalf("no windows fired while the source ran: %v", conn.jsons("out"))
		case <-time.After(time.Millisecond):
		}
	}
	close(conn.hold)
	if _, err := e.Wait(); err != nil {
		t.Fatal(err)
	}
	first := conn.records("out")[0].JSON
	if !strings.Contains(first, `"count":10`) || !strings.Contains(first, `"window_start":0`) || !strings.Contains(first, `"window_end":10`) {
		t.Errorf("the first window: %s", first)
	}
}
