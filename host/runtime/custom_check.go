package runtime

import (
	"fmt"

	"github.com/sluicehq/sluice/abi"
)

// keyChannels remembers the channel a custom partitioner gave recent
// keys, so that one answering differently for the same key is caught:
// Flink requires a deterministic partitioner (else a key's records split
// across subtasks, and so does its state). It is direct-mapped over
// memoSlots slots and holds keys up to memoKey bytes: memory stays bounded
// whatever the stream, and a key evicted by another is checked again from
// its next record on.
type keyChannels struct {
	slots [memoSlots]memoSlot
}

const (
	memoSlots = 1024
	memoKey   = 64
)

type memoSlot struct {
	key [memoKey]byte
	n   uint8 // key length; 0: empty
	ch  int32
}

// check records that key went to channel ch and returns the channel it
// went to before when that differs.
func (k *keyChannels) check(key []byte, ch int32) (prev int32, differs bool) {
	if len(key) == 0 || len(key) > memoKey {
		return 0, false
	}
	h := uint32(2166136261) // FNV-1a
	for _, c := range key {
		h = (h ^ uint32(c)) * 16777619
	}
	s := &k.slots[h%memoSlots]
	if int(s.n) == len(key) && string(s.key[:s.n]) == string(key) {
		return s.ch, s.ch != ch
	}
	s.n = uint8(copy(s.key[:], key))
	s.ch = ch
	return 0, false
}

// checkChannels checks the channels a custom partitioner gave the records
// of o.rekeyed (whose keys are the partitioning keys) against the
// channels it gave the same keys before.
func (o *edgeOut) checkChannels(count int) error {
	if o.seenKeys == nil {
		o.seenKeys = new(keyChannels)
	}
	rd := abi.NewReader(o.rekeyed.Buf, count)
	for i := 0; rd.Next(); i++ {
		r := rd.Current()
		if prev, differs := o.seenKeys.check(r.Key, o.chanIdx[i]); differs {
			return fmt.Errorf("custom partitioner plugin %q of %q returned channel %d for record %d (key %s) but channel %d for the same key before: a partitioner must give a key the same channel every time",
				o.edge.CustomPlugin, o.edge.To, o.chanIdx[i], o.routed+int64(i)+1, preview(r.Key), prev)
		}
	}
	return rd.Err()
}
