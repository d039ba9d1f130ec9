package kafka

import "github.com/sluicehq/sluice/abi"

// SplitOwner is the source subtask, of numReaders, that reads partition
// of topic: Flink's KafkaSourceEnumerator.getSplitOwner. The topic's Java
// String.hashCode picks the subtask of partition 0, and the partitions
// follow round robin from there:
//
//	startIndex = ((topic.hashCode() * 31) & 0x7FFFFFFF) % numReaders
//	owner      = (startIndex + partition) % numReaders
//
// in Java's int arithmetic (the product wraps at 32 bits).
func SplitOwner(topic string, partition int32, numReaders int) int {
	h := abi.StringHash([]byte(topic)) * 31 // int32: wraps as Java's int does
	start := int(h&0x7FFFFFFF) % numReaders
	return (start + int(partition)) % numReaders
}

// Assignment is which partitions each of numReaders source subtasks
// reads, by SplitOwner: [subtask][topic] → partitions in order.
func Assignment(counts map[string]int32, numReaders int) []map[string][]int32 {
	out := make([]map[string][]int32, numReaders)
	for i := range out {
		out[i] = map[string][]int32{}
	}
	for topic, n := range counts {
		for p := int32(0); p < n; p++ {
			o := SplitOwner(topic, p, numReaders)
			out[o][topic] = append(out[o][topic], p)
		}
	}
	return out
}
