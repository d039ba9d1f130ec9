package partition

import (
	"math"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
)

// The vectors below were NOT computed with this package. They come from an
// independent transcription of Flink's MathUtils.murmurHash / bitMix in
// Java, run on a JVM (Java int arithmetic and Integer.rotateLeft), with
// the key hashes from Java's own String/Integer/Long/Boolean/Double
// hashCode. keyHash -2089875627 is the one 32-bit input whose mix is
// Integer.MIN_VALUE (murmur 0), found by an exhaustive JVM search over all
// 2^32 ints. Hand check for "hello": 1715862179 = 128*13405173 + 35, so its
// key group for maxParallelism 128 is 35, and 35*3/128 = 0.
var murmurVectors = []struct {
	key     string // the Java key the hash came from
	keyHash int32
	murmur  int32 // Flink MathUtils.murmurHash
	raw     int32 // the mix before it is made non-negative
	kg128   int   // key group, maxParallelism 128
	op128p3 int   // subtask, maxParallelism 128, parallelism 3
	kg256   int
	op256p4 int
	kg32768 int
	op32kp7 int // maxParallelism 32768, parallelism 7
}{
	{`String "hello"`, 99162322, 1715862179, 1715862179, 35, 0, 163, 2, 31395, 6},
	{`String "" / Integer 0`, 0, 593689054, 593689054, 94, 2, 222, 3, 31198, 6},
	{`String "flink"`, 97520992, 1330823394, -1330823394, 98, 2, 226, 3, 16610, 3},
	{`String "a"`, 97, 1455541201, 1455541201, 81, 1, 209, 3, 19409, 4},
	{`Integer 1`, 1, 68075478, -68075478, 86, 2, 214, 3, 16342, 3},
	{`Integer -1`, -1, 1982413648, 1982413648, 80, 1, 80, 1, 15184, 3},
	{`Integer 42`, 42, 1134849565, -1134849565, 29, 0, 29, 0, 28189, 6},
	{`Integer MIN_VALUE`, math.MinInt32, 1718298732, -1718298732, 108, 2, 108, 1, 10348, 2},
	{`Integer MAX_VALUE`, math.MaxInt32, 1653689534, -1653689534, 62, 1, 190, 2, 19646, 4},
	{`Long 123456789000`, -1097262572, 1488567369, -1488567369, 73, 1, 73, 1, 15433, 3},
	{`Boolean true`, 1231, 1090530765, -1090530765, 77, 1, 205, 3, 11725, 2},
	{`Boolean false`, 1237, 1530821891, 1530821891, 3, 0, 3, 0, 32003, 6},
	{`Double 3.5`, 1074528256, 1385515823, -1385515823, 47, 1, 47, 0, 19247, 4},
	{`mix is MIN_VALUE`, -2089875627, 0, math.MinInt32, 0, 0, 0, 0, 0, 0},
}

func TestMurmurAndKeyGroupVectors(t *testing.T) {
	for _, v := range murmurVectors {
		t.Run(v.key, func(t *testing.T) {
			if got := Murmur(v.keyHash); got != v.murmur {
				t.Errorf("Murmur(%d) = %d, want %d", v.keyHash, got, v.murmur)
			}
			for _, c := range []struct{ maxP, p, kg, op int }{
				{128, 3, v.kg128, v.op128p3}, {256, 4, v.kg256, v.op256p4}, {32768, 7, v.kg32768, v.op32kp7},
			} {
				kg := KeyGroup(v.keyHash, c.maxP)
				if kg != c.kg {
					t.Errorf("KeyGroup(%d, %d) = %d, want %d", v.keyHash, c.maxP, kg, c.kg)
				}
				if op := OperatorIndexForKeyGroup(c.maxP, c.p, kg); op != c.op {
					t.Errorf("OperatorIndexForKeyGroup(%d, %d, %d) = %d, want %d", c.maxP, c.p, kg, op, c.op)
				}
			}
		})
	}
}

// TestHelloKeyGroup follows a key from its msgpack bytes to its subtask
// (flink-semantics.md §1: "hello" hashes to 99162322).
func TestHelloKeyGroup(t *testing.T) {
	h, err := abi.KeyHash(abi.AppendStr(nil, "hello"))
	if err != nil || h != 99162322 {
		t.Fatalf("abi.KeyHash(\"hello\") = %d, %v; want 99162322", h, err)
	}
	if kg := KeyGroup(h, 128); kg != 35 {
		t.Errorf("key group of \"hello\" at maxParallelism 128 = %d, want 35", kg)
	}
	if op := OperatorIndexForKeyGroup(128, 3, 35); op != 0 {
		t.Errorf("subtask of key group 35 (maxP 128, p 3) = %d, want 0", op)
	}
}

func TestMurmurNeverNegative(t *testing.T) {
	for h := int64(math.MinInt32); h <= math.MaxInt32; h += 65537 {
		if m := Murmur(int32(h)); m < 0 {
			t.Fatalf("Murmur(%d) = %d < 0", h, m)
		}
	}
}

func TestKeyGroupRange(t *testing.T) {
	tests := []struct {
		maxP, p, subtask, start, end int
	}{
		{128, 3, 0, 0, 42},
		{128, 3, 1, 43, 85},
		{128, 3, 2, 86, 127},
		{128, 5, 0, 0, 25},
		{128, 5, 1, 26, 51},
		{128, 5, 2, 52, 76},
		{128, 5, 3, 77, 102},
		{128, 5, 4, 103, 127},
		{256, 4, 1, 64, 127},
		{128, 1, 0, 0, 127},
		{128, 128, 77, 77, 77},
		{32768, 7, 0, 0, 4681},
		{32768, 7, 6, 28087, 32767},
		{32768, 32768, 32767, 32767, 32767},
	}
	for _, tt := range tests {
		start, end := KeyGroupRange(tt.maxP, tt.p, tt.subtask)
		if start != tt.start || end != tt.end {
			t.Errorf("KeyGroupRange(%d, %d, %d) = [%d, %d], want [%d, %d]", tt.maxP, tt.p, tt.subtask, start, end, tt.start, tt.end)
		}
	}
}

