// Command benchtable is sluice's performance harness, run by `make bench`:
// it runs the benchmark sets below (go test -bench, -count=3: each figure
// is the median of three runs), parses their output, pairs every sluice
// figure with the baseline doing the same work measured in the same run (native Go on the same msgpack
// bytes or on structs, Benthos for the side-by-side), prints the table of
// ratios (markdown) to stdout and writes docs/benchmarks.md with the
// table, the machine, how to reproduce, the goals of
// shared/design/performance.md met or missed by how much, and where the
// time goes from a CPU profile of the quickstart pipeline.
//
// It lives in the main module (bench/ is not a module); the Benthos
// side-by-side is bench/benthos, a module of its own that it runs with
// `go test` inside that folder, so Benthos never enters sluice's go.mod.
//
//	go run ./bench/cmd/benchtable            # everything, ~15 minutes on 2 cores
//	go run ./bench/cmd/benchtable -count 1   # one run of each benchmark (~6 minutes)
//	go run ./bench/cmd/benchtable -quick     # short benchtimes: a smoke test
//	go run ./bench/cmd/benchtable -keep DIR  # keep raw outputs and profiles
//	go run ./bench/cmd/benchtable -from DIR  # re-render from a kept DIR
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"time"
)

const modulePath = "github.com/sluicehq/sluice"

// Set is one `go test -bench` invocation.
type Set struct {
	Name      string // also the raw output's file name
	Dir       string // where go test runs, relative to the repository root ("" = root)
	Pkg       string // the package argument
	Bench     string // -bench regexp
	Benchtime string
	Quick     string // -benchtime with -quick
	Optional  bool   // skipped (with a note) when Dir/Pkg does not exist
}

var sets = []Set{
	{Name: "abi", Pkg: "./abi", Bench: "^BenchmarkCodec", Benchtime: "2s", Quick: "100ms"},
	{Name: "partition", Pkg: "./partition", Bench: "^BenchmarkHashChannel$", Benchtime: "500ms", Quick: "50ms"},
	{Name: "sdk-go", Pkg: "./sdk/go", Bench: "^BenchmarkFilterMap$", Benchtime: "2s", Quick: "100ms"},
	{Name: "connector", Pkg: "./host/connector", Bench: "^BenchmarkGenerator$/^transactions$", Benchtime: "1s", Quick: "100ms"},
	{Name: "plugin", Pkg: "./host/plugin", Bench: "^Benchmark(CallOverhead|FilterMap|GoSDK|StartCold|StartWarmCache|StartWarmCacheLangs|Instantiate|InstantiateLangs|MemoryPerInstance|MemoryPerInstanceLangs)$", Benchtime: "2s", Quick: "100ms"},
	{Name: "fuel", Pkg: "./host/plugin/fuel", Bench: "^BenchmarkOverhead$/^filter1024$", Benchtime: "2s", Quick: "100ms", Optional: true},
	{Name: "langtest", Pkg: "./plugins/langtest", Bench: "^Benchmark(FilterBatch1024|FilterBatch1024Native|BatchSweep|Sandbox)$", Benchtime: "2s", Quick: "100ms"},
	{Name: "runtime", Pkg: "./host/runtime", Bench: "^Benchmark(Edge|KeyedShuffle|KeyedShuffleNative|KeyedShuffleParallelism|KeyedShuffleNativeParallelism|Chain3|Quickstart|QuickstartNative)$", Benchtime: "2s", Quick: "100ms"},
	{Name: "latency", Pkg: "./host/runtime", Bench: "^BenchmarkLatency$", Benchtime: "1x", Quick: "1x"},
	// issue 25: checkpoints through the whole host run, a 1 M-key snapshot, a restart after kill -9
	{Name: "checkpoint-run", Pkg: "./cmd/host", Bench: "^BenchmarkRunQuickstartCheckpoints$", Benchtime: "4000000x", Quick: "200000x"},
	{Name: "checkpoint-state", Pkg: "./host/runtime", Bench: "^BenchmarkKeyedStoreSnapshot1M$", Benchtime: "3x", Quick: "1x"},
	{Name: "checkpoint-write", Pkg: "./host/checkpoint", Bench: "^Benchmark(Write1MKeys|Restore1MKeys)$", Benchtime: "10x", Quick: "1x"},
	// issue 31: the heap backend's dirty tracking and incremental checkpoints
	{Name: "dirty-tracking", Pkg: "./host/runtime", Bench: "^BenchmarkDirtyTracking(Store)?$", Benchtime: "4000000x", Quick: "400000x"},
	{Name: "incremental", Pkg: "./host/runtime", Bench: "^BenchmarkIncrementalCheckpoint$", Benchtime: "10x", Quick: "2x"},
	{Name: "restart", Pkg: "./cmd/host", Bench: "^BenchmarkRestartAfterKill$", Benchtime: "3x", Quick: "1x"},
	{Name: "state", Pkg: "./host/state/pebblestate", Bench: "^BenchmarkKeyedAggregation$", Benchtime: "500000x", Quick: "20000x"},
	{Name: "state-checkpoint", Pkg: "./host/state/pebblestate", Bench: "^BenchmarkNativeCheckpointSync$", Benchtime: "20x", Quick: "2x"},
	{Name: "state-large", Pkg: "./host/state/pebblestate", Bench: "^BenchmarkLargerThanMemory$", Benchtime: "1000000x", Quick: "20000x"},
	{Name: "benthos", Dir: "bench/benthos", Pkg: ".", Bench: "^BenchmarkBenthos$", Benchtime: "200000x", Quick: "20000x"},
	{Name: "kafka", Pkg: "./cmd/host", Bench: "^BenchmarkKafka$", Benchtime: "200000x", Quick: "20000x"},
	// issue 26's Benthos side: a franz-go input and output stand in for kafka_franz (bench/benthos/kafka_test.go)
	{Name: "benthos-kafka", Dir: "bench/benthos", Pkg: ".", Bench: "^BenchmarkBenthosKafka$", Benchtime: "200000x", Quick: "20000x"},
	// issue 27: Nexmark q7 and q5 with built-in window aggregations, a Wasm window function and a native Go loop
	{Name: "nexmark", Pkg: "./host/runtime", Bench: "^BenchmarkNexmark$", Benchtime: "2000000x", Quick: "50000x"},
}

