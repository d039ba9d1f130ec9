package partition

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func channels(t *testing.T, name string, cfg Config, records int) []int {
	t.Helper()
	p, err := New(name, cfg)
	if err != nil {
		t.Fatalf("New(%s, %+v): %v", name, cfg, err)
	}
	out := make([]int, records)
	for k := range out {
		out[k] = p.Channel(int32(k))
	}
	return out
}

func TestNames(t *testing.T) {
	for _, name := range Names() {
		if name == NameCustom {
			continue
		}
		cfg := Config{UpstreamParallelism: 2, DownstreamParallelism: 2}
		for _, spelled := range []string{name, strings.ToLower(name)} {
			p, err := New(spelled, cfg)
			if err != nil || p.Name() != name {
				t.Errorf("New(%q): %v, %v; want Name %s", spelled, p, err, name)
			}
		}
	}
}

func TestForward(t *testing.T) {
	for i := 0; i < 4; i++ {
		got := channels(t, "FORWARD", Config{Upstream: i, UpstreamParallelism: 4, DownstreamParallelism: 4}, 5)
		if want := []int{i, i, i, i, i}; !slices.Equal(got, want) {
			t.Errorf("upstream %d: %v, want %v", i, got, want)
		}
	}
}

func TestForwardUnequalParallelism(t *testing.T) {
	_, err := New("FORWARD", Config{UpstreamParallelism: 2, DownstreamParallelism: 3})
	if !errors.Is(err, ErrForwardParallelism) || !strings.Contains(err.Error(), "upstream parallelism 2, downstream parallelism 3") {
		t.Errorf("New(FORWARD, 2 -> 3) = %v", err)
	}
}

// flink-semantics.md §2, Flink StreamGraph.addEdgeInternal's exact text.
func TestForwardParallelismErrorText(t *testing.T) {
	err := ForwardParallelismError("map-a", 2, "map-b", 1)
	want := "Forward partitioning does not allow change of parallelism. Upstream operation: map-a parallelism: 2, " +
		"downstream operation: map-b parallelism: 1 You must use another partitioning strategy, such as broadcast, rebalance, shuffle or global."
	if err.Error() != want {
		t.Errorf("got  %q\nwant %q", err.Error(), want)
	}
	if !errors.Is(err, ErrForwardParallelism) {
		t.Error("does not wrap ErrForwardParallelism")
	}
}

func TestHash(t *testing.T) {
	// Vectors from keygroup_test.go: "hello" (99162322) goes to subtask 0
	// of 3 at maxP 128 and 2 of 4 at maxP 256; Boolean false (1237) to 0.
	tests := []struct {
		keyHash  int32
		n, maxP  int
		wantChan int
	}{
		{99162322, 3, 128, 0}, {99162322, 3, 0, 0}, {99162322, 4, 256, 2}, {99162322, 7, 32768, 6},
		{1231, 3, 128, 1}, {1237, 4, 256, 0}, {-2089875627, 5, 128, 0}, {42, 1, 128, 0},
	}
	for _, tt := range tests {
		for up := 0; up < 3; up++ { // the same for every upstream subtask
			p, err := New("HASH", Config{Upstream: up, UpstreamParallelism: 3, DownstreamParallelism: tt.n, MaxParallelism: tt.maxP})
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Channel(tt.keyHash); got != tt.wantChan {
				t.Errorf("HASH n=%d maxP=%d: Channel(%d) = %d, want %d", tt.n, tt.maxP, tt.keyHash, got, tt.wantChan)
			}
		}
	}
}

// TestHashMatchesKeyGroupRule checks HASH (a mask and a shift when the max
// parallelism is a power of two) against the key-group rule itself.
func TestHashMatchesKeyGroupRule(t *testing.T) {
	hashes := []int32{0, 1, -1, 99162322, -2089875627, 1 << 30, -1 << 31, 1<<31 - 1}
	for i := int32(0); i < 2000; i++ {
		hashes = append(hashes, i*0x3b9aca07)
	}
	for _, maxP := range []int{1, 2, 7, 100, 128, 129, 1000, 4096, 32768} {
		for _, n := range []int{1, 2, 3, 4, 7, 100} {
			if n > maxP {
				continue
			}
			p, err := New(NameHash, Config{UpstreamParallelism: 1, DownstreamParallelism: n, MaxParallelism: maxP})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hashes {
				if got, want := p.Channel(h), OperatorIndexForKeyGroup(maxP, n, KeyGroup(h, maxP)); got != want {
					t.Fatalf("maxP %d n %d: Channel(%d) = %d, want %d", maxP, n, h, got, want)
				}
			}
		}
	}
}

