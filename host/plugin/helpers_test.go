package plugin

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
)

var (
	fixtureMu  sync.Mutex
	fixtureDir string
	fixtures   = map[string][]byte{}
)

// fixture compiles testdata/name.wat with wat2wasm (Debian package wabt)
// once per test binary. A missing wat2wasm fails the test: the fixtures
// are the sandbox's specification.
func fixture(tb testing.TB, name string) []byte {
	tb.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if b, ok := fixtures[name]; ok {
		return b
	}
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		tb.Fatalf("wat2wasm not found: install wabt (Debian/Ubuntu: apt-get install -y wabt) to build the WAT fixtures in host/plugin/testdata")
	}
	if fixtureDir == "" {
		if fixtureDir, err = os.MkdirTemp("", "sluice-wat-"); err != nil {
			tb.Fatal(err)
		}
	}
	out := filepath.Join(fixtureDir, name+".wasm")
	if msg, err := exec.Command(tool, filepath.Join("testdata", name+".wat"), "-o", out).CombinedOutput(); err != nil {
		tb.Fatalf("wat2wasm testdata/%s.wat: %v\n%s", name, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	fixtures[name] = b
	return b
}

// fixturePath returns the path of the compiled fixture.
func fixturePath(tb testing.TB, name string) string {
	fixture(tb, name)
	return filepath.Join(fixtureDir, name+".wasm")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

// newHost builds a Host from DefaultConfig changed by edit.
func newHost(tb testing.TB, edit func(*Config)) *Host {
	tb.Helper()
	cfg := DefaultConfig()
	if edit != nil {
		edit(&cfg)
	}
	h, err := New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close(context.Background()) })
	return h
}

func load(tb testing.TB, h *Host, name string) *Module {
	tb.Helper()
	m, err := h.Load(context.Background(), name, fixture(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// open returns an opened operator of m as subtask 0 of 1.
func open(tb testing.TB, m *Module, oc runtime.OpenContext) *Operator {
	tb.Helper()
	if oc.Operator == "" {
		oc.Operator = "op1"
	}
	if oc.Parallelism == 0 {
		oc.Parallelism, oc.MaxParallelism = 1, 128
	}
	op := m.NewOperator(context.Background(), oc.Operator, nil)
	if err := op.Open(&oc); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { op.Close(nil) })
	return op
}

// sink is a runtime.Collector that keeps copies.
type sink struct{ got []emitted }

type emitted struct {
	port  int
	buf   []byte
	count int
}

func (s *sink) Emit(port int, buf []byte, count int) error {
	s.got = append(s.got, emitted{port, append([]byte(nil), buf...), count})
	return nil
}

func (s *sink) records() int {
	n := 0
	for _, e := range s.got {
		n += e.count
	}
	return n
}

// wantErr checks that err is a *PluginError whose text is want.
func wantErr(tb testing.TB, err error, want string) *PluginError {
	tb.Helper()
	var pe *PluginError
	if !errors.As(err, &pe) {
		tb.Fatalf("error = %v (%T), want a *PluginError reading\n%s", err, err, want)
	}
	if got := pe.Error(); got != want {
		tb.Fatalf("error text\n got: %s\nwant: %s", got, want)
	}
	return pe
}

// wantLoadErr checks that err is a *LoadError listing exactly problems.
func wantLoadErr(tb testing.TB, err error, problems ...string) *LoadError {
	tb.Helper()
	var le *LoadError
	if !errors.As(err, &le) {
		tb.Fatalf("error = %v (%T), want a *LoadError", err, err)
	}
	if strings.Join(le.Problems, "\n") != strings.Join(problems, "\n") {
		tb.Fatalf("problems\n got: %q\nwant: %q", le.Problems, problems)
	}
	return le
}

// record builds an envelope [nil, key, {"id": id, "amount": amount}].
func record(key []byte, id, amount int64) []byte {
	v := abi.AppendMapHeader(nil, 2)
	v = abi.AppendStr(v, "id")
	v = abi.AppendInt(v, id)
	v = abi.AppendStr(v, "amount")
	v = abi.AppendInt(v, amount)
	return abi.AppendEnvelope(nil, 0, false, key, v)
}

// script builds a batch for testdata/script.wat: commands first, payload
// from payloadBase on (the guest's input buffer is at 64 KiB).
type script struct {
	cmds    [][8]int32
	payload []byte
}

const (
	inputBase   = 65536
	payloadBase = inputBase + 16*32 // room for 16 commands
)

// Script ops (see testdata/script.wat).
const (
	opEmit = iota + 1
	opPort
	opError
	opStateGet
	opStatePut
	opStateDel
	opRandom
	opClock
	opEnvironSizes
	opPrestat
	opExit
	opPortEmit
	opTrap
	opStderr
	opSpin
	opGrow
	opCheckOpened
	opRecurse
)

// data appends b to the payload and returns its guest address.
func (s *script) data(b []byte) int32 {
	addr := payloadBase + len(s.payload)
	s.payload = append(s.payload, b...)
	return int32(addr)
}

// do appends a command; the guest returns status at once when it is not 0.
func (s *script) do(op int32, status int32, args ...int32) *script {
	var c [8]int32
	c[0] = op
	copy(c[1:6], args)
	c[7] = status
	s.cmds = append(s.cmds, c)
	return s
}

func (s *script) batch() ([]byte, int) {
	if len(s.cmds) > 16 {
		panic("script: more than 16 commands")
	}
	b := make([]byte, payloadBase-inputBase, payloadBase-inputBase+len(s.payload))
	for i, c := range s.cmds {
		for j, v := range c {
			binary.LittleEndian.PutUint32(b[32*i+4*j:], uint32(v))
		}
	}
	return append(b, s.payload...), len(s.cmds)
}

// run sends the script to op and returns what it emitted.
func (s *script) run(op *Operator) (*sink, error) {
	b, n := s.batch()
	out := &sink{}
	err := op.Process(0, b, n, out)
	return out, err
}

// ret reads the exported global "ret" of op's live instance: the result
// of the script's last command.
func ret(tb testing.TB, op *Operator) int32 {
	tb.Helper()
	if op.r.inst == nil {
		tb.Fatal("no live instance")
	}
	return int32(uint32(op.r.inst.mod.ExportedGlobal("ret").Get()))
}

// mem reads n bytes of op's live instance memory at addr.
func mem(tb testing.TB, op *Operator, addr int32, n int) []byte {
	tb.Helper()
	b, ok := op.r.inst.mem.Read(uint32(addr), uint32(n))
	if !ok {
		tb.Fatalf("read %d bytes at %d: out of range", n, addr)
	}
	return append([]byte(nil), b...)
}

func global(tb testing.TB, op *Operator, name string) int32 {
	tb.Helper()
	g := op.r.inst.mod.ExportedGlobal(name)
	if g == nil {
		tb.Fatalf("no exported global %q", name)
	}
	return int32(uint32(g.Get()))
}

func runtimeOpenContext() runtime.OpenContext { return runtime.OpenContext{} }
