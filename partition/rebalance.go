package partition

// rebalance is Flink's RebalancePartitioner (flink-semantics.md §2): each
// upstream subtask starts at a random channel (setup:
// nextChannelToSendTo = random.nextInt(n)), then every record goes to
// next = (next+1) % n, so the first record goes to start+1. The start is
// drawn from a source seeded by (Config.Seed, Config.Upstream).
type rebalance struct{ next, n int }

func newRebalance(n int, seed int64, upstream int) *rebalance {
	src := newSource(seed, upstream)
	return &rebalance{next: src.intN(n), n: n}
}

func (*rebalance) Name() string { return NameRebalance }

func (r *rebalance) Channel(_ int32) int {
	r.next = (r.next + 1) % r.n
	return r.next
}
