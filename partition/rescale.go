package partition

// rescale is Flink's RescalePartitioner (flink-semantics.md §2): the edge
// is pointwise (PointwiseTargets), and each upstream subtask cycles over
// its own subset with a counter starting at -1,
// next = (next+1) % subsetSize, so its first record goes to the first
// channel of its subset. Channel returns absolute indices (first + next);
// Flink numbers them within the subset.
type rescale struct{ first, size, next int }

func newRescale(upstream, s, t int) *rescale {
	first, end := PointwiseTargets(upstream, s, t)
	return &rescale{first: first, size: end - first, next: -1}
}

func (*rescale) Name() string { return NameRescale }

func (r *rescale) Channel(_ int32) int {
	r.next = (r.next + 1) % r.size
	return r.first + r.next
}
