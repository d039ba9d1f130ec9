package sched

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestGiveWay: a call gives way only while the CPU is contended, for a
// multiple of its last slice that grows with its age, bounded.
func TestGiveWay(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		wall      time.Duration
		contended bool
		slices    int64
		want      time.Duration
	}{
		{ms, false, 1000, 0},                   // cores to spare
		{2 * ms, true, 2, 2 * ms},              // a young call
		{2 * ms, true, 3 * GiveWayAge, 8 * ms}, // older
		{ms, true, 1000, 32 * ms},              // a runaway
		{time.Second, true, 2, MaxGiveWay},     // bounded
	} {
		if got := GiveWay(c.wall, c.contended, c.slices); got != c.want {
			t.Errorf("GiveWay(%s, %v, %d) = %s, want %s", c.wall, c.contended, c.slices, got, c.want)
		}
	}
}

// TestReadPressure parses /proc/pressure/cpu's format and refuses others.
func TestReadPressure(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("cpu", "some avg10=37.63 avg60=52.89 avg300=58.89 total=1356064201\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
	if avg, total, ok := ReadPressure(good); !ok || avg != 37.63 || total != 1356064201 {
		t.Errorf("ReadPressure = %v, %d, %v", avg, total, ok)
	}
	for _, bad := range []string{"", "full avg10=1 avg60=1 avg300=1 total=1\n", "some avg10=x avg60=1 avg300=1 total=1\n", "some total=1\n"} {
		if _, _, ok := ReadPressure(write("bad", bad)); ok {
			t.Errorf("ReadPressure accepted %q", bad)
		}
	}
	if _, _, ok := ReadPressure(filepath.Join(dir, "missing")); ok {
		t.Error("ReadPressure accepted a missing file")
	}
}

// TestPressureContended: the first sample goes by the kernel's 10 s
// average, later ones by the stall the total grew by since the last (10 %
// of the time or more is contended); samples closer than 10 ms apart reuse
// the last; a missing file is contention, for good.
func TestPressureContended(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu")
	set := func(avg10 float64, total int64) {
		text := fmt.Sprintf("some avg10=%.2f avg60=0.00 avg300=0.00 total=%d\n", avg10, total)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := NewPressure(path)
	t0 := time.Unix(1000, 0)
	for i, s := range []struct {
		at    time.Duration
		avg10 float64
		total int64
		want  bool
	}{
		{0, 5, 1_000_000, false},                         // first: avg10 5 % < 10 %
		{time.Second, 50, 1_050_000, false},              // 50 ms of stall in 1 s: 5 %
		{2 * time.Second, 0, 1_250_000, true},            // 200 ms in 1 s: 20 %, whatever avg10 says
		{2*time.Second + 5*time.Millisecond, 0, 0, true}, // within 10 ms: the last sample
		{3 * time.Second, 0, 1_250_000, false},           // no stall
		{20 * time.Second, 30, 1_250_000, true},          // no recent sample: avg10 30 %
	} {
		set(s.avg10, s.total)
		if got := p.Contended(t0.Add(s.at)); got != s.want {
			t.Errorf("sample %d at %s: contended %v, want %v", i, s.at, got, s.want)
		}
	}
	os.Remove(path)
	if !p.Contended(t0.Add(time.Minute)) || !p.Contended(t0.Add(2*time.Minute)) {
		t.Error("a missing pressure file must read as contended")
	}
}

// TestPacerWaitsPastTheBurst: at 1000 units a second, takers run up to
// the burst ahead of the clock, then wait what they are ahead past it;
// an idle spell saves up no more than the burst.
func TestPacerWaitsPastTheBurst(t *testing.T) {
	p := NewPacer(1000)
	now := time.Unix(1000, 0)
	var slept time.Duration
	p.SetClock(func() time.Time { return now }, func(_ context.Context, d time.Duration) { slept += d; now = now.Add(d) })
	p.Take(context.Background(), 100) // 100 ms worth: within the burst
	if slept != 0 {
		t.Errorf("100 units waited %s, want none (the burst is %s)", slept, p.Burst())
	}
	p.Take(context.Background(), 1000) // 1.1 s paid ahead: 1 s past the burst
	if slept != time.Second {
		t.Errorf("1100 units at once waited %s, want 1s", slept)
	}
	now = now.Add(time.Hour) // idle
	slept = 0
	p.Take(context.Background(), 300) // 300 ms worth: only the burst was saved
	if slept != 200*time.Millisecond {
		t.Errorf("300 units after an idle hour waited %s, want 200ms", slept)
	}
}
