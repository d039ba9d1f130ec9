package plugin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
)

// goPlugin returns the path of the example Go plugin name: the module
// `make plugins` built, or, when it is absent, one built now with the
// Makefile's command (Go is the only toolchain it needs).
func goPlugin(tb testing.TB, name string) string {
	tb.Helper()
	dir := filepath.Join("..", "..", "plugins", name)
	built := filepath.Join(dir, name+".wasm")
	if _, err := os.Stat(built); err == nil {
		return built
	}
	if _, err := os.Stat(filepath.Join(dir, "main.go")); err != nil {
		tb.Fatalf("example plugin %s: %v (plugins/%s/main.go is the plugin's source)", name, err, name)
	}
	out := filepath.Join(tb.TempDir(), name+".wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("build plugins/%s: %v\n%s", name, err, msg)
	}
	return out
}

func loadGo(tb testing.TB, h *Host, name string) *Module {
	tb.Helper()
	m, err := h.LoadFile(context.Background(), goPlugin(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func txn(id, amount int64, account string) []byte {
	v := abi.AppendMapHeader(nil, 3)
	v = abi.AppendStr(v, "txnId")
	v = abi.AppendInt(v, id)
	v = abi.AppendStr(v, "accountId")
	v = abi.AppendStr(v, account)
	v = abi.AppendStr(v, "amount")
	v = abi.AppendInt(v, amount)
	return abi.AppendEnvelope(nil, 0, false, nil, v)
}

func TestGoSDKPlugins(t *testing.T) {
	h := newHost(t, nil)
	var batch abi.Writer
	for i, amt := range []int64{10, -5, 0, 7} {
		batch.AppendRaw(txn(int64(i), amt, "a"))
	}

	t.Run("valid", func(t *testing.T) {
		m := loadGo(t, h, "valid")
		info, err := m.Inspect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.ABIVersion != 1 || info.Kind != abi.KindFilter || info.KindFrom != "sluice_describe" || info.SDK != "go" {
			t.Errorf("inspect: version %d kind %q from %s sdk %q", info.ABIVersion, info.Kind, info.KindFrom, info.SDK)
		}
		op := open(t, m, runtime.OpenContext{})
		out := &sink{}
		if err := op.Process(0, batch.Buf, batch.Count, out); err != nil {
			t.Fatal(err)
		}
		var want abi.Writer
		want.AppendRaw(txn(0, 10, "a"))
		want.AppendRaw(txn(3, 7, "a"))
		var got abi.Writer
		for _, e := range out.got {
			if e.port != 0 {
				t.Errorf("emit on port %d", e.port)
			}
			got.Buf, got.Count = append(got.Buf, e.buf...), got.Count+e.count
		}
		if got.Count != 2 || string(got.Buf) != string(want.Buf) {
			t.Errorf("valid kept %d records % x, want 2 % x", got.Count, got.Buf, want.Buf)
		}
	})

	t.Run("high-temp side output", func(t *testing.T) {
		op := open(t, loadGo(t, h, "high-temp"), runtime.OpenContext{
			Config: map[string]any{"threshold": 30},
			Port: func(tag string) int {
				if tag == "alerts" {
					return 1
				}
				return -1
			},
		})
		var w abi.Writer
		for _, v := range []float64{20, 35.5} {
			m := abi.AppendMapHeader(nil, 1)
			m = abi.AppendStr(m, "value")
			m = abi.AppendFloat(m, v)
			w.Append(0, false, nil, m)
		}
		out := &sink{}
		if err := op.Process(0, w.Buf, w.Count, out); err != nil {
			t.Fatal(err)
		}
		per := map[int]int{}
		for _, e := range out.got {
			per[e.port] += e.count
		}
		if per[0] != 2 || per[1] != 1 {
			t.Errorf("records per port %v, want 2 on main and 1 on alerts", per)
		}
	})
}

// A Go plugin's panic names where it happened, as the Rust and
// AssemblyScript SDKs' errors do: the SDK's recover appends the plugin's
// frame, built as plugins are (-trimpath, -s -w).
func TestGoPanicNamesItsLocation(t *testing.T) {
	src := filepath.Join("testdata", "gopanic", "main.go")
	if _, err := os.ReadFile(src); err != nil { // go test's cache depends on it
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "gopanic.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", out, "./testdata/gopanic")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build testdata/gopanic: %v\n%s", err, msg)
	}
	h := newHost(t, nil)
	m, err := h.LoadFile(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	op := open(t, m, runtime.OpenContext{})
	var batch abi.Writer
	batch.AppendRaw(txn(1, 10, "a"))
	batch.AppendRaw(txn(2, -5, "a"))
	err = op.Process(0, batch.Buf, batch.Count, &sink{})
	wantErr(t, err, `plugin "gopanic" (operator op1, subtask 1/1) export sluice_process_indexed: plugin returned status -3 (user error): `+
		`record 1: panic: assignment to entry in nil map (at main.go:13 in main.init.0.func1)`)
}
