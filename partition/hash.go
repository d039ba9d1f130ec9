package partition

import "math/bits"

// hash is Flink's KeyGroupStreamPartitioner (flink-semantics.md §1, §2):
// a record goes to the subtask owning its key group,
// OperatorIndexForKeyGroup(maxP, n, KeyGroup(keyHash, maxP)). When maxP is
// a power of two (the default always is) the two divisions are a mask and
// a shift: the same integers, for a few cycles instead of dozens.
type hash struct {
	maxP, n int
	shift   int // log2(maxP) when maxP is a power of two, else -1
}

func newHash(maxP, n int) *hash {
	h := &hash{maxP: maxP, n: n, shift: -1}
	if maxP&(maxP-1) == 0 {
		h.shift = bits.TrailingZeros(uint(maxP))
	}
	return h
}

func (*hash) Name() string { return NameHash }

func (h *hash) Channel(keyHash int32) int {
	if h.shift >= 0 {
		kg := int(Murmur(keyHash)) & (h.maxP - 1) // Murmur is never negative
		return kg * h.n >> h.shift
	}
	return OperatorIndexForKeyGroup(h.maxP, h.n, KeyGroup(keyHash, h.maxP))
}