// profiled are the benchmarks profiled for "where the time goes": the
// quickstart with each kind of plugin, and one call into a guest (the
// per-call cost the batch-size sweep shows).
var profiled = []struct{ name, title, pkg, bench, key string }{
	{"c", "Quickstart with C plugins", "./host/runtime", "^BenchmarkQuickstart$/^c$", "host/runtime.BenchmarkQuickstart/c"},
	{"go", "Quickstart with Go plugins", "./host/runtime", "^BenchmarkQuickstart$/^go$", "host/runtime.BenchmarkQuickstart/go"},
	{"call", "One call of one record into a no-op WAT guest (host/plugin CallOverhead/wasm)", "./host/plugin", "^BenchmarkCallOverhead$/^wasm$", "host/plugin.BenchmarkCallOverhead/wasm"},
}

func main() {
	out := flag.String("out", "docs/benchmarks.md", "the document to write (empty: stdout only)")
	keep := flag.String("keep", "", "keep raw outputs and CPU profiles in this directory")
	from := flag.String("from", "", "render from a directory kept by -keep, without running anything")
	quick := flag.Bool("quick", false, "short benchtimes: a smoke test of the harness, figures are not meaningful")
	only := flag.String("only", "", "run only the sets whose name matches this regexp (the others are n/a)")
	goBin := flag.String("go", "go", "the go command")
	count := flag.Int("count", 3, "runs of each benchmark (go test -count); a figure is the median of its runs")
	flag.Parse()
	if *count < 1 {
		fmt.Fprintln(os.Stderr, "benchtable: -count must be at least 1")
		os.Exit(2)
	}
	if err := run(*out, *keep, *from, *only, *goBin, *quick, *count); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(out, keep, from, only, goBin string, quick bool, count int) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	dir := from
	if dir == "" {
		if dir = keep; dir == "" {
			if dir, err = os.MkdirTemp("", "sluice-bench-"); err != nil {
				return err
			}
			defer os.RemoveAll(dir)
		} else if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		dir, _ = filepath.Abs(dir)
		var filter *regexp.Regexp
		if only != "" {
			if filter, err = regexp.Compile(only); err != nil {
				return err
			}
		}
		if err := measure(root, dir, goBin, quick, count, filter); err != nil {
			return err
		}
	}
	rep, err := load(dir)
	if err != nil {
		return err
	}
	fmt.Print(rep.Tables())
	if out == "" {
		return nil
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(root, out)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(out, []byte(rep.Document()), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "wrote", out)
	return nil
}

// repoRoot is the nearest directory up from here whose go.mod is sluice's.
func repoRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module "+modulePath+"\n")) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("not inside the %s module (run from the repository)", modulePath)
		}
		d = parent
	}
}

