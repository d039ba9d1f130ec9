package kafka

import (
	"bufio"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
)

// TestSplitOwnerFlink checks SplitOwner against getSplitOwner run by Java
// itself (testdata/SplitOwner.java wrote testdata/split-owner.txt), for
// ASCII and non-ASCII topics, one that overflows int arithmetic, and
// reader counts from 1 to 16.
func TestSplitOwnerFlink(t *testing.T) {
	f, err := os.Open("testdata/split-owner.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	lines := 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 4 {
			t.Fatalf("line %q: want 4 columns", sc.Text())
		}
		topic := cols[0]
		n, _ := strconv.Atoi(cols[1])
		hash, _ := strconv.ParseInt(cols[2], 10, 32)
		if got := abi.StringHash([]byte(topic)); got != int32(hash) {
			t.Errorf("%q.hashCode() = %d, Java says %d", topic, got, hash)
		}
		for p, want := range strings.Split(cols[3], ",") {
			w, _ := strconv.Atoi(want)
			if got := SplitOwner(topic, int32(p), n); got != w {
				t.Errorf("SplitOwner(%q, %d, %d) = %d, Flink says %d", topic, p, n, got, w)
			}
		}
		lines++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines < 100 {
		t.Fatalf("read %d vectors, want the 104 of testdata/split-owner.txt", lines)
	}
}

// TestSplitOwnerOrders is wave2.md's worked example: "orders".hashCode()
// is -1008770331, and partitions 0..5 at 4 readers go to 3,0,1,2,3,0.
func TestSplitOwnerOrders(t *testing.T) {
	want := []int{3, 0, 1, 2, 3, 0}
	for p, w := range want {
		if got := SplitOwner("orders", int32(p), 4); got != w {
			t.Errorf("partition %d: owner %d, want %d", p, got, w)
		}
	}
}

// TestAssignment: partitions grouped by SplitOwner; txns's start index is
// 1 of 2 and 2 of 3 (Java's "txns".hashCode() * 31, masked, mod n).
func TestAssignment(t *testing.T) {
	got := Assignment(map[string]int32{"txns": 4}, 3)
	want := []map[string][]int32{{"txns": {1}}, {"txns": {2}}, {"txns": {0, 3}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Assignment = %v, want %v", got, want)
	}
	got = Assignment(map[string]int32{"txns": 4}, 2)
	want = []map[string][]int32{{"txns": {1, 3}}, {"txns": {0, 2}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Assignment = %v, want %v", got, want)
	}
}
