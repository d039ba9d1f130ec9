package connector

import (
	"math"
	"math/bits"
	"time"
)

// pacer spreads a source's rate (records per second for the whole source)
// over its subtasks. The whole source may have produced floor(t*rate)+1
// records t after the start: record n of the source is due at n/rate.
// Subtask i of p owns the records n with n % p == i, so its allowance is
// its share of that prefix, and the subtasks' allowances add up exactly to
// the source's.
//
// A source that was held up (back-pressure) catches up at most maxBurst
// records at once: allowance older than that is forgiven, as a token
// bucket of one second's capacity would.
type pacer struct {
	start       time.Time
	rate        float64
	subtask     int
	parallelism int
	maxBurst    uint64
	forgiven    uint64
}

func newPacer(start time.Time, rate float64, subtask, parallelism int) *pacer {
	burst := uint64(rate / float64(parallelism)) // one second of this subtask's share
	return &pacer{start: start, rate: rate, subtask: subtask, parallelism: parallelism, maxBurst: max(burst, maxBatchRecords)}
}

// due returns how many records the subtask may emit at now, having
// emitted emitted so far.
func (p *pacer) due(now time.Time, emitted uint64) uint64 {
	whole := dueBy(max(now.Sub(p.start), 0), p.rate) + 1
	allowed := splitCount(whole, p.subtask, p.parallelism)
	if allowed <= p.forgiven+emitted {
		return 0
	}
	d := allowed - p.forgiven - emitted
	if d > p.maxBurst {
		p.forgiven += d - p.maxBurst
		d = p.maxBurst
	}
	return d
}

// tick is how often a paced subtask wakes: about once per record of its
// share, between 5 ms and 100 ms.
func (p *pacer) tick() time.Duration {
	per := float64(p.parallelism) / p.rate // seconds between its records
	switch {
	case per >= 0.1:
		return 100 * time.Millisecond
	case per <= 0.005:
		return 5 * time.Millisecond
	}
	return time.Duration(per * float64(time.Second))
}

// splitCount is how many of the sequence numbers [0, total) subtask owns
// when it owns those equal to subtask mod parallelism.
func splitCount(total uint64, subtask, parallelism int) uint64 {
	p := uint64(parallelism)
	n := total / p
	if uint64(subtask) < total%p {
		n++
	}
	return n
}

// dueBy is floor(elapsed * rate): exact for a whole rate (1.001 s at
// 1000/s is 1001 records, where floating point says 1000).
func dueBy(elapsed time.Duration, rate float64) uint64 {
	if rate == math.Trunc(rate) && rate < 1<<63 {
		hi, lo := bits.Mul64(uint64(elapsed), uint64(rate))
		if hi >= uint64(time.Second) {
			return math.MaxUint64 - 1
		}
		q, _ := bits.Div64(hi, lo, uint64(time.Second))
		return q
	}
	f := elapsed.Seconds() * rate
	if f >= 1<<63 {
		return math.MaxUint64 - 1
	}
	return uint64(f)
}
