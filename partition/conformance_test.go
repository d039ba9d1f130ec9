package partition

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
)

func TestCheckPartitionerBuiltins(t *testing.T) {
	shapes := [][2]int{{1, 1}, {3, 3}, {2, 4}, {4, 2}, {3, 7}, {7, 3}, {1, 32}}
	for _, name := range []string{"FORWARD", "HASH", "REBALANCE", "RESCALE", "SHUFFLE", "GLOBAL", "BROADCAST"} {
		for _, sh := range shapes {
			if name == "FORWARD" && sh[0] != sh[1] {
				continue
			}
			cfg := Config{UpstreamParallelism: sh[0], DownstreamParallelism: sh[1], Seed: 3}
			if r := CheckPartitioner(name, cfg, nil); !r.OK() {
				t.Errorf("%s %d->%d:\n%s", name, sh[0], sh[1], r)
			}
		}
	}
	r := CheckPartitioner("HASH", Config{UpstreamParallelism: 2, DownstreamParallelism: 5, MaxParallelism: 11}, nil)
	if !r.OK() {
		t.Errorf("HASH maxP 11:\n%s", r)
	}
}

func TestCheckPartitionerRefuses(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  Config
	}{
		{"FORWARD", Config{UpstreamParallelism: 2, DownstreamParallelism: 3}},
		{"CUSTOM", Config{UpstreamParallelism: 2, DownstreamParallelism: 3}},
		{"HASH", Config{UpstreamParallelism: 0, DownstreamParallelism: 3}},
	} {
		r := CheckPartitioner(tt.name, tt.cfg, nil)
		if r.OK() || r[0].Check != "new" {
			t.Errorf("%s %+v:\n%s", tt.name, tt.cfg, r)
		}
	}
}

// The rules catch what a broken strategy would do.
func TestConformanceRulesCatch(t *testing.T) {
	cfg := Config{Upstream: 1, UpstreamParallelism: 2, DownstreamParallelism: 4, MaxParallelism: 128}
	tests := []struct {
		name string
		hs   []int32
		ch   []int
		pass bool
	}{
		{NameForward, nil, []int{1, 1}, true},
		{NameForward, nil, []int{1, 0}, false},
		{NameHash, []int32{99162322}, []int{1}, true}, // key group 35: 35*4/128 = 1
		{NameHash, []int32{99162322}, []int{2}, false},
		{NameRebalance, nil, []int{3, 0, 1, 2, 3, 0}, true},
		{NameRebalance, nil, []int{0, 2}, false},
		{NameRescale, nil, []int{2, 3, 2}, true}, // upstream 1 of 2 feeds [2, 4)
		{NameRescale, nil, []int{3, 2}, false},
		{NameGlobal, nil, []int{0, 0}, true},
		{NameGlobal, nil, []int{0, 1}, false},
		{NameShuffle, nil, make([]int, 40), false}, // all to channel 0
	}
	for _, tt := range tests {
		msg := rules[tt.name](cfg, tt.hs, tt.ch)
		if (msg == "") != tt.pass {
			t.Errorf("%s %v: rule says %q, want pass=%v", tt.name, tt.ch, msg, tt.pass)
		}
	}
	if msg := balanced([]int{0, 0, 0, 1}, 0, 2); msg == "" {
		t.Error("balanced accepted counts 3 and 1")
	}
}

func intKey(key []byte) int64 {
	if v, err := abi.ReadInt(key); err == nil {
		return v
	}
	h, _ := abi.KeyHash(key)
	return int64(h)
}

// flinkLike is a conforming user partitioner: non-negative key hash mod n.
var flinkLike = KeyFunc(func(key []byte, n int) int {
	h, _ := abi.KeyHash(key)
	return int(Murmur(h)) % n
})

func TestCheckCustomPasses(t *testing.T) {
	r := CheckCustom(flinkLike, nil, 5)
	if !r.OK() || len(r) < 9 {
		t.Errorf("report:\n%s", r)
	}
	keys := [][]byte{abi.AppendStr(nil, "a"), abi.AppendStr(nil, "a"), abi.AppendInt(nil, 1)}
	if r := CheckCustom(flinkLike, keys, 3); !r.OK() {
		t.Errorf("with duplicate keys:\n%s", r)
	}
}

