package runtime

import (
	"fmt"
	"strings"
	"testing"
)

// indexCell stores key in x as the KeyedStore does, returning its cell.
func indexCell(x *cellIndex, hs *keyHasher, key string) *cell {
	c := &cell{key: key}
	x.put(hs.hashString(key), c)
	return c
}

func TestCellIndex(t *testing.T) {
	hs := newKeyHasher()
	var x cellIndex
	if x.find(&hs, []byte("a"), true) != nil || x.find(&hs, nil, true) != nil {
		t.Fatal("empty index found a key")
	}
	var keys []string
	keys = append(keys, "") // the empty key
	for n := 1; n <= 40; n++ {
		// every length up to 40 (both sides of the short keys' 16 bytes),
		// each with variants that differ only in the last or first byte
		base := strings.Repeat("k", n-1)
		for _, last := range []byte{'a', 'b', 0, 0xff} {
			keys = append(keys, base+string([]byte{last}))
		}
		if n > 1 {
			keys = append(keys, "x"+base[1:]+"a")
		}
	}
	for i := 0; i < 20000; i++ { // many keys: the table grows many times
		keys = append(keys, fmt.Sprintf("acct-%06d", i), string(strKey(fmt.Sprintf("%d-%s", i, strings.Repeat("z", i%24)))))
	}
	cells := map[string]*cell{}
	for i, k := range keys {
		if _, dup := cells[k]; dup {
			t.Fatalf("test key %q twice", k)
		}
		if x.find(&hs, []byte(k), true) != nil {
			t.Fatalf("key %q found before it was stored", k)
		}
		cells[k] = indexCell(&x, &hs, k)
		if i%997 == 0 { // all keys so far stay found across growth
			for _, k := range keys[:i+1] {
				if x.find(&hs, []byte(k), true) != cells[k] {
					t.Fatalf("after %d keys: %q not found", i+1, k)
				}
			}
		}
	}
	if x.n != len(keys) || 4*x.n > 3*len(x.entries) || len(x.entries)&(len(x.entries)-1) != 0 {
		t.Fatalf("%d keys in %d entries (n %d)", len(keys), len(x.entries), x.n)
	}
	for _, k := range keys {
		if c := x.find(&hs, []byte(k), true); c != cells[k] {
			t.Fatalf("%q: got cell %p, want %p", k, c, cells[k])
		}
	}
	for _, k := range []string{"kkkkc", "acct-020000", strings.Repeat("k", 41), "\x01", "kkkkkkkkkkkkkkk\x01"} {
		if x.find(&hs, []byte(k), true) != nil {
			t.Fatalf("never stored %q found", k)
		}
	}
	// a deleted cell stays indexed but only find(…, true) returns it
	c := cells["acct-000007"]
	c.dead = true
	if x.find(&hs, []byte("acct-000007"), false) != nil || x.find(&hs, []byte("acct-000007"), true) != c {
		t.Fatal("deleted cell")
	}
	// removal: every other key stays found, the removed ones are gone
	for i, k := range keys {
		if i%3 == 0 {
			x.remove(hs.hashString(k), cells[k])
		}
	}
	for i, k := range keys {
		got, want := x.find(&hs, []byte(k), true), cells[k]
		if i%3 == 0 {
			want = nil
		}
		if got != want {
			t.Fatalf("after removals: %q: got %p, want %p", k, got, want)
		}
	}
	if want := len(keys) - (len(keys)+2)/3; x.n != want {
		t.Fatalf("n %d after removals, want %d", x.n, want)
	}
}

// A matching hash is not enough: the key's bytes must match too.
func TestCellIndexComparesKeys(t *testing.T) {
	hs := newKeyHasher()
	for _, p := range [][2]string{
		{"", "\x00"}, {"ab", "abb"}, {"acct-0042", "acct-0043"}, {"kkkkkkkkkkkkkkka", "kkkkkkkkkkkkkkkb"},
		{"bkkkkkkkkkkkkkka", "kkkkkkkkkkkkkkka"}, {"kkkkkkkkkkkkkkkkkkkkka", "kkkkkkkkkkkkkkkkkkkkkb"},
	} {
		var x cellIndex
		x.put(hs.hashString(p[0]), &cell{key: p[1]}) // p[1]'s cell under p[0]'s hash
		if c := x.find(&hs, []byte(p[0]), true); c != nil {
			t.Fatalf("%q found the cell of %q", p[0], c.key)
		}
	}
}

// Keys are hashed with the store's own seeds: two stores do not put the
// same keys in the same places.
func TestCellIndexSeeded(t *testing.T) {
	a, b := newKeyHasher(), newKeyHasher()
	same := 0
	for i := 0; i < 64; i++ {
		k := []byte(fmt.Sprintf("key-%d", i))
		if a.hash(k) == b.hash(k) {
			same++
		}
		long := []byte(strings.Repeat("long-", 5) + fmt.Sprint(i))
		if a.hash(long) == b.hash(long) {
			same++
		}
	}
	if same > 0 {
		t.Fatalf("%d of 128 keys hash the same under two seeds", same)
	}
}

func TestCellIndexFindDoesNotAllocate(t *testing.T) {
	st := NewKeyedStore(1, 0, 0)
	for i := 0; i < 1000; i++ {
		_ = st.Put(0, strKey(fmt.Sprintf("acct-%04d", i)), []byte{1})
	}
	short, long := strKey("acct-0042"), strKey(strings.Repeat("x", 30))
	_ = st.Put(0, long, []byte{1})
	if n := testing.AllocsPerRun(1000, func() {
		if st.lookup(0, short) == nil || st.lookup(0, long) == nil {
			t.Fatal("not found")
		}
	}); n != 0 {
		t.Fatalf("%v allocations per lookup", n)
	}
}
