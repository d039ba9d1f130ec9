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
