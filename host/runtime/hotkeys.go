package runtime

import (
	"bytes"
	"sort"
	"sync"
)

// hotKeys samples the keys leaving one upstream subtask on a HASH or a
// CUSTOM edge and
// keeps the heavy hitters of the sample (Misra-Gries with hotKeySlots
// counters: a key holding a share s of the sample is kept with a count of
// at least (s - 1/(hotKeySlots+1)) of it). Sampling skips a random gap of
// 1..2*hotKeyGap-1 records between samples (random, so a key pattern
// periodic in the record number cannot alias with it), which keeps the
// cost per record at a decrement and a compare.
type hotKeys struct {
	mu      sync.Mutex // the owner adds, the summary reads
	skip    int
	rng     uint64
	sampled int64
	slots   [hotKeySlots]hotSlot
	used    int
}

type hotSlot struct {
	key     []byte
	count   int64
	channel int // the channel the key went to (observeAt), -1: not known
}

const (
	hotKeySlots  = 16
	hotKeyGap    = 32
	hotKeyMaxLen = 256 // longer keys are not tracked
)

func newHotKeys(seed uint64) *hotKeys {
	h := &hotKeys{rng: seed | 1}
	h.skip = h.nextGap()
	return h
}

func (h *hotKeys) nextGap() int {
	h.rng ^= h.rng << 13
	h.rng ^= h.rng >> 7
	h.rng ^= h.rng << 17
	return 1 + int(h.rng%(2*hotKeyGap-1))
}

// observe is called for every record with its key; it samples. It stays
// small enough to be inlined: a decrement and a compare per record.
func (h *hotKeys) observe(key []byte) {
	if h.skip--; h.skip <= 0 {
		h.sample(key, -1)
	}
}

// observeAt is observe for an edge whose channels the engine does not
// derive from the key (CUSTOM: a user partitioner chose channel), so the
// sketch keeps the channel with the key.
func (h *hotKeys) observeAt(key []byte, channel int) {
	if h.skip--; h.skip <= 0 {
		h.sample(key, channel)
	}
}

func (h *hotKeys) sample(key []byte, channel int) {
	h.skip = h.nextGap()
	h.add(key, channel)
}

func (h *hotKeys) add(key []byte, channel int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sampled++
	if len(key) > hotKeyMaxLen {
		return
	}
	for i := 0; i < h.used; i++ {
		if bytes.Equal(h.slots[i].key, key) {
			h.slots[i].count++
			h.slots[i].channel = channel
			return
		}
	}
	if h.used < hotKeySlots {
		s := &h.slots[h.used]
		s.key, s.count, s.channel = append(s.key[:0], key...), 1, channel
		h.used++
		return
	}
	// no room: every counter loses one, and empty ones are freed
	j := 0
	for i := 0; i < h.used; i++ {
		h.slots[i].count--
		if h.slots[i].count > 0 {
			h.slots[i], h.slots[j] = h.slots[j], h.slots[i]
			j++
		}
	}
	h.used = j
}

// keyShare is a key and its estimated share of the sampled records, with
// the channel it went to when the sketches kept it (-1 otherwise).
type keyShare struct {
	key     []byte
	share   float64
	channel int
}

// mergeHotKeys merges the sketches of every upstream subtask of an edge and
// returns the keys whose estimated share is above threshold, largest first.
// Too small a sample says nothing: below minSample samples it returns none.
func mergeHotKeys(sketches []*hotKeys, threshold float64, minSample int64) []keyShare {
	counts := map[string]int64{}
	channels := map[string]int{}
	var total int64
	for _, h := range sketches {
		if h == nil {
			continue
		}
		h.mu.Lock()
		total += h.sampled
		for i := 0; i < h.used; i++ {
			k := string(h.slots[i].key)
			counts[k] += h.slots[i].count
			if ch, ok := channels[k]; !ok || ch < 0 {
				channels[k] = h.slots[i].channel
			}
		}
		h.mu.Unlock()
	}
	if total < minSample {
		return nil
	}
	var hot []keyShare
	for k, c := range counts {
		if s := float64(c) / float64(total); s > threshold {
			hot = append(hot, keyShare{key: []byte(k), share: s, channel: channels[k]})
		}
	}
	sort.Slice(hot, func(i, j int) bool { return hot[i].share > hot[j].share })
	return hot
}
