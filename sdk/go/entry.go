package sdk

import (
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/sdk/go/internal/hostcall"
)

// The entry points behind the ABI exports, with (ptr, len) pairs already
// turned into slices. Each one recovers a panic into a status with the
// panic text, sends the error text of any failure to the host, and yields
// after the call (runtime.Gosched) so the guest's garbage collector gets
// to run between calls: wasm memory never shrinks, so garbage left
// unswept only grows it.

func guestOpen(cfg []byte, subtask, parallelism, maxParallelism int32) (st int32) {
	defer finish(&st)
	return report(eng.open(cfg, subtask, parallelism, maxParallelism))
}

func guestProcess(port int32, batch []byte, count int32) (st int32) {
	defer finish(&st)
	return report(eng.process(port, batch, count))
}

func guestProcessIndexed(port int32, batch []byte, count int32, index []byte) (st int32) {
	defer finish(&st)
	return report(eng.processIndexed(port, batch, count, index))
}

func guestPartition(batch []byte, count, n int32) (st int32) {
	defer finish(&st)
	return report(eng.partition(batch, count, n))
}

func guestClose() (st int32) {
	defer finish(&st)
	return report(eng.close())
}

func guestDescribe() (st int32) {
	defer finish(&st)
	return report(eng.describe())
}

func guestSnapshot() (st int32) {
	defer finish(&st)
	return report(eng.snapshot())
}

func guestRestore(element []byte) (st int32) {
	defer finish(&st)
	return report(eng.restore(element))
}

// finish is deferred by every entry point. A recovered panic's text names
// where the plugin's code panicked: "panic: boom (at main.go:12 in
// main.init.func1)".
func finish(st *int32) {
	if v := recover(); v != nil {
		text := "panic: " + panicText(v)
		if site := panicSite(); site != "" {
			text += " (at " + site + ")"
		}
		if eng.cur != nil {
			text = "record " + strconv.Itoa(eng.idx) + ": " + text
		}
		*st = report(&Error{Status: abi.StatusUser, Text: text})
	}
	eng.endCall()
	runtime.Gosched()
}

// panicSite is "file.go:line in pkg.func" of the innermost frame of the
// panicking stack outside the runtime and the SDK (the plugin's code: a
// standard-library frame, such as strings.Repeat, only when the stack has
// no other), or "" when there is none. It runs in finish after recover,
// while the stack still holds the frames that panicked. Plugins are built
// with -trimpath, so only the file's base name and the function's last
// path element are kept: the text stays short and names no build machine.
func panicSite() string {
	var pcs [64]uintptr
	n := runtime.Callers(3, pcs[:]) // from the caller of finish: runtime.gopanic
	frames := runtime.CallersFrames(pcs[:n])
	var std runtime.Frame
	for more := n > 0; more; {
		var f runtime.Frame
		f, more = frames.Next()
		switch fn := f.Function; {
		case fn == "" || hasPathPrefix(fn, "runtime") || hasPathPrefix(fn, "internal") ||
			hasPathPrefix(fn, "github.com/sluicehq/sluice/sdk/go") || hasPathPrefix(fn, "github.com/sluicehq/sluice/abi"):
		case isStd(fn):
			if std.Function == "" {
				std = f
			}
		default:
			return frameSite(f)
		}
	}
	if std.Function != "" {
		return frameSite(std)
	}
	return ""
}

// hasPathPrefix reports whether function fn is in package pkg or below it.
func hasPathPrefix(fn, pkg string) bool {
	return len(fn) > len(pkg) && strings.HasPrefix(fn, pkg) && (fn[len(pkg)] == '.' || fn[len(pkg)] == '/')
}

// isStd reports whether function fn looks like the standard library's: the
// first element of its import path has no dot ("strings.Repeat",
// "encoding/json.Unmarshal"), and it is not package main.
func isStd(fn string) bool {
	fn = trimTypeArgs(fn)
	slash, dot := strings.IndexByte(fn, '/'), strings.IndexByte(fn, '.')
	switch {
	case slash >= 0:
		return dot < 0 || slash < dot
	case dot >= 0:
		return fn[:dot] != "main"
	}
	return false
}

// trimTypeArgs cuts a generic function's type arguments, which may hold
// import paths: "pkg.F[go.shape.int]" is "pkg.F".
func trimTypeArgs(fn string) string {
	if i := strings.IndexByte(fn, '['); i >= 0 {
		return fn[:i]
	}
	return fn
}

// frameSite is "file.go:line in pkg.func" of f.
func frameSite(f runtime.Frame) string {
	file := f.File[strings.LastIndexByte(f.File, '/')+1:]
	fn := f.Function[strings.LastIndexByte(trimTypeArgs(f.Function), '/')+1:]
	return file + ":" + strconv.Itoa(f.Line) + " in " + fn
}

// report sends err's text to the host and returns its status.
func report(err error) int32 {
	if err == nil {
		return int32(abi.StatusOK)
	}
	text := err.Error()
	if len(text) > abi.MaxErrorText {
		i := abi.MaxErrorText
		for i > 0 && !utf8.RuneStart(text[i]) {
			i-- // cut on a character boundary
		}
		text = text[:i]
	}
	hostcall.Error(text)
	return int32(statusOf(err, abi.StatusUser))
}

// maxBuffer is the largest input buffer sluice_buffer hands out (1 GiB).
const maxBuffer = 1 << 30

// buffer implements sluice_buffer: a pointer to at least size bytes that
// the host fills before the next call, or 0. The buffer is reused while it
// is large enough.
func (e *engine) buffer(size int32) uintptr {
	if size < 0 || size > maxBuffer {
		return 0
	}
	if int(size) > len(e.inbuf) || len(e.inbuf) == 0 {
		n := 4096
		for n < int(size) {
			n *= 2
		}
		e.inbuf = make([]byte, n)
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(e.inbuf)))
}

// input turns a (ptr, len) pair from the host into a slice of the buffer
// handed out by sluice_buffer. Any other range is refused: the guest reads
// no memory it did not hand out.
func (e *engine) input(ptr uintptr, n int32) ([]byte, bool) {
	if n == 0 {
		return nil, true
	}
	if n < 0 || len(e.inbuf) == 0 {
		return nil, false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(e.inbuf)))
	size := uintptr(len(e.inbuf))
	if ptr < base || ptr-base > size || uintptr(n) > size-(ptr-base) {
		return nil, false
	}
	off := ptr - base
	return e.inbuf[off : off+uintptr(n) : off+uintptr(n)], true
}

// badInput fails a call whose (ptr, len) pair input refused.
func badInput(export string) int32 {
	return report(&Error{Status: abi.StatusMalformed, Text: export + ": the input range is not inside the buffer from sluice_buffer"})
}
