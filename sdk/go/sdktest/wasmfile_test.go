package sdktest

import (
	"reflect"
	"testing"
)

func TestCheckABIReportsEveryProblem(t *testing.T) {
	m := &wasmModule{exports: map[string]funcSig{}, imports: map[string]funcSig{}}
	for name, sig := range abiExports {
		m.exports[name] = sig
	}
	delete(m.exports, "sluice_close")
	m.exports["sluice_open"] = funcSig{4, 1, true}
	m.exports["_start"] = funcSig{0, 0, true}
	m.imports["sluice_v1.emit"] = funcSig{4, 1, true}
	m.imports["sluice_v1.clock"] = funcSig{0, 1, true}
	m.imports["sluice_v1.port"] = funcSig{2, 1, false}
	m.imports["env.abort"] = funcSig{4, 0, true}
	m.imports["wasi_snapshot_preview1.fd_write"] = funcSig{4, 1, true}
	want := []string{
		"export sluice_open is (4 x i32) -> 1 x i32, want (5 x i32) -> 1 x i32",
		"exports _start: a command, not a reactor (build with -buildmode=c-shared)",
		"import from module env (env.abort)",
		"import sluice_v1.port is (non-i32 types), want (2 x i32) -> 1 x i32",
		"missing export sluice_close",
		"unknown host function sluice_v1.clock",
	}
	if got := checkABI(m); !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestParseWasm(t *testing.T) {
	// A module with one type (i32, i32) -> i32, one import of that type,
	// one defined function of type 0, exported as "f" and the import as "g".
	mod := []byte{0, 'a', 's', 'm', 1, 0, 0, 0,
		1, 7, 1, 0x60, 2, 0x7f, 0x7f, 1, 0x7f, // type
		2, 9, 1, 1, 'm', 3, 'i', 'm', 'p', 0, 0, // import m.imp func type 0
		3, 2, 1, 0, // function
		7, 9, 2, 1, 'f', 0, 1, 1, 'g', 0, 0, // export f -> func 1, g -> func 0
	}
	m, err := parseWasm(mod)
	if err != nil {
		t.Fatal(err)
	}
	sig := funcSig{2, 1, true}
	if !reflect.DeepEqual(m.imports, map[string]funcSig{"m.imp": sig}) || !reflect.DeepEqual(m.exports, map[string]funcSig{"f": sig, "g": sig}) {
		t.Fatalf("%+v", m)
	}
	boundaries := map[int]bool{17: true, 28: true, 32: true} // ends of sections
	for n := 9; n < len(mod); n++ {
		if _, err := parseWasm(mod[:n]); err == nil && !boundaries[n] {
			t.Errorf("truncated at %d: no error", n)
		}
	}
	if _, err := parseWasm([]byte("\x00asx\x01\x00\x00\x00")); err == nil {
		t.Error("bad magic accepted")
	}
}
