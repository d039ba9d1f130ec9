package plugin

import (
	"cmp"
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// The guest exports an instance calls, looked up once per instance.
const (
	expBuffer = iota
	expOpen
	expProcess
	expClose
	expPartition
	expDescribe
	expInitialize
	expProcessIndexed
	expSnapshot
	expRestore
	expOnTimer
	numExports
)

var exportNames = [numExports]string{
	abi.ExportBuffer, abi.ExportOpen, abi.ExportProcess, abi.ExportClose,
	abi.ExportPartition, abi.ExportDescribe, abi.ExportInitialize,
	abi.ExportProcessIndexed, abi.ExportSnapshot, abi.ExportRestore,
	abi.ExportOnTimer,
}

// randomSeed seeds the deterministic random stream every instance reads
// unless Config.AllowRandom.
var randomSeed = [32]byte{'s', 'l', 'u', 'i', 'c', 'e', ' ', 'a', 'b', 'i', ' ', 'v', '1'}

// target says whom an instance works for, for error messages.
type target struct {
	operator    string
	edge        string
	subtask     int
	parallelism int
}

// env is what the host functions reach: the subtask's keyed state (nil
// when unkeyed) and the side-output port resolver.
type env struct {
	state runtime.KeyedState
	// kinds serves list and map state and TTL over state (statekinds.go);
	// made on the first state call when the operator did not make it
	kinds *runtime.StateKinds
	port  func(tag string) int
	// time serves the timer calls (timers.go); nil when the module
	// imports none
	time *timeEnv
	// logDropped counts the stdout and stderr lines dropped past the
	// kept tails; nil: not counted
	logDropped *atomic.Int64
}

// instance is one wasm instance of a Module, owned by one subtask and
// used from one goroutine.
type instance struct {
	m      *Module
	who    target
	env    env
	mod    api.Module
	mem    api.Memory
	fns    [numExports]api.Function
	stack  [8]uint64 // parameters and results of every call
	base   *callCtx  // parent of every call's context
	bound  callBound
	stdout *tailBuffer
	stderr *tailBuffer
	ports  []int            // guest port -> engine port (-1: dropped)
	tags   map[string]int32 // side-output tag -> guest port
	buf    []byte           // scratch for state_get
	inPtr  uint32           // the input region the guest reserved (abi.ExportBuffer)
	inCap  int              // its size; reused while inputs fit
	c      call
	dead   bool
}

// callCtx carries the instance to the host functions: every call's
// context derives from it. It is never mutated (wazero may watch a call's
// context from another goroutine).
type callCtx struct {
	context.Context
	inst *instance
}

type instanceKey struct{}

func (c *callCtx) Value(k any) any {
	if k == (instanceKey{}) {
		return c.inst
	}
	return c.Context.Value(k)
}

// instantiate makes a fresh instance and runs _initialize when exported.
func (m *Module) instantiate(ctx context.Context, who target, e env) (*instance, error) {
	h := m.host
	if ctx == nil { // a nil context would crash wazero's watcher goroutine
		ctx = context.Background()
	}
	in := &instance{
		m: m, who: who, env: e,
		stdout: countingTail(h.cfg.StderrCap, e.logDropped), stderr: countingTail(h.cfg.StderrCap, e.logDropped),
		ports: []int{0}, tags: map[string]int32{},
	}
	in.base = &callCtx{Context: ctx, inst: in}
	// No file system, no network, no environment, no arguments: none is
	// configured. Clocks are wazero's deterministic fakes unless allowed.
	mc := wazero.NewModuleConfig().
		WithName(""). // anonymous: any number of instances per runtime
		WithStartFunctions().
		WithStdout(in.stdout).
		WithStderr(in.stderr)
	if h.cfg.AllowClock || m.grants.Clock {
		// the host sleeps: interruptible, within the call-timeout
		mc = mc.WithSysWalltime().WithSysNanotime().WithNanosleep(in.sleep)
	}
	if h.cfg.AllowRandom || m.grants.Random {
		mc = mc.WithRandSource(crand.Reader)
	} else {
		mc = mc.WithRandSource(rand.NewChaCha8(randomSeed))
	}
	mod, err := h.rt.InstantiateModule(ctx, m.compiled, mc)
	if err != nil {
		in.close()
		return nil, in.fail("", fmt.Errorf("instantiate: %w", startError(err)))
	}
	h.live.Add(1)
	in.mod, in.mem = mod, mod.Memory()
	if in.bound, err = h.intr.bind(in.base, mod); err != nil {
		in.close()
		return nil, in.fail("", fmt.Errorf("instantiate: %w", err))
	}
	if in.mem == nil {
		in.close()
		return nil, in.fail("", errors.New("instantiate: the module has no memory"))
	}
	for i, name := range exportNames {
		in.fns[i] = mod.ExportedFunction(name)
	}
	if in.fns[expInitialize] != nil {
		if _, err := in.invoke(expInitialize, outNone); err != nil {
			in.close() // no owner will: the instance is not handed out
			return nil, err
		}
	}
	return in, nil
}

// has reports whether the guest exports e.
func (in *instance) has(e int) bool { return in.fns[e] != nil }

// invoke calls export e with its parameters already in in.stack. Output
// emitted during the call stays in in.c until the caller hands it on.
// Exports with a status return it; a failure is a *PluginError.
func (in *instance) invoke(e int, mode outMode) (abi.Status, error) {
	name := exportNames[e]
	in.c.reset(name, mode)
	in.stderr.startCall()
	in.stdout.startCall()
	err := in.fns[e].CallWithStack(in.bound.start(), in.stack[:])
	if cause := in.bound.stop(err); cause != nil {
		if first := cmp.Or(in.c.violation, in.c.refusal); first != nil {
			// the guest went on past a refused call until the bound
			// stopped it: the refusal is what to fix
			cause = fmt.Errorf("%w, after the host had refused one of its calls, which the guest went on past: %w", cause, first)
		}
		return 0, in.poison(name, cause)
	}
	if err != nil {
		cause := in.callFailure(in.base, err)
		if len(in.c.errText) > 0 && errors.Is(cause, ErrTrap) {
			// the SDKs' panic and abort handlers send their text, then trap
			cause = fmt.Errorf("%w; the guest's error before it: %s", cause, printable(string(in.c.errText)))
		}
		pe := in.poison(name, cause)
		pe.Text = string(in.c.errText)
		return 0, pe
	}
	if in.c.violation != nil {
		return 0, in.poison(name, in.c.violation)
	}
	if e == expBuffer || e == expInitialize { // they return no status
		switch {
		case in.c.refusal == nil:
			return 0, nil
		case e == expInitialize:
			// an instance whose initialisation failed is never used
			return 0, in.poison(name, in.c.refusal)
		}
		return 0, in.fail(name, in.c.refusal)
	}
	st := abi.Status(int32(uint32(in.stack[0])))
	if st == abi.StatusOK && in.c.refusal == nil {
		return st, nil
	}
	cause := in.c.refusal
	if cause == nil {
		cause = statusError(st, string(in.c.errText))
		if st == abi.StatusHost {
			// the status says the host refused a call; it refused none
			cause = fmt.Errorf("%w, but the host refused none of the call's host calls: the plugin returned it of its own accord", cause)
		}
	}
	if st == abi.StatusOutOfMemory && in.nearMemoryLimit() {
		pe := in.poison(name, in.memoryLimit(cause))
		pe.Status, pe.Text = st, string(in.c.errText)
		return st, pe
	}
	pe := in.fail(name, cause)
	pe.Status, pe.Text = st, string(in.c.errText)
	return st, pe
}

// callFailure turns the error of a call that did not return into a cause.
func (in *instance) callFailure(parent context.Context, err error) error {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			return fmt.Errorf("%w: %s", ErrDeadline, in.m.host.intr.limit())
		case sys.ExitCodeContextCanceled:
			return fmt.Errorf("%w: %w", ErrCanceled, context.Cause(parent))
		}
		cause := fmt.Errorf("%w: the guest called proc_exit(%d) during the call", ErrExit, exit.ExitCode())
		if in.nearMemoryLimit() {
			return in.memoryLimit(cause)
		}
		return cause
	}
	msg, _, _ := strings.Cut(err.Error(), "\n") // drop the wasm stack trace
	msg = strings.TrimPrefix(msg, "wasm error: ")
	if msg == "out of bounds memory access" && in.m.bin.stackFirst {
		msg += stackFirstHint
	}
	cause := fmt.Errorf("%w: %s", ErrTrap, msg)
	if in.nearMemoryLimit() {
		return in.memoryLimit(cause)
	}
	return cause
}

