package partition_test

import (
	"fmt"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/partition"
)

// The subtask of the key "hello" on a keyed edge into an operator of
// parallelism 3 with the default max parallelism (flink-semantics.md §1).
func ExampleKeyGroup() {
	h, _ := abi.KeyHash(abi.AppendStr(nil, "hello"))
	maxP := partition.DefaultMaxParallelism(3)
	kg := partition.KeyGroup(h, maxP)
	fmt.Println(h, maxP, kg, partition.OperatorIndexForKeyGroup(maxP, 3, kg))
	start, end := partition.KeyGroupRange(maxP, 3, 0)
	fmt.Printf("subtask 0 owns key groups [%d, %d]\n", start, end)
	// Output:
	// 99162322 128 35 0
	// subtask 0 owns key groups [0, 42]
}

func ExamplePointwiseTargets() {
	for i := 0; i < 2; i++ {
		first, end := partition.PointwiseTargets(i, 2, 3)
		fmt.Printf("upstream %d feeds [%d, %d)\n", i, first, end)
	}
	// Output:
	// upstream 0 feeds [0, 2)
	// upstream 1 feeds [2, 3)
}

func ExampleNew() {
	p, _ := partition.New("RESCALE", partition.Config{Upstream: 1, UpstreamParallelism: 2, DownstreamParallelism: 4})
	for range 3 {
		fmt.Print(p.Channel(0), " ")
	}
	fmt.Println(p.Name())
	// Output: 2 3 2 RESCALE
}

func ExampleCheckCustom() {
	byKey := partition.KeyFunc(func(key []byte, n int) int {
		h, _ := abi.KeyHash(key)
		return int(partition.Murmur(h)) % n
	})
	fmt.Print(partition.CheckCustom(byKey, nil, 4).OK())
	// Output: true
}
