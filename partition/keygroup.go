package partition

import (
	"fmt"
	"math"
	"math/bits"
)

// Bounds of max parallelism, as Flink's KeyGroupRangeAssignment
// (UPPER_BOUND_MAX_PARALLELISM, DEFAULT_LOWER_BOUND_MAX_PARALLELISM);
// flink-semantics.md §1.
const (
	// MaxParallelismUpperBound is the largest parallelism and max
	// parallelism (1 << 15).
	MaxParallelismUpperBound = 32768
	// DefaultLowerBound is the smallest default max parallelism (1 << 7).
	DefaultLowerBound = 128
)

// Murmur is Flink's MathUtils.murmurHash: one round of the Murmur3 32-bit
// mix of keyHash, made non-negative (a negative result is negated;
// math.MinInt32 becomes 0). flink-semantics.md §1.
func Murmur(keyHash int32) int32 {
	c := uint32(keyHash)
	c *= 0xcc9e2d51
	c = bits.RotateLeft32(c, 15)
	c *= 0x1b873593
	c = bits.RotateLeft32(c, 13)
	c = c*5 + 0xe6546b64
	c ^= 4
	// MathUtils.bitMix (Murmur3 fmix32)
	c ^= c >> 16
	c *= 0x85ebca6b
	c ^= c >> 13
	c *= 0xc2b2ae35
	c ^= c >> 16
	h := int32(c)
	switch {
	case h >= 0:
		return h
	case h != math.MinInt32:
		return -h
	default:
		return 0
	}
}

// KeyGroup is the key group of a key whose abi.KeyHash is keyHash:
// Murmur(keyHash) % maxParallelism (Flink
// KeyGroupRangeAssignment.computeKeyGroupForKeyHash; flink-semantics.md
// §1). maxParallelism must be positive.
func KeyGroup(keyHash int32, maxParallelism int) int {
	return int(Murmur(keyHash)) % maxParallelism
}

// OperatorIndexForKeyGroup is the subtask that owns keyGroup:
// keyGroup * parallelism / maxParallelism (Flink
// KeyGroupRangeAssignment.computeOperatorIndexForKeyGroup;
// flink-semantics.md §1). It is exact for all valid arguments since
// 32768 * 32768 fits an int.
func OperatorIndexForKeyGroup(maxParallelism, parallelism, keyGroup int) int {
	return keyGroup * parallelism / maxParallelism
}

// KeyGroupRange is the inclusive range [start, end] of key groups owned by
// subtask (Flink
// KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex;
// flink-semantics.md §1): start = (subtask*maxP + p - 1) / p,
// end = ((subtask+1)*maxP - 1) / p. The ranges of subtasks 0..p-1 are
// contiguous and cover [0, maxP) exactly when 1 <= p <= maxP (see
// ValidateParallelism); when p > maxP some ranges are empty (start > end).
func KeyGroupRange(maxParallelism, parallelism, subtask int) (start, end int) {
	start = (subtask*maxParallelism + parallelism - 1) / parallelism
	end = ((subtask+1)*maxParallelism - 1) / parallelism
	return start, end
}

// DefaultMaxParallelism is the max parallelism Flink picks for an
// operator of the given parallelism when none is set:
// min(max(roundUpToPowerOfTwo(p + p/2), 128), 32768) (Flink
// KeyGroupRangeAssignment.computeDefaultMaxParallelism;
// flink-semantics.md §1). Flink refuses p outside 1..32768; here p < 1
// gives DefaultLowerBound and a larger p MaxParallelismUpperBound, so
// validate p first with ValidateParallelism.
func DefaultMaxParallelism(parallelism int) int {
	x := parallelism + parallelism/2
	switch {
	case x <= DefaultLowerBound:
		return DefaultLowerBound
	case x >= MaxParallelismUpperBound:
		return MaxParallelismUpperBound
	}
	return 1 << bits.Len(uint(x-1)) // MathUtils.roundUpToPowerOfTwo
}

// ValidateParallelism checks Flink's preconditions on an operator's
// parallelism and max parallelism (flink-semantics.md §1): both in
// 1..32768 and parallelism <= maxParallelism (Flink
// KeyGroupRangeAssignment.checkParallelismPreconditions). The error names
// the numbers.
func ValidateParallelism(parallelism, maxParallelism int) error {
	if err := checkParallelism(parallelism, maxParallelism); err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	return nil
}

func checkParallelism(parallelism, maxParallelism int) error {
	if parallelism < 1 || parallelism > MaxParallelismUpperBound {
		return fmt.Errorf("parallelism %d not within bounds [1, %d]", parallelism, MaxParallelismUpperBound)
	}
	if maxParallelism < 1 || maxParallelism > MaxParallelismUpperBound {
		return fmt.Errorf("max parallelism %d not within bounds [1, %d]", maxParallelism, MaxParallelismUpperBound)
	}
	if parallelism > maxParallelism {
		return fmt.Errorf("parallelism %d is larger than max parallelism %d", parallelism, maxParallelism)
	}
	return nil
}