// measure runs every set and the profiles, writing into dir: NAME.txt
// (go test output), NAME.cmd (the command), cpu-V.out and pprof-V.txt,
// and machine.txt.
func measure(root, dir, goBin string, quick bool, count int, only *regexp.Regexp) error {
	start := time.Now()
	m := machineInfo(goBin, root)
	busy0, own0 := machineBusy(), ownCPU()
	var cmds []string
	for i, s := range sets {
		if only != nil && !only.MatchString(s.Name) {
			continue
		}
		bt := s.Benchtime
		if quick {
			bt = s.Quick
		}
		args := []string{"test", "-run", "^$", "-bench", s.Bench, "-benchtime", bt, fmt.Sprintf("-count=%d", count), "-benchmem", "-timeout", "45m", s.Pkg}
		cmdText := shellJoin(s.Dir, goBin, args)
		cmds = append(cmds, cmdText)
		if s.Optional {
			if _, err := os.Stat(filepath.Join(root, s.Dir, s.Pkg)); err != nil {
				note := fmt.Sprintf("SKIP\t%s\t%s does not exist at the time of this run\n", path.Join(modulePath, s.Dir, s.Pkg), s.Pkg)
				fmt.Fprint(os.Stderr, note)
				if err := os.WriteFile(filepath.Join(dir, s.Name+".txt"), []byte(note), 0o644); err != nil {
					return err
				}
				continue
			}
		}
		fmt.Fprintf(os.Stderr, "[%d/%d] %s\n", i+1, len(sets), cmdText)
		t0 := time.Now()
		text, err := goTest(filepath.Join(root, s.Dir), goBin, args)
		// Other engineers edit the same checkout: a package caught
		// mid-edit fails to build. Wait and try again, twice.
		for try := 0; try < 2 && err != nil && buildFailed(text); try++ {
			fmt.Fprintln(os.Stderr, "      the package did not build (an edit in progress?): retrying in 30s")
			time.Sleep(30 * time.Second)
			text, err = goTest(filepath.Join(root, s.Dir), goBin, args)
		}
		status := "ok"
		if err != nil {
			status = "FAILED (" + err.Error() + "): its rows are n/a"
		}
		fmt.Fprintf(os.Stderr, "      %s in %s\n", status, time.Since(t0).Round(time.Second))
		if err := os.WriteFile(filepath.Join(dir, s.Name+".txt"), text, 0o644); err != nil {
			return err
		}
	}
	if only == nil || only.MatchString("profile") {
		for _, p := range profiled {
			bt := "3s"
			if quick {
				bt = "300ms"
			}
			prof := filepath.Join(dir, "cpu-"+p.name+".out")
			bin := filepath.Join(dir, path.Base(p.pkg)+".test")
			args := []string{"test", "-run", "^$", "-bench", p.bench, "-benchtime", bt, "-count=1",
				"-cpuprofile", prof, "-o", bin, p.pkg}
			cmdText := shellJoin("", goBin, args)
			cmds = append(cmds, cmdText, shellJoin("", goBin, []string{"tool", "pprof", "-top", "-nodefraction=0", "-nodecount=100000", prof}))
			fmt.Fprintf(os.Stderr, "[profile %s] %s\n", p.name, cmdText)
			text, err := goTest(root, goBin, args)
			if err := os.WriteFile(filepath.Join(dir, "profile-"+p.name+".txt"), text, 0o644); err != nil {
				return err
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "      profile run failed: %v\n", err)
				continue
			}
			top, err := exec.Command(goBin, "tool", "pprof", "-top", "-nodefraction=0", "-nodecount=100000",
				bin, prof).CombinedOutput()
			if err != nil {
				fmt.Fprintf(os.Stderr, "      pprof failed: %v\n%s", err, top)
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, "pprof-"+p.name+".txt"), top, 0o644); err != nil {
				return err
			}
		}
	}
	m.Load1End = loadAvg()
	m.OtherCPU = otherShare(busy0, machineBusy(), own0, ownCPU(), time.Since(start), m.NumCPU)
	m.Elapsed = time.Since(start).Round(time.Second).String()
	m.Commands = cmds
	m.Quick = quick
	m.Count = count
	return m.save(filepath.Join(dir, "machine.txt"))
}

