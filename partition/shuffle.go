package partition

// shuffle is Flink's ShufflePartitioner (flink-semantics.md §2): every
// record goes to a uniformly random channel (Flink: random.nextInt(n)).
// The source is seeded by (Config.Seed, Config.Upstream), so a given seed
// gives the same channels on every run.
type shuffle struct {
	src source
	n   int
}

func newShuffle(n int, seed int64, upstream int) *shuffle {
	return &shuffle{src: newSource(seed, upstream), n: n}
}

func (*shuffle) Name() string { return NameShuffle }

func (s *shuffle) Channel(_ int32) int { return s.src.intN(s.n) }
