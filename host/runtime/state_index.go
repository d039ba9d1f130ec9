package runtime

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"unsafe"
)

// cellIndex finds the cell of a key in one state slot of a KeyedStore: an
// open-addressing hash table with linear probing over a power-of-two array
// of (hash, *cell) entries. A probe reads one entry's 16 bytes, four to a
// cache line, and looks at the cell only when the entry's whole 64-bit
// hash matches. The table is at most 3/4 full and doubles from 8 entries;
// growth rehashes from the stored hashes. A nil cell marks an empty entry;
// a removal shifts the entries after it back (no tombstones). It is not
// safe for concurrent use.
type cellIndex struct {
	entries []indexEntry // len 0 or a power of two
	n       int          // cells held
}

type indexEntry struct {
	hash uint64
	c    *cell
}

// keyHasher is the seeded hash of a store's keys. The seeds are random
// per store, so keys crafted to collide in one table do not collide in
// another. A key of up to 16 bytes (a msgpack key is mostly a fixint or a
// short fixstr) is two words (shortKey) folded with the seeds by two 64x64
// multiplications, the construction of Go's own memhash fallback
// (wyhash's); a longer key takes hash/maphash.
type keyHasher struct {
	s0, s1, s2 uint64
	seed       maphash.Seed
}

func newKeyHasher() keyHasher {
	return keyHasher{s0: rand.Uint64(), s1: rand.Uint64(), s2: rand.Uint64(), seed: maphash.MakeSeed()}
}

// shortKey returns two words that, with its length, determine k, of at
// most 16 bytes: all of its bytes in two overlapping loads (a key of 1 to
// 3 bytes as its first, middle and last byte).
func shortKey(k []byte) (a, b uint64) {
	switch n := len(k); {
	case n >= 8:
		return binary.LittleEndian.Uint64(k), binary.LittleEndian.Uint64(k[n-8:])
	case n >= 4:
		return uint64(binary.LittleEndian.Uint32(k)), uint64(binary.LittleEndian.Uint32(k[n-4:]))
	case n > 0:
		return uint64(k[0])<<16 | uint64(k[n>>1])<<8 | uint64(k[n-1]), 0
	}
	return 0, 0
}

func (h *keyHasher) short(n int, a, b uint64) uint64 {
	return mix(h.s2^uint64(n), mix(a^h.s1, b^h.s0))
}

func (h *keyHasher) hash(k []byte) uint64 {
	if len(k) > 16 {
		return maphash.Bytes(h.seed, k)
	}
	a, b := shortKey(k)
	return h.short(len(k), a, b)
}

func (h *keyHasher) hashString(k string) uint64 { return h.hash(stringBytes(k)) }

func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// at is the entry i & mask: no bounds check on the probe path.
func (x *cellIndex) at(i uint64) *indexEntry {
	return (*indexEntry)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(x.entries)), uintptr(i)*unsafe.Sizeof(indexEntry{})))
}

// find returns the cell of key; nil if the key was never stored (or was
// compacted away), or if it is deleted and dead is false. A short key is
// compared as its two words, without a call to memequal.
func (x *cellIndex) find(hs *keyHasher, key []byte, dead bool) *cell {
	if x.n == 0 {
		return nil
	}
	mask := uint64(len(x.entries) - 1)
	n := len(key)
	if n > 16 {
		h := maphash.Bytes(hs.seed, key)
		for i := h & mask; ; i = (i + 1) & mask {
			e := x.at(i)
			if e.c == nil {
				return nil
			}
			if e.hash == h && e.c.key == string(key) {
				return live(e.c, dead)
			}
		}
	}
	a, b := shortKey(key)
	h := hs.short(n, a, b)
	for i := h & mask; ; i = (i + 1) & mask {
		e := x.at(i)
		c := e.c
		if c == nil {
			return nil
		}
		if e.hash == h && len(c.key) == n {
			if ca, cb := shortKey(stringBytes(c.key)); ca == a && cb == b {
				return live(c, dead)
			}
		}
	}
}

func live(c *cell, dead bool) *cell {
	if c.dead && !dead {
		return nil
	}
	return c
}

// put indexes the new cell c, whose key has hash h and is not in x.
func (x *cellIndex) put(h uint64, c *cell) {
	if 4*(x.n+1) > 3*len(x.entries) {
		x.grow()
	}
	x.n++
	x.place(h, c)
}

func (x *cellIndex) place(h uint64, c *cell) {
	mask := uint64(len(x.entries) - 1)
	i := h & mask
	for x.at(i).c != nil {
		i = (i + 1) & mask
	}
	*x.at(i) = indexEntry{h, c}
}

func (x *cellIndex) grow() {
	old := x.entries
	x.entries = make([]indexEntry, max(2*len(old), 8))
	for _, e := range old {
		if e.c != nil {
			x.place(e.hash, e.c)
		}
	}
}

// remove drops the cell c, whose key has hash h, from x: the entries of
// the probe run after it move back so that every entry stays reachable
// from its home without passing an empty one (Knuth's algorithm R).
func (x *cellIndex) remove(h uint64, c *cell) {
	if x.n == 0 {
		return
	}
	mask := uint64(len(x.entries) - 1)
	i := h & mask
	for x.at(i).c != c {
		if x.at(i).c == nil {
			return
		}
		i = (i + 1) & mask
	}
	x.n--
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		e := *x.at(j)
		if e.c == nil {
			break
		}
		// e may fill the hole at i unless its home lies cyclically in
		// (i, j]: then the hole is before its home.
		if (j-e.hash)&mask >= (j-i)&mask {
			*x.at(i) = e
			i = j
		}
	}
	*x.at(i) = indexEntry{}
}
