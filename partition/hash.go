package partition

// hash is Flink's KeyGroupStreamPartitioner (flink-semantics.md §1, §2):
// a record goes to the subtask owning its key group,
// OperatorIndexForKeyGroup(maxP, n, KeyGroup(keyHash, maxP)).
type hash struct{ maxP, n int }

func (*hash) Name() string { return NameHash }

func (h *hash) Channel(keyHash int32) int {
	return OperatorIndexForKeyGroup(h.maxP, h.n, KeyGroup(keyHash, h.maxP))
}