func TestRebalance(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		for up := 0; up < 3; up++ {
			cfg := Config{Upstream: up, UpstreamParallelism: 3, DownstreamParallelism: n, Seed: 7}
			got := channels(t, "REBALANCE", cfg, 2*n+1)
			// Flink: next starts at random.nextInt(n); each record next = (next+1) % n.
			src := newSource(7, up)
			start := src.intN(n)
			for k, c := range got {
				if want := (start + 1 + k) % n; c != want {
					t.Fatalf("n=%d upstream %d: record %d to %d, want %d (start %d): %v", n, up, k, c, want, start, got)
				}
			}
			if again := channels(t, "REBALANCE", cfg, 2*n+1); !slices.Equal(got, again) {
				t.Errorf("same seed, different channels: %v, %v", got, again)
			}
		}
	}
	// The start is random: over seeds, every channel is a first channel.
	seen := map[int]bool{}
	for seed := int64(0); seed < 200; seed++ {
		seen[channels(t, "REBALANCE", Config{UpstreamParallelism: 1, DownstreamParallelism: 5, Seed: seed}, 1)[0]] = true
	}
	if len(seen) != 5 {
		t.Errorf("first channels over 200 seeds: %v, want all of 0..4", seen)
	}
}

func TestRescale(t *testing.T) {
	tests := []struct {
		s, t int
		want [][]int // per upstream subtask, its first records' channels
	}{
		{2, 4, [][]int{{0, 1, 0, 1, 0}, {2, 3, 2, 3, 2}}},
		{3, 2, [][]int{{0, 0, 0}, {1, 1, 1}, {1, 1, 1}}},
		{2, 3, [][]int{{0, 1, 0, 1}, {2, 2, 2, 2}}},
		{2, 5, [][]int{{0, 1, 2, 0}, {3, 4, 3, 4}}},
		{3, 3, [][]int{{0, 0}, {1, 1}, {2, 2}}},
		{1, 3, [][]int{{0, 1, 2, 0, 1, 2}}},
	}
	for _, tt := range tests {
		for up, want := range tt.want {
			got := channels(t, "RESCALE", Config{Upstream: up, UpstreamParallelism: tt.s, DownstreamParallelism: tt.t}, len(want))
			if !slices.Equal(got, want) {
				t.Errorf("S=%d T=%d upstream %d: %v, want %v", tt.s, tt.t, up, got, want)
			}
		}
	}
}

func TestShuffle(t *testing.T) {
	cfg := Config{Upstream: 1, UpstreamParallelism: 2, DownstreamParallelism: 6, Seed: 42}
	a := channels(t, "SHUFFLE", cfg, 1000)
	if b := channels(t, "SHUFFLE", cfg, 1000); !slices.Equal(a, b) {
		t.Error("same seed, different channels")
	}
	cfg.Seed = 43
	if b := channels(t, "SHUFFLE", cfg, 1000); slices.Equal(a, b) {
		t.Error("seeds 42 and 43 give the same channels")
	}
	cfg.Seed, cfg.Upstream = 42, 0
	if b := channels(t, "SHUFFLE", cfg, 1000); slices.Equal(a, b) {
		t.Error("upstream subtasks 0 and 1 draw the same channels")
	}
	counts := make([]int, 6)
	for _, c := range a {
		counts[c]++
	}
	for c, k := range counts {
		if k < 100 || k > 240 { // mean 166.7, sd 11.8
			t.Errorf("channel %d got %d of 1000 records: %v", c, k, counts)
		}
	}
}

func TestGlobal(t *testing.T) {
	for up := 0; up < 3; up++ {
		got := channels(t, "GLOBAL", Config{Upstream: up, UpstreamParallelism: 3, DownstreamParallelism: 4}, 4)
		if !slices.Equal(got, []int{0, 0, 0, 0}) {
			t.Errorf("upstream %d: %v, want all 0", up, got)
		}
	}
}