func TestCheckCustomCatches(t *testing.T) {
	counter := 0
	tests := []struct {
		name  string
		p     BatchPartitioner
		check string // the row that must fail
		text  string
	}{
		{"out of range", KeyFunc(func(key []byte, n int) int { return n }), "range", "want [0, 5)"},
		{"negative", BatchPartitionerFunc(func(_ []byte, c, _ int, out []int32) error {
			for i := range out[:c] {
				out[i] = -1
			}
			return nil
		}), "range", "channel -1 for record 0"},
		{"panics", BatchPartitionerFunc(func([]byte, int, int, []int32) error { panic("oops") }), "range", "panicked: oops"},
		{"not deterministic", KeyFunc(func(_ []byte, n int) int { counter++; return counter % n }), "key order", ""},
		{"position, not key", BatchPartitionerFunc(func(_ []byte, c, n int, out []int32) error {
			for i := range out[:c] {
				out[i] = int32(i % n)
			}
			return nil
		}), "key order", ""},
		{"batch size", BatchPartitionerFunc(func(b []byte, c, n int, out []int32) error {
			return KeyFunc(func(k []byte, n int) int { return int((uint64(intKey(k)) + uint64(c)) % uint64(n)) }).Partition(b, c, n, out)
		}), "batching", ""},
		{"writes past count", BatchPartitionerFunc(func(_ []byte, c, _ int, out []int32) error {
			out = out[:cap(out)]
			for i := range out {
				out[i] = 0
			}
			return nil
		}), "no write past count", "past the"},
		{"empty batch fails", BatchPartitionerFunc(func(b []byte, c, n int, out []int32) error {
			if c == 0 {
				return errors.New("empty")
			}
			return flinkLike.Partition(b, c, n, out)
		}), "empty batch", "empty"},
		{"large batch fails", BatchPartitionerFunc(func(b []byte, c, n int, out []int32) error {
			if c > 5000 {
				return errors.New("too many")
			}
			return flinkLike.Partition(b, c, n, out)
		}), "large batch", "too many"},
		{"strings only", BatchPartitionerFunc(func(b []byte, c, n int, out []int32) error {
			rd := abi.NewReader(b, c)
			for rd.Next() {
				if abi.TypeOf(rd.Record().Key) != abi.TypeStr {
					return errors.New("key neither int nor string")
				}
			}
			return flinkLike.Partition(b, c, n, out)
		}), "range", `(the first key it refuses alone: key 1, -100000, a number; the kit's keys are ints, strings, floats, booleans and arrays`},
		{"refuses everything", BatchPartitionerFunc(func([]byte, int, int, []int32) error { return errors.New("not configured") }),
			"range", "partition: CUSTOM partitioner: not configured"},
		{"ignores n", KeyFunc(func(k []byte, _ int) int { return int(uint64(intKey(k)) % 2) }), "single channel", "want [0, 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := CheckCustom(tt.p, nil, 5)
			var row *Result
			for i := range r {
				if r[i].Check == tt.check {
					row = &r[i]
				}
			}
			if row == nil || row.OK || !strings.Contains(row.Detail, tt.text) {
				t.Errorf("want %q to fail with %q; report:\n%s", tt.check, tt.text, r)
			}
		})
	}
	if r := CheckCustom(flinkLike, nil, 0); r.OK() {
		t.Error("n = 0 accepted")
	}
	// one that refuses every key is not told a key is the problem
	refuser := BatchPartitionerFunc(func([]byte, int, int, []int32) error { return errors.New("not configured") })
	if r := CheckCustom(refuser, nil, 5).String(); strings.Contains(r, "first key it refuses") {
		t.Errorf("a partitioner refusing everything was told of a key:\n%s", r)
	}
}

