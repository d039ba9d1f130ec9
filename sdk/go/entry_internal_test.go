package sdk

import (
	"runtime"
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

// A panic's location skips the runtime and the SDK and prefers the
// plugin's frames to the standard library's; names are kept short.
func TestPanicSiteNames(t *testing.T) {
	for fn, std := range map[string]bool{
		"strings.Repeat": true, "encoding/json.(*decodeState).value": true, "internal/abi.F": true,
		"main.init.func1": false, "github.com/x/y.F": false, "example.com/p.(*T).M[go.shape.int]": false,
		"slices.Sort[go.shape.[]example.com/p.T]": true,
	} {
		if isStd(fn) != std {
			t.Errorf("isStd(%q) = %v", fn, !std)
		}
	}
	for _, c := range []struct{ fn, file, want string }{
		{"main.init.func1", "github.com/x/plug/main.go", "main.go:7 in main.init.func1"},
		{"github.com/x/y/pkg.F[github.com/x/z.T]", "/abs/pkg/f.go", "f.go:7 in pkg.F[github.com/x/z.T]"},
	} {
		if got := frameSite(runtime.Frame{Function: c.fn, File: c.file, Line: 7}); got != c.want {
			t.Errorf("frameSite(%s) = %q, want %q", c.fn, got, c.want)
		}
	}
	for _, fn := range []string{"github.com/sluicehq/sluice/sdk/go.Record.SetRaw", "github.com/sluicehq/sluice/sdk/go/structs.Decode", "runtime.gopanic"} {
		if !hasPathPrefix(fn, "github.com/sluicehq/sluice/sdk/go") && !hasPathPrefix(fn, "runtime") {
			t.Errorf("%s is not skipped", fn)
		}
	}
	if hasPathPrefix("github.com/sluicehq/sluice/sdk/go_test.TestX.func1", "github.com/sluicehq/sluice/sdk/go") {
		t.Error("the SDK's external tests are plugin code")
	}
}
