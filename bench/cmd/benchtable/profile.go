package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ProfileLine is one function of `go tool pprof -top`.
type ProfileLine struct {
	Flat, Cum float64 // percent of all samples
	Func      string
}

// Profile is a parsed `go tool pprof -top` listing.
type Profile struct {
	Name   string // short name: c, go, call
	Title  string // what was profiled
	Figure string // the benchmark's figure in the profiled run
	Header []string
	Lines  []ProfileLine // by flat, descending
	Shares []Share       // by category
}

// Share is the flat percentage of one category.
type Share struct {
	Category string
	Percent  float64
}

// topLine:   2.12s 52.48% 52.48%      2.12s 52.48%  runtime._ExternalCode
var topLine = regexp.MustCompile(`^\s*\S+\s+([\d.]+)%\s+[\d.]+%\s+\S+\s+([\d.]+)%\s+(.+)$`)

// ParseTop reads `go tool pprof -top` output.
func ParseTop(r io.Reader) (*Profile, error) {
	p := &Profile{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	inTable := false
	for sc.Scan() {
		line := sc.Text()
		if !inTable {
			if strings.Contains(line, "flat%") && strings.Contains(line, "cum%") {
				inTable = true
				continue
			}
			if strings.HasPrefix(line, "Duration:") || strings.HasPrefix(line, "Showing") || strings.HasPrefix(line, "Type:") {
				p.Header = append(p.Header, strings.TrimSpace(line))
			}
			continue
		}
		m := topLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		flat, err1 := strconv.ParseFloat(m[1], 64)
		cum, err2 := strconv.ParseFloat(m[2], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		p.Lines = append(p.Lines, ProfileLine{Flat: flat, Cum: cum, Func: strings.TrimSpace(m[3])})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(p.Lines) == 0 {
		return nil, fmt.Errorf("no functions in the pprof listing")
	}
	sort.SliceStable(p.Lines, func(i, j int) bool { return p.Lines[i].Flat > p.Lines[j].Flat })
	p.Shares = categorize(p.Lines)
	return p, nil
}

// The categories of "where the time goes".
const (
	catGuest     = "guest code (Wasm compiled by wazero)"
	catWazero    = "wazero runtime (calls in and out, host-function glue)"
	catPlugin    = "sluice plugin host (host/plugin: buffers, emit, output checks, deadlines)"
	catEngine    = "sluice engine (host/runtime, partition: chaining, edges, routing, keyed sum)"
	catCodec     = "codec (abi: msgpack scanning and writing)"
	catConnector = "connectors (host/connector: the generator)"
	catGC        = "Go runtime: GC and allocation"
	catSched     = "Go runtime: scheduler, goroutines, channels, locks, timers"
	catCopy      = "Go runtime: memmove and memclr (copies)"
	catPreempt   = "Go runtime: asynchronous preemption (runtime.asyncPreempt)"
	catGo        = "Go runtime and standard library: other"
	catOther     = "other"
)

var categoryOrder = []string{catGuest, catWazero, catPlugin, catEngine, catCodec, catConnector, catGC, catSched, catCopy, catPreempt, catGo, catOther}

// goCategories sorts Go runtime and standard-library functions by name
// prefix; the first match wins.
var goCategories = []struct {
	cat      string
	prefixes []string
}{
	{catPreempt, []string{"runtime.asyncPreempt"}},
	{catCopy, []string{"runtime.memmove", "runtime.memclr"}},
	{catGC, []string{"runtime.gc", "gcWriteBarrier", "runtime.wbBuf", "runtime.bulkBarrier", "runtime.mark", "runtime.scan",
		"runtime.greyobject", "runtime.findObject", "runtime.(*gcWork)", "runtime.(*gcBits)", "runtime.(*gcControllerState)",
		"runtime.(*mspan)", "runtime.(*mheap)", "runtime.(*mcache)", "runtime.(*mcentral)", "runtime.(*spanInlineMarkBits)",
		"runtime.sweep", "runtime.(*sweepLocked)", "runtime.bgsweep", "runtime.bgscavenge", "runtime.(*pageAlloc)",
		"runtime.mallocgc", "runtime.nextFreeFast", "runtime.newobject", "runtime.makeslice", "runtime.growslice",
		"runtime.heapSetType", "runtime.typePointers", "runtime.madvise", "runtime.sysUnused", "runtime.sysUsed",
		"runtime.tryDeferToSpanScan", "runtime.getMCache", "runtime.roundupsize", "internal/runtime/gc", "runtime.(*scavenger",
		"runtime.deductAssistCredit", "runtime.publicationBarrier"}},
	{catSched, []string{"runtime.findRunnable", "runtime.schedule", "runtime.execute", "runtime.park_m", "runtime.gopark",
		"runtime.goready", "runtime.ready", "runtime.futex", "runtime.notesleep", "runtime.notewakeup", "runtime.lock",
		"runtime.unlock", "runtime.stealWork", "runtime.runq", "runtime.globrunq", "runtime.selectgo", "runtime.sellock",
		"runtime.selunlock", "runtime.chansend", "runtime.chanrecv", "runtime.send", "runtime.recv", "runtime.(*timers)",
		"runtime.(*timer)", "runtime.usleep", "runtime.osyield", "runtime.mcall", "runtime.wakep", "runtime.startm",
		"runtime.stopm", "runtime.netpoll", "runtime.nanotime", "runtime.gfget", "runtime.gfput", "runtime.(*gList)",
		"runtime.(*gQueue)", "runtime.gostartcall", "runtime.newproc", "runtime.gdestroy", "runtime.goexit",
		"runtime.casgstatus", "runtime.isSystemGoroutine", "runtime.resetspinning", "runtime.checkTimers",
		"runtime.semacquire", "runtime.semrelease", "runtime.procyield", "runtime.mutex", "runtime.(*mLockProfile)",
		"runtime.(*timeHistogram)", "runtime.acquirep", "runtime.releasep", "runtime.handoffp", "runtime.stackpoolalloc",
		"runtime.stackalloc", "runtime.malg", "runtime.sysmon", "runtime.retake", "runtime.preemptone", "runtime.signalM",
		"runtime.tgkill", "runtime.mPark", "runtime.gogo", "runtime.morestack", "runtime.newstack", "runtime.copystack",
		"internal/runtime/syscall", "internal/runtime/atomic", "internal/sync", "sync.", "sync/atomic.", "time.",
		"context.", "runtime.goschedIfBusy", "runtime.Gosched", "runtime.gosched", "runtime.exitsyscall",
		"runtime.entersyscall", "runtime.reentersyscall", "runtime.(*randomEnum)", "runtime.cheaprand"}},
}

// goCategory sorts a Go runtime or standard-library function.
func goCategory(fn string) string {
	for _, c := range goCategories {
		for _, p := range c.prefixes {
			if strings.HasPrefix(fn, p) {
				return c.cat
			}
		}
	}
	return catGo
}

// category classifies a function by its name. Samples taken while the
// CPU runs JIT-compiled guest code have no Go symbol: pprof shows them as
// runtime._ExternalCode, or as flat time of wazero's callWithStack, the
// Go frame that jumped into the guest.
func category(fn string) string {
	const sluice = "github.com/sluicehq/sluice/"
	switch {
	case fn == "runtime._ExternalCode", strings.HasSuffix(fn, "wazevo.(*callEngine).callWithStack"):
		return catGuest
	case strings.HasPrefix(fn, "github.com/tetratelabs/wazero"):
		return catWazero
	case strings.HasPrefix(fn, sluice+"host/plugin"):
		return catPlugin
	case strings.HasPrefix(fn, sluice+"host/runtime"), strings.HasPrefix(fn, sluice+"partition"):
		return catEngine
	case strings.HasPrefix(fn, sluice+"abi"):
		return catCodec
	case strings.HasPrefix(fn, sluice+"host/connector"):
		return catConnector
	case strings.HasPrefix(fn, sluice):
		return catOther
	case fn == "gcWriteBarrier" || strings.HasPrefix(fn, "gcWriteBarrier"):
		return catGC
	case strings.HasPrefix(fn, "golang.org/x/"), isStdlib(fn):
		return goCategory(fn)
	}
	return catOther
}

// isStdlib: a standard-library package path has no dot in its first
// element (runtime.mallocgc, hash/maphash.String); a module path has
// (github.com/...).
func isStdlib(fn string) bool {
	slash, dot := strings.Index(fn, "/"), strings.Index(fn, ".")
	return slash < 0 || dot > slash
}

func categorize(lines []ProfileLine) []Share {
	sum := map[string]float64{}
	for _, l := range lines {
		sum[category(l.Func)] += l.Flat
	}
	var out []Share
	for _, c := range categoryOrder {
		if sum[c] > 0 {
			out = append(out, Share{c, sum[c]})
		}
	}
	return out
}

// ShareOf returns the percentage of a category.
func (p *Profile) ShareOf(cat string) float64 {
	for _, s := range p.Shares {
		if s.Category == cat {
			return s.Percent
		}
	}
	return 0
}