// goTest runs go with args in dir and returns its combined output,
// echoing the benchmark result lines to stderr as they come.
func goTest(dir, goBin string, args []string) ([]byte, error) {
	cmd := exec.Command(goBin, args...)
	cmd.Dir = dir
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			buf.WriteString(line + "\n")
			if strings.HasPrefix(line, "Benchmark") || strings.Contains(line, "--- ") || strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "panic") {
				fmt.Fprintln(os.Stderr, "      "+line)
			}
		}
		io.Copy(io.Discard, pr)
	}()
	err := cmd.Run()
	pw.Close()
	<-done
	return buf.Bytes(), err
}

// buildFailed reports whether go test output says a package did not build.
func buildFailed(out []byte) bool {
	return bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]"))
}

func shellJoin(dir, goBin string, args []string) string {
	var b strings.Builder
	if dir != "" {
		fmt.Fprintf(&b, "(cd %s && ", dir)
	}
	b.WriteString(goBin)
	for _, a := range args {
		if strings.ContainsAny(a, "^$|()*? ") {
			a = "'" + a + "'"
		}
		b.WriteString(" " + a)
	}
	if dir != "" {
		b.WriteString(")")
	}
	return b.String()
}

// Machine describes where and how the figures were taken.
type Machine struct {
	Date, CPU, GoVersion, Kernel string
	NumCPU                       int
	Load1Start, Load1End         string
	// OtherCPU is the share of the machine's CPU time that processes
	// other than the benchmarks used during the run ("4.2 %"), from
	// /proc/stat less this process's and its children's rusage; "" when
	// not measured (runs kept before it was).
	OtherCPU        string
	Wazero, Benthos string
	Elapsed         string
	Quick           bool
	Count           int // runs of each benchmark (the profiles run once)
	Commands        []string
}

func machineInfo(goBin, root string) *Machine {
	m := &Machine{Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"), NumCPU: runtime.NumCPU(), Load1Start: loadAvg()}
	if out, err := exec.Command("nproc").Output(); err == nil {
		fmt.Sscan(string(out), &m.NumCPU)
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if out, err := exec.Command(goBin, "version").Output(); err == nil {
		m.GoVersion = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("uname", "-sr").Output(); err == nil {
		m.Kernel = strings.TrimSpace(string(out))
	}
	m.Wazero = requireVersion(filepath.Join(root, "go.mod"), "github.com/tetratelabs/wazero")
	m.Benthos = requireVersion(filepath.Join(root, "bench/benthos/go.mod"), "github.com/redpanda-data/benthos/v4")
	return m
}

// loadAvg is /proc/loadavg's first three fields.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// machineBusy is the CPU time the whole machine has spent out of idle
// since boot (/proc/stat's first line: user, nice, system, irq, softirq,
// steal), or -1.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return -1
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // idle (4) and iowait (5) left out
		var v int64
		if _, err := fmt.Sscan(f[i], &v); err != nil {
			return -1
		}
		ticks += v
	}
	const userHZ = 100 // the kernel's USER_HZ: /proc/stat counts in 1/100 s on every Linux port Go runs on
	return time.Duration(ticks) * time.Second / userHZ
}

// ownCPU is the CPU time of this process and of every child it waited
// for (go test, and the test binaries go test waits for).
func ownCPU() time.Duration {
	var self, kids syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids) != nil {
		return -1
	}
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

// otherShare is the share of the machine's CPU time over wall that went
// to other processes: the machine's busy time less ours.
func otherShare(busy0, busy1, own0, own1, wall time.Duration, ncpu int) string {
	if busy0 < 0 || busy1 < 0 || own0 < 0 || own1 < 0 || wall <= 0 || ncpu <= 0 {
		return ""
	}
	other := (busy1 - busy0) - (own1 - own0)
	share := 100 * float64(max(other, 0)) / (float64(wall) * float64(ncpu))
	return fmt.Sprintf("%.1f %%", share)
}

func requireVersion(gomod, mod string) string {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "require "))
		if len(f) >= 2 && f[0] == mod {
			return f[1]
		}
	}
	return "?"
}