func TestOperatorIndexForKeyGroup(t *testing.T) {
	tests := []struct{ maxP, p, kg, want int }{
		{128, 3, 0, 0}, {128, 3, 42, 0}, {128, 3, 43, 1}, {128, 3, 85, 1}, {128, 3, 86, 2}, {128, 3, 127, 2},
		{128, 1, 127, 0}, {128, 128, 5, 5}, {32768, 32768, 32767, 32767}, {32768, 7, 28086, 5}, {32768, 7, 28087, 6},
	}
	for _, tt := range tests {
		if got := OperatorIndexForKeyGroup(tt.maxP, tt.p, tt.kg); got != tt.want {
			t.Errorf("OperatorIndexForKeyGroup(%d, %d, %d) = %d, want %d", tt.maxP, tt.p, tt.kg, got, tt.want)
		}
	}
}

// TestKeyGroupRangesPartition: for every 1 <= p <= maxP the ranges of
// subtasks 0..p-1 are contiguous and cover [0, maxP) exactly, each holds
// floor(maxP/p) or ceil(maxP/p) groups, and OperatorIndexForKeyGroup(kg)
// == i iff kg is in KeyGroupRange(i) (flink-semantics.md §1).
func TestKeyGroupRangesPartition(t *testing.T) {
	maxPs := []int{1, 2, 3, 7, 10, 127, 128, 129, 256, 1000, 4096, 32768}
	for _, maxP := range maxPs {
		for p := 1; p <= maxP; p = nextP(p, maxP) {
			next := 0
			for i := 0; i < p; i++ {
				start, end := KeyGroupRange(maxP, p, i)
				if start != next || end < start {
					t.Fatalf("maxP %d, p %d: subtask %d owns [%d, %d], want it to start at %d and be non-empty", maxP, p, i, start, end, next)
				}
				if size := end - start + 1; size != maxP/p && size != (maxP+p-1)/p {
					t.Fatalf("maxP %d, p %d: subtask %d owns %d groups", maxP, p, i, size)
				}
				for _, kg := range []int{start, end, (start + end) / 2} {
					if op := OperatorIndexForKeyGroup(maxP, p, kg); op != i {
						t.Fatalf("maxP %d, p %d: key group %d in range of %d but OperatorIndexForKeyGroup = %d", maxP, p, kg, i, op)
					}
				}
				next = end + 1
			}
			if next != maxP {
				t.Fatalf("maxP %d, p %d: ranges end at %d, want %d", maxP, p, next, maxP)
			}
			if maxP <= 1000 { // every key group, both directions
				for kg := 0; kg < maxP; kg++ {
					op := OperatorIndexForKeyGroup(maxP, p, kg)
					start, end := KeyGroupRange(maxP, p, op)
					if kg < start || kg > end {
						t.Fatalf("maxP %d, p %d: key group %d -> subtask %d owning [%d, %d]", maxP, p, kg, op, start, end)
					}
				}
			}
		}
	}
}

// nextP visits every p up to 130, then a spread of larger ones and maxP.
func nextP(p, maxP int) int {
	switch {
	case p < 130:
		return p + 1
	case p*2 < maxP:
		return p*2 - 1
	case p < maxP:
		return maxP
	}
	return maxP + 1
}

func TestDefaultMaxParallelism(t *testing.T) {
	tests := []struct{ p, want int }{
		{1, 128}, {2, 128}, {85, 128}, // 85+42 = 127 -> 128
		{86, 256},                      // 86+43 = 129 -> 256
		{100, 256},                     // 150 -> 256
		{171, 256},                     // 171+85 = 256
		{172, 512},                     // 258 -> 512
		{200, 512},                     // 300 -> 512
		{21845, 32768}, {21846, 32768}, // 32767 -> 32768; 32769 capped
		{30000, 32768}, {32768, 32768},
	}
	for _, tt := range tests {
		if got := DefaultMaxParallelism(tt.p); got != tt.want {
			t.Errorf("DefaultMaxParallelism(%d) = %d, want %d", tt.p, got, tt.want)
		}
	}
}

func TestValidateParallelism(t *testing.T) {
	tests := []struct {
		p, maxP int
		want    string // substring of the error; "" for nil
	}{
		{1, 1, ""}, {3, 128, ""}, {32768, 32768, ""}, {128, 128, ""},
		{0, 128, "parallelism 0 not within bounds [1, 32768]"},
		{-1, 128, "parallelism -1 not within bounds"},
		{32769, 32768, "parallelism 32769 not within bounds"},
		{1, 0, "max parallelism 0 not within bounds [1, 32768]"},
		{1, 32769, "max parallelism 32769 not within bounds"},
		{200, 128, "parallelism 200 is larger than max parallelism 128"},
	}
	for _, tt := range tests {
		err := ValidateParallelism(tt.p, tt.maxP)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("ValidateParallelism(%d, %d) = %v, want nil", tt.p, tt.maxP, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("ValidateParallelism(%d, %d) = %v, want %q", tt.p, tt.maxP, err, tt.want)
		}
	}
}