// stackFirstHint follows an out-of-bounds trap in a module linked with
// --stack-first (wasmBinary.stackFirst), as the C and Rust SDKs' builds
// are: its stack is [0, top), so an overflow runs below address 0 and
// traps as an out-of-bounds access, not as "stack overflow".
const stackFirstHint = " (a C or Rust stack overflow traps this way with --stack-first: look for deep recursion or large locals)"

// nearMemoryLimit reports whether the guest's memory is within 1/16 of
// the page limit (at least one page): a failure there is most likely a
// refused memory.grow.
func (in *instance) nearMemoryLimit() bool {
	limit := uint64(in.m.host.cfg.MemoryLimitPages)
	pages := uint64(in.mem.Size()) / 65536
	return pages+max(1, limit/16) > limit
}

func (in *instance) memoryLimit(cause error) error {
	limit := uint64(in.m.host.cfg.MemoryLimitPages)
	return fmt.Errorf("%w: guest memory at %d of %d pages (%s, the memory-pages setting) could not grow: %w",
		ErrMemoryLimit, uint64(in.mem.Size())/65536, limit, sizeText(limit*65536), cause)
}

// writeInput asks the guest for a buffer of len(b) bytes and copies b
// there.
func (in *instance) writeInput(b []byte) (uint32, error) {
	return in.writeRegion(b, len(b))
}