func (m *Machine) save(path string) error {
	var b strings.Builder
	kv := func(k, v string) { fmt.Fprintf(&b, "%s\t%s\n", k, v) }
	kv("date", m.Date)
	kv("cpu", m.CPU)
	kv("nproc", fmt.Sprint(m.NumCPU))
	kv("go", m.GoVersion)
	kv("kernel", m.Kernel)
	kv("load-start", m.Load1Start)
	kv("load-end", m.Load1End)
	kv("other-cpu", m.OtherCPU)
	kv("wazero", m.Wazero)
	kv("benthos", m.Benthos)
	kv("elapsed", m.Elapsed)
	kv("quick", fmt.Sprint(m.Quick))
	kv("count", fmt.Sprint(m.Count))
	for _, c := range m.Commands {
		kv("cmd", c)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func loadMachine(path string) (*Machine, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := &Machine{Count: 1} // kept before -count existed: one run
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, "\t")
		if !ok {
			continue
		}
		switch k {
		case "date":
			m.Date = v
		case "cpu":
			m.CPU = v
		case "nproc":
			fmt.Sscan(v, &m.NumCPU)
		case "go":
			m.GoVersion = v
		case "kernel":
			m.Kernel = v
		case "load-start":
			m.Load1Start = v
		case "load-end":
			m.Load1End = v
		case "other-cpu":
			m.OtherCPU = v
		case "wazero":
			m.Wazero = v
		case "benthos":
			m.Benthos = v
		case "elapsed":
			m.Elapsed = v
		case "quick":
			m.Quick = v == "true"
		case "count":
			fmt.Sscan(v, &m.Count)
		case "cmd":
			m.Commands = append(m.Commands, v)
		}
	}
	return m, nil
}

// Report is everything the document shows.
type Report struct {
	Machine  *Machine
	Results  *Results
	Rows     []Row
	Start    []StartRow
	Profiles []*Profile
	Raw      []string // the raw outputs, by set
	// Mechanism is how the host bounded guest calls in this run, as the
	// profiles show it (mechFuel, mechDeadline or mechUnknown).
	Mechanism string
}

// load parses a directory written by measure.
func load(dir string) (*Report, error) {
	m, err := loadMachine(filepath.Join(dir, "machine.txt"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w (not a directory kept by -keep?)", dir, err)
	}
	rs := newResults()
	rep := &Report{Machine: m, Results: rs}
	for _, s := range sets {
		b, err := os.ReadFile(filepath.Join(dir, s.Name+".txt"))
		if err != nil {
			continue
		}
		prefix := modulePath + "/"
		if err := Parse(bytes.NewReader(b), prefix, rs); err != nil {
			return nil, err
		}
		rep.Raw = append(rep.Raw, "## "+s.Name+"\n"+string(b))
	}
	for _, p := range profiled {
		f, err := os.Open(filepath.Join(dir, "pprof-"+p.name+".txt"))
		if err != nil {
			continue
		}
		prof, err := ParseTop(f)
		f.Close()
		if err != nil {
			continue
		}
		prof.Name, prof.Title = p.name, p.title
		if b, err := os.ReadFile(filepath.Join(dir, "profile-"+p.name+".txt")); err == nil {
			pr := newResults()
			if Parse(bytes.NewReader(b), modulePath+"/", pr) == nil {
				if v, ok := pr.Get(p.key, "records/s"); ok {
					prof.Figure = fmtRate(v) + " under the profiler"
				} else if v, ok := pr.Get(p.key, "ns/op"); ok {
					prof.Figure = fmtNs(v) + " per call under the profiler"
				}
			}
		}
		rep.Profiles = append(rep.Profiles, prof)
	}
	rep.Mechanism = Mechanism(rep.Profiles)
	rep.Rows = BuildRows(rs, rep.Mechanism)
	rep.Start = BuildStartRows(rs)
	return rep, nil
}
