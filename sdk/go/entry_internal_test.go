package sdk

import (
	"testing"
	"unsafe"
)

// The wasm exports turn (ptr, len) into a slice only inside the buffer
// that sluice_buffer handed out.
func TestInputRangeMustBeInsideTheBuffer(t *testing.T) {
	var e engine
	if p := e.buffer(-1); p != 0 {
		t.Fatal("a negative size must give 0")
	}
	if p := e.buffer(maxBuffer + 1); p != 0 {
		t.Fatal("a size past the limit must give 0")
	}
	if _, ok := e.input(0, 1); ok {
		t.Fatal("no buffer yet: nothing is inside it")
	}
	p := e.buffer(100)
	if p == 0 || len(e.inbuf) < 100 {
		t.Fatal("buffer(100) failed")
	}
	size := uintptr(len(e.inbuf))
	cases := []struct {
		name string
		ptr  uintptr
		n    int32
		ok   bool
	}{
		{"whole buffer", p, int32(size), true},
		{"inside", p + 10, 20, true},
		{"ends at the end", p + size - 1, 1, true},
		{"empty anywhere", 12345, 0, true},
		{"before", p - 1, 2, false},
		{"past the end", p + size - 1, 2, false},
		{"starts at the end", p + size, 1, false},
		{"negative length", p, -1, false},
		{"most negative length", p + 10, int32(-1 << 31), false},
	}
	for _, c := range cases {
		b, ok := e.input(c.ptr, c.n)
		if ok != c.ok {
			t.Errorf("%s: ok %v", c.name, ok)
		}
		if ok && c.n > 0 && (len(b) != int(c.n) || uintptr(unsafe.Pointer(&b[0])) != c.ptr) {
			t.Errorf("%s: wrong slice", c.name)
		}
	}
	if q := e.buffer(50); q != p {
		t.Fatal("a buffer large enough is reused")
	}
	if q := e.buffer(int32(size) + 1); q == p || len(e.inbuf) <= int(size) {
		t.Fatal("a larger size gives a new buffer")
	}
}

func TestPutMapHeaderShrinks(t *testing.T) {
	// 3 reserved bytes, then 2 pairs: the header shrinks to one byte.
	b := []byte{'x', 0, 0, 0, 0xa1, 'a', 1, 0xa1, 'b', 2}
	b = putMapHeader(b, 1, 3, 2)
	want := []byte{'x', 0x82, 0xa1, 'a', 1, 0xa1, 'b', 2}
	if string(b) != string(want) {
		t.Fatalf("got % x", b)
	}
	b = putMapHeader(make([]byte, 5), 0, 5, 70000)
	if string(b) != string([]byte{0xdf, 0, 1, 0x11, 0x70}) {
		t.Fatalf("map32: % x", b)
	}
}