// TestCheckCustomSkipsWhatDependsOnRange: the checks a failed range
// leaves unrun show as SKIP rows, neither passed nor failed (they
// vanished from the table and the total), and CustomChecks names the
// rows of a full run in order.
func TestCheckCustomSkipsWhatDependsOnRange(t *testing.T) {
	var names []string
	for _, x := range CheckCustom(flinkLike, nil, 5) {
		names = append(names, x.Check)
	}
	if !slices.Equal(names, CustomChecks) {
		t.Fatalf("rows %v, CustomChecks %v", names, CustomChecks)
	}
	r := CheckCustom(KeyFunc(func(key []byte, n int) int { return n }), nil, 5)
	if len(r) != len(CustomChecks) || len(r.Failures()) != 1 || len(r.Skipped()) != len(CustomChecks)-2 {
		t.Fatalf("report:\n%s", r)
	}
	for _, x := range r.Skipped() {
		if x.OK || x.Detail != "not run: range failed" {
			t.Errorf("skipped row %+v", x)
		}
	}
	if !strings.Contains(r.String(), "SKIP  single channel         not run: range failed\n") {
		t.Errorf("table:\n%s", r)
	}
}

func TestReportString(t *testing.T) {
	r := Report{{Check: "range", OK: true, Detail: "fine"}, {Check: "batching", Detail: "bad"}}
	want := "PASS  range                  fine\nFAIL  batching               bad\n"
	if r.String() != want || r.OK() || len(r.Failures()) != 1 {
		t.Errorf("String() = %q", r.String())
	}
}

func TestSampleKeys(t *testing.T) {
	keys := SampleKeys(500)
	seen := map[string]bool{}
	for i, k := range keys {
		if _, err := abi.KeyHash(k); err != nil {
			t.Fatalf("key %d %x: %v", i, k, err)
		}
		if seen[string(k)] {
			t.Fatalf("key %d %x repeated", i, k)
		}
		seen[string(k)] = true
	}
	if len(keys) != 500 || len(SampleKeyHashes(10)) != 10 || len(SampleKeyHashes(3)) != 3 {
		t.Error("wrong lengths")
	}
}

func TestCheckCustomDuplicateKeys(t *testing.T) {
	counter := 0
	p := KeyFunc(func(_ []byte, n int) int { counter++; return counter % n })
	a := abi.AppendStr(nil, "a")
	r := CheckCustom(p, [][]byte{a, abi.AppendInt(nil, 1), a}, 4)
	for _, row := range r {
		if row.Check == "same key, same batch" && !row.OK && strings.Contains(row.Detail, "record 2") {
			return
		}
	}
	t.Errorf("duplicate key on two channels not caught:\n%s", r)
}

// TestKeyText: the kit's messages write a key in JSON's notation, and
// refuse what a key field cannot hold (shown as hex instead).
func TestKeyText(t *testing.T) {
	arr := abi.AppendArrayHeader(nil, 3)
	arr = abi.AppendInt(arr, 1)
	arr = abi.AppendStr(arr, "x")
	arr = abi.AppendBool(abi.AppendArrayHeader(arr, 1), true)
	for _, c := range []struct {
		key  []byte
		want string
	}{
		{abi.AppendNil(nil), "null"},
		{abi.AppendBool(nil, false), "false"},
		{abi.AppendInt(nil, -100000), "-100000"},
		{abi.AppendInt(nil, 1<<40), "1099511627776"},
		{abi.AppendFloat(nil, 1.5), "1.5"},
		{abi.AppendStr(nil, `id "7"`), `"id \"7\""`},
		{arr, `[1,"x",[true]]`},
		{abi.AppendArrayHeader(nil, 0), "[]"},
	} {
		if got, ok := appendKeyText(nil, c.key, 0); !ok || string(got) != c.want {
			t.Errorf("% x: %q %v, want %q", c.key, got, ok, c.want)
		}
	}
	for _, bad := range [][]byte{
		abi.AppendMapHeader(nil, 0),
		abi.AppendBin(nil, []byte{1}),
		abi.AppendFloat(nil, math.NaN()),
		abi.AppendArrayHeader(nil, 2),                          // its elements are missing
		{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, // uint64 above MaxInt64
	} {
		if got, ok := appendKeyText(nil, bad, 0); ok {
			t.Errorf("% x: %q, want refused", bad, got)
		}
	}
	deep := []byte{}
	for range abi.MaxDepth + 2 {
		deep = abi.AppendArrayHeader(deep, 1)
	}
	if _, ok := appendKeyText(nil, abi.AppendInt(deep, 1), 0); ok {
		t.Error("a key nested past abi.MaxDepth was written")
	}
}
