package partition

import "math/rand/v2"

// source is the seeded random source of one upstream subtask (REBALANCE's
// start, SHUFFLE's channels). Flink draws from ThreadLocalRandom /
// java.util.Random; sluice seeds a PCG (math/rand/v2) from (seed,
// upstream) so that a run can be repeated. Its own bounded draw keeps the
// sequence independent of Go's Rand.IntN implementation.
type source struct{ pcg rand.PCG }

func newSource(seed int64, upstream int) source {
	var s source
	s.pcg.Seed(splitmix64(uint64(seed)), splitmix64(uint64(upstream)^0x6a09e667f3bcc909))
	return s
}

// intN is uniform in [0, n) for 1 <= n < 2^32 (Lemire's multiply-shift
// with rejection, no bias).
func (s *source) intN(n int) int {
	bound := uint32(n)
	m := uint64(uint32(s.pcg.Uint64()>>32)) * uint64(bound)
	if low := uint32(m); low < bound {
		threshold := -bound % bound
		for low < threshold {
			m = uint64(uint32(s.pcg.Uint64()>>32)) * uint64(bound)
			low = uint32(m)
		}
	}
	return int(m >> 32)
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