// writeInputs writes b, then extra at the next multiple of abi.IndexAlign
// after b, into one buffer from the guest; it returns where each starts.
func (in *instance) writeInputs(b, extra []byte) (ptr, extraPtr uint32, err error) {
	if ptr, err = in.writeRegion(b, len(b)+abi.IndexAlign-1+len(extra)); err != nil {
		return 0, 0, err
	}
	extraPtr = (ptr + uint32(len(b)) + abi.IndexAlign - 1) &^ (abi.IndexAlign - 1)
	if !in.mem.Write(extraPtr, extra) {
		return 0, 0, in.poison(exportNames[expBuffer], fmt.Errorf("%w: the input region ptr=0x%x (%d bytes) passes the end of guest memory (%d bytes)",
			ErrABI, ptr, len(b)+len(extra), in.mem.Size()))
	}
	return ptr, extraPtr, nil
}

// writeRegion asks the guest for a region of size bytes (or reuses the
// reserved one when it fits) and copies b (len(b) <= size) to its start.
func (in *instance) writeRegion(b []byte, size int) (uint32, error) {
	name := exportNames[expBuffer]
	if size > math.MaxInt32 {
		return 0, in.fail(name, fmt.Errorf("an input of %d bytes does not fit a wasm32 buffer", size))
	}
	if in.inPtr != 0 && size <= in.inCap {
		// ABI v1: the region stays reserved for the host until the next
		// call to buffer, so an input that fits needs no guest call.
		if !in.mem.Write(in.inPtr, b) {
			return 0, in.poison(name, fmt.Errorf("%w: the reserved input region ptr=0x%x (%d bytes) passes the end of guest memory (%d bytes)",
				ErrABI, in.inPtr, in.inCap, in.mem.Size()))
		}
		return in.inPtr, nil
	}
	in.stack[0] = uint64(size)
	if _, err := in.invoke(expBuffer, outNone); err != nil {
		return 0, err
	}
	ptr := uint32(in.stack[0])
	in.inPtr, in.inCap = ptr, size
	if ptr == 0 && size > 0 {
		cause := fmt.Errorf("returned 0 for %d bytes: the guest could not allocate its input", size)
		limit := uint64(in.m.host.cfg.MemoryLimitPages) * 65536
		if in.nearMemoryLimit() || uint64(in.mem.Size())+uint64(size) > limit {
			return 0, in.poison(name, in.memoryLimit(cause))
		}
		return 0, in.fail(name, cause)
	}
	if !in.mem.Write(ptr, b) {
		return 0, in.poison(name, fmt.Errorf("%w: returned ptr=0x%x for %d bytes, which pass the end of guest memory (%d bytes)",
			ErrABI, ptr, size, in.mem.Size()))
	}
	return ptr, nil
}