func TestBroadcast(t *testing.T) {
	p, err := New("BROADCAST", Config{UpstreamParallelism: 2, DownstreamParallelism: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !IsBroadcast(p) || p.(*Broadcast).N() != 5 {
		t.Errorf("IsBroadcast = %v, N = %d; want true, 5", IsBroadcast(p), p.(*Broadcast).N())
	}
	for _, name := range []string{"FORWARD", "HASH", "REBALANCE", "RESCALE", "SHUFFLE", "GLOBAL"} {
		q, _ := New(name, Config{UpstreamParallelism: 2, DownstreamParallelism: 2})
		if IsBroadcast(q) {
			t.Errorf("IsBroadcast(%s) = true", name)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Broadcast.Channel did not panic")
		}
	}()
	p.Channel(0)
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"ROUND_ROBIN", Config{UpstreamParallelism: 1, DownstreamParallelism: 1}, `unknown strategy "ROUND_ROBIN", want one of FORWARD, HASH`},
		{"CUSTOM", Config{UpstreamParallelism: 1, DownstreamParallelism: 1}, "use NewCustom"},
		{"REBALANCE", Config{UpstreamParallelism: 0, DownstreamParallelism: 1}, "REBALANCE: upstream parallelism 0 not within bounds [1, 32768]"},
		{"HASH", Config{UpstreamParallelism: 1, DownstreamParallelism: 40000}, "HASH: downstream parallelism 40000 not within bounds"},
		{"GLOBAL", Config{Upstream: 2, UpstreamParallelism: 2, DownstreamParallelism: 1}, "GLOBAL: upstream subtask 2 not in [0, 2)"},
		{"GLOBAL", Config{Upstream: -1, UpstreamParallelism: 2, DownstreamParallelism: 1}, "upstream subtask -1 not in [0, 2)"},
		{"FORWARD", Config{UpstreamParallelism: 4, DownstreamParallelism: 2}, "forward partitioning does not allow change of parallelism"},
		{"HASH", Config{UpstreamParallelism: 1, DownstreamParallelism: 200, MaxParallelism: 128}, "partition: HASH: downstream parallelism 200 is larger than max parallelism 128"},
		{"HASH", Config{UpstreamParallelism: 1, DownstreamParallelism: 2, MaxParallelism: 65536}, "partition: HASH: downstream max parallelism 65536 not within bounds"},
	}
	for _, tt := range tests {
		p, err := New(tt.name, tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%s, %+v) = %v, %v; want error containing %q", tt.name, tt.cfg, p, err, tt.want)
		}
	}
}

func TestDefaultNameAndPointwise(t *testing.T) {
	if DefaultName(3, 3) != NameForward || DefaultName(3, 4) != NameRebalance {
		t.Errorf("DefaultName(3,3) = %s, DefaultName(3,4) = %s", DefaultName(3, 3), DefaultName(3, 4))
	}
	for _, name := range Names() {
		want := name == NameForward || name == NameRescale
		if IsPointwise(name) != want || IsPointwise(strings.ToLower(name)) != want {
			t.Errorf("IsPointwise(%s) = %v, want %v", name, IsPointwise(name), want)
		}
	}
}

func TestChannelDoesNotAllocate(t *testing.T) {
	for _, name := range []string{"FORWARD", "HASH", "REBALANCE", "RESCALE", "SHUFFLE", "GLOBAL"} {
		p, err := New(name, Config{Upstream: 1, UpstreamParallelism: 3, DownstreamParallelism: 3, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		h := int32(0)
		if a := testing.AllocsPerRun(1000, func() { h += int32(p.Channel(h)) + 99162322 }); a != 0 {
			t.Errorf("%s: %v allocations per Channel", name, a)
		}
	}
}

func BenchmarkHashChannel(b *testing.B) {
	p, err := New("HASH", Config{UpstreamParallelism: 4, DownstreamParallelism: 7, MaxParallelism: 128})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	sum := 0
	h := int32(99162322)
	for b.Loop() {
		sum += p.Channel(h)
		h++
	}
	if sum < 0 {
		b.Fatal(sum)
	}
}