// deliver hands the output of the last call to out, in emit order.
func (in *instance) deliver(out runtime.Collector) error {
	for _, s := range in.c.emits {
		var err error
		if s.ends >= 0 {
			err = runtime.EmitWithEnds(out, s.port, in.c.out[s.start:s.end], s.count, in.c.ends[s.ends:s.ends+4*s.count])
		} else {
			err = out.Emit(s.port, in.c.out[s.start:s.end], s.count)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fail builds the error of a call that did not poison the instance.
func (in *instance) fail(export string, cause error) *PluginError {
	return &PluginError{
		Plugin: in.m.name, Operator: in.who.operator, Edge: in.who.edge,
		Subtask: in.who.subtask, Parallelism: in.who.parallelism,
		Export: export, Cause: cause, Stderr: in.stderr.String(),
	}
}

// poison closes the instance and builds the error of the call that broke
// it; the owner makes a fresh instance for the next call.
func (in *instance) poison(export string, cause error) *PluginError {
	pe := in.fail(export, cause)
	pe.Poisoned = true
	pe.Crash = in.stderr.Crash() // a call that broke the instance may have a runtime's report of why
	if !errors.Is(cause, ErrMemoryLimit) && strings.Contains(pe.Crash, "out of memory") && in.mem != nil &&
		uint64(in.mem.Size()) >= uint64(in.m.host.cfg.MemoryLimitPages)*65536/2 {
		// the runtime says it could not allocate, with half the limit or
		// more in use: its memory.grow was most likely refused at the
		// limit, though not within nearMemoryLimit's page of it (a Go
		// runtime grows by megabytes)
		pe.Cause = in.memoryLimit(cause)
	}
	in.close()
	return pe
}

// close releases the wasm instance.
func (in *instance) close() {
	if in.dead {
		return
	}
	in.dead = true
	if in.bound != nil {
		in.bound.release()
	}
	if in.mod != nil {
		_ = in.mod.Close(context.Background())
		in.m.host.live.Add(-1)
	}
}

// startFunction matches wazero's name of a failed start function:
// `start function[3] export["f"] failed: ` (the export it names is any
// export of that function index, which misleads).
var startFunction = regexp.MustCompile(`^start function\[\d+\](?: export\["[^"]*"\])? failed: `)

// startError words an instantiation error for a person: one line (no wasm
// stack trace), and a failed start function named as such.
func startError(err error) error {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	if m := startFunction.FindString(msg); m != "" {
		// no index: metering adds an import, which shifts every function's
		msg = "the module's start function failed: " + strings.TrimPrefix(msg[len(m):], "wasm error: ")
		if errors.Is(err, errStartFuel) {
			msg = fmt.Sprintf("the module's start function ran out of its fuel budget: it runs on at most %d fuel units (well under a second of work), and one that does not end within them is stopped", int64(StartFuel))
		}
	}
	if msg == err.Error() {
		return err
	}
	return &worded{msg: msg, err: err}
}

// worded is err with a clearer text; errors.Is and As still see err.
type worded struct {
	msg string
	err error
}

func (w *worded) Error() string { return w.msg }
func (w *worded) Unwrap() error { return w.err }
