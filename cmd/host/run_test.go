package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// TestRunPrintsRecordsOnStdoutSummaryOnStderr: stdout holds only the print
// sink's lines, stderr the summary.
func TestRunPrintsRecordsOnStdoutSummaryOnStderr(t *testing.T) {
	code, out, errs := runHost(t, "run", "--progress=none", "configs/keyby-running-total.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	re := regexp.MustCompile(`^total:[1-4]> \{"txnId":"t\d+","accountId":"acct-\d+","amount":-?\d+,"currency":"[A-Z]{3}","country":"[A-Z]{2}","ts":\d+\}$`)
	if len(lines) != 1000 {
		t.Fatalf("%d lines on stdout", len(lines))
	}
	for _, l := range lines {
		if !re.MatchString(l) {
			t.Fatalf("not a print line: %q", l)
		}
	}
	for _, want := range []string{`job "keyby-running-total" (streaming)`, "operator", "records in", "skew", "totals  ", "1,000"} {
		if !strings.Contains(errs, want) {
			t.Fatalf("summary lacks %q:\n%s", want, errs)
		}
	}
}

func TestRunSkewConfigShowsSkewBeforeAndAfter(t *testing.T) {
	code, _, errs := runHost(t, "run", "--progress=none", "configs/skew.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	skew := func(op string) float64 {
		m := regexp.MustCompile(`(?m)^` + op + `\s+sum\s+4\s+[\d,]+\s+[\d,]+\s+[\d,]+\s+(\d+\.\d+)`).FindStringSubmatch(errs)
		if m == nil {
			t.Fatalf("no %s row in\n%s", op, errs)
		}
		f, _ := strconv.ParseFloat(m[1], 64)
		return f
	}
	if before, after := skew("totals"), skew("partials"); before < 3 || after > 1.5 {
		t.Fatalf("skew before %.2f, after salting %.2f", before, after)
	}
	if !strings.Contains(errs, `warning: hot key "acct-corp" carries`) || !strings.Contains(errs, "txns -> totals") {
		t.Fatalf("no hot key warning:\n%s", errs)
	}
	if strings.Contains(errs, "txns -> partials") {
		t.Fatalf("the salted edge has no hot key:\n%s", errs)
	}
}

func TestRunLintErrorsExit1(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, `version: 1
name: bad
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 5 }
  - id: total
    sum: n
  - id: out
    sink: { type: print, colour: red }
`)
	code, out, errs := runHost(t, "run", bad)
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	if !strings.Contains(errs, bad+":7:5: ") || !strings.Contains(errs, bad+":9:26: ") {
		t.Fatalf("want every problem as file:line:col, got:\n%s", errs)
	}
}

// TestRunKeepsItsInputFromASubtaskFile: at parallelism 2 a sink with
// path x.jsonl writes x-0.jsonl and x-1.jsonl; run refuses the job before
// opening anything rather than truncate the x-1.jsonl a source reads.
func TestRunKeepsItsInputFromASubtaskFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x-1.jsonl")
	writeFile(t, in, "{\"n\":1}\n")
	p := filepath.Join(dir, "p.yaml")
	writeFile(t, p, `version: 1
name: p
parallelism: 2
operators:
  - id: src
    source: { type: file, path: x-1.jsonl }
  - id: out
    sink: { type: file, path: x.jsonl }
`)
	code, _, errs := runHost(t, "run", "--progress=none", p)
	want := p + ":8:11: operator 'out' writes x-1.jsonl (subtask 1 of path x.jsonl at parallelism 2), which source \"src\" (line 5) reads: the sink would truncate its input"
	if code != 1 || !strings.Contains(errs, want) {
		t.Fatalf("exit %d, want %s in:\n%s", code, want, errs)
	}
	if b, err := os.ReadFile(in); err != nil || string(b) != "{\"n\":1}\n" {
		t.Fatalf("the input is now %q (%v)", b, err)
	}
}

func TestRunFailureNamesOperatorAndKeepsOutput(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in.jsonl"), "{\"n\":1}\n{\"n\":2}\nnot json\n{\"n\":4}\n")
	p := filepath.Join(dir, "p.yaml")
	writeFile(t, p, `version: 1
name: bad-line
operators:
  - id: lines
    source: { type: file, path: in.jsonl }
  - id: out
    sink: { type: print }
`)
	code, out, errs := runHost(t, "run", "--progress=none", p)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	if out != "{\"n\":1}\n{\"n\":2}\n" {
		t.Fatalf("stdout %q: the records before the bad line must be printed", out)
	}
	// where in the pipeline (the source), then where in the data (line 3)
	if !strings.Contains(errs, "error: "+p+`:5:5: operator "lines" (subtask 1/1): `) || !strings.Contains(errs, "in.jsonl:3: malformed JSON") {
		t.Fatalf("stderr:\n%s", errs)
	}
}

// lockedBuffer lets the test read stdout while the job writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

func TestRunCancelStopsCleanly(t *testing.T) {
	t.Chdir("../..")
	dir := t.TempDir()
	p := filepath.Join(dir, "forever.yaml")
	writeFile(t, p, `version: 1
name: forever
parallelism: 2
operators:
  - id: nums
    source: { type: generator, preset: sequence }
  - id: out
    key-by: n
    sink: { type: print }
`)
	ctx, cancel := context.WithCancel(context.Background())
	var out lockedBuffer
	var errs bytes.Buffer
	done := make(chan int)
	go func() { done <- run(ctx, []string{"run", "--progress=none", p}, strings.NewReader(""), &out, &errs) }()
	for out.Len() == 0 {
		time.Sleep(time.Millisecond) // until the job prints
	}
	cancel()
	if code := <-done; code != 130 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	if !strings.Contains(errs.String(), "cancelled") || !strings.Contains(errs.String(), `job "forever"`) {
		t.Fatalf("stderr:\n%s", errs.String())
	}
}

func TestRunRefusesBadFlags(t *testing.T) {
	for _, c := range []struct{ flag, file, want string }{
		{"--progress=fancy", "configs/global.yaml", "--progress"},
		{"--batch-size=-1", "configs/global.yaml", "batch-size"},
		{"--slots=1", "configs/quickstart.yaml", "slots"},
	} {
		t.Run(c.flag, func(t *testing.T) {
			if code, out, errs := runHost(t, "run", c.flag, c.file); code != 1 || out != "" || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d, stdout %q: %s", code, out, errs)
			}
		})
	}
}

func TestProgressLine(t *testing.T) {
	r := &runtime.Result{Job: "j", Duration: 2 * time.Second, Done: 500_000, Total: 2_000_000}
	if got, want := progressLine(r), "j: 500.0K/2.0M records (25%), 250.0K records/s, ETA 6s"; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	r = &runtime.Result{Job: "j", Duration: time.Second, Done: 1234, Total: -1,
		Operators: []runtime.OperatorMetrics{{ID: "a", BackPressuredMs: 900, MaxBackPressuredMs: 300}}}
	if got, want := progressLine(r), "j: 1234 records, 1234 records/s, back-pressured 300ms"; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// TestRunErrorsPointIntoThePipeline: a job's error starts with the place
// in the pipeline file it comes from: the key-by whose field a record
// lacks, the aggregation whose field it lacks.
func TestRunErrorsPointIntoThePipeline(t *testing.T) {
	p := filepath.Join(t.TempDir(), "located.yaml")
	for _, c := range []struct{ keyBy, sum, want string }{
		{"acountId", "amount", `located.yaml:8:5: operator "src" (subtask 1/1): key-by "acountId" of "s": record 1: no key field "acountId"`},
		{"accountId", "amout", `located.yaml:9:5: operator "s" (subtask 1/1): sum: input record 1: no field "amout"`},
	} {
		writeFile(t, p, `version: 1
name: located
operators:
  - id: src
    source: { type: generator, preset: transactions, count: 10 }
  - id: s
    # the key and the field
    key-by: `+c.keyBy+`
    sum: `+c.sum+`
  - id: out
    sink: { type: discard }
`)
		code, _, errs := runPluginCLI(t, "", "run", "--progress", "none", p)
		if code != 1 || !strings.Contains(errs, "error: "+filepath.Dir(p)+string(filepath.Separator)+c.want) {
			t.Errorf("exit %d, want 1 and %q in:\n%s", code, c.want, errs)
		}
	}
}

// TestRunConfigErrorPointsAtTheValue: a plugin refusing a config value in
// open ("config threshold: want a number") is pointed at that value, with
// no summary of a job that never started, in
// the operator's config when it sets the key (overriding the plugin's),
// else in the plugin's.
func TestRunConfigErrorPointsAtTheValue(t *testing.T) {
	dir := t.TempDir()
	wasm, err := os.ReadFile(goPlugin(t, "high-temp"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "high-temp.wasm"), string(wasm))
	p := filepath.Join(dir, "config.yaml")
	for _, c := range []struct{ plugin, op, want string }{
		{"{ threshold: hot }", "", "config.yaml:4:59: plugin \"high-temp\" (operator hot"},
		{"{ threshold: 25 }", "\n    config:\n      threshold: [1]", "config.yaml:11:18: plugin \"high-temp\" (operator hot"},
	} {
		writeFile(t, p, `version: 1
name: config
plugins:
  high-temp: { path: high-temp.wasm, config: `+c.plugin+` }
operators:
  - id: readings
    source: { type: generator, preset: sensors, count: 10 }
  - id: hot
    process: high-temp`+c.op+`
  - id: out
    sink: { type: discard }
`)
		code, _, errs := runPluginCLI(t, "", "run", "--progress", "none", p)
		if code != 1 || !strings.Contains(errs, "error: "+filepath.Join(dir, c.want)) || !strings.Contains(errs, "config threshold: want a number") {
			t.Errorf("exit %d, want 1 and %q in:\n%s", code, c.want, errs)
		}
		// nothing ran: no table of zeros above the error
		if strings.Contains(errs, "records in") {
			t.Errorf("a summary of a job that never started:\n%s", errs)
		}
	}
}

// TestRunEdgePluginConfigErrorPointsAtTheValue: a partitioner (the C
// one) refusing its config at open is pointed at the value in its
// plugin's config.
func TestRunEdgePluginConfigErrorPointsAtTheValue(t *testing.T) {
	dir := t.TempDir()
	wasm, err := os.ReadFile(filepath.Join("..", "..", "plugins", "country", "country-c.wasm"))
	if err != nil {
		t.Fatalf("%v: run make plugins", err)
	}
	writeFile(t, filepath.Join(dir, "country.wasm"), string(wasm))
	p := filepath.Join(dir, "edge.yaml")
	writeFile(t, p, `version: 1
name: edge
plugins:
  country: { path: country.wasm, config: { hot: [1] } }
operators:
  - id: txns
    source: { type: generator, preset: transactions, count: 10 }
  - id: out
    partition: { custom: country, key: country }
    sink: { type: discard }
    parallelism: 2
`)
	code, _, errs := runPluginCLI(t, "", "run", "--progress", "none", p)
	if want := "error: " + p + ":4:49: "; code != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, "config hot: want a string, got a list") {
		t.Errorf("exit %d, want 1 and %q in:\n%s", code, want, errs)
	}
}

// TestConfigErrorPos: "open: " before "config NAME:" (a plugin's own
// refusal, prefixed as the SDKs prefix open's errors) still names NAME;
// other statuses and texts point nowhere.
func TestConfigErrorPos(t *testing.T) {
	p, err := pipeline.Parse("p.yaml", []byte("version: 1\nname: p\nplugins:\n  e: { path: e.wasm, config: { bank: 7 } }\noperators:\n  - { id: s, source: { type: stdin } }\n  - { id: m, map: e }\n  - { id: o, sink: { type: discard } }\n"), pipeline.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		status abi.Status
		text   string
		line   int
	}{
		{abi.StatusConfig, "config bank: want a string", 4},
		{abi.StatusConfig, "open: config bank: want a string", 4},
		{abi.StatusConfig, "config other: x", 0},
		{abi.StatusConfig, "bank is wrong", 0},
		{abi.StatusConfig, "bank: too high", 0}, // a key but no "config " before it
		{abi.StatusConfig, "config: integer out of range", 0},
		{abi.StatusUser, "config bank: want a string", 0},
	} {
		pe := &plugin.PluginError{Plugin: "e", Operator: "m", Status: c.status, Text: c.text}
		if pos := configErrorPos(p, p.Operator("m"), pe); pos.Line != c.line {
			t.Errorf("%v %q: line %d, want %d", c.status, c.text, pos.Line, c.line)
		}
	}
}

// TestRunStdinRecordsFlowBeforeEndOfInput: a record piped into a stdin
// source is printed while the input stays open (tail -f log | host run);
// the source held records until 512 of them or end of input.
func TestRunStdinRecordsFlowBeforeEndOfInput(t *testing.T) {
	t.Chdir("../..")
	p := filepath.Join(t.TempDir(), "live.yaml")
	writeFile(t, p, "version: 1\nname: live\noperators:\n  - { id: in, source: { type: stdin } }\n  - { id: out, sink: { type: print } }\n")
	pr, pw := io.Pipe()
	var out lockedBuffer
	var errs bytes.Buffer
	done := make(chan int)
	go func() { done <- run(context.Background(), []string{"run", "--progress=none", p}, pr, &out, &errs) }()
	for i := 1; i <= 2; i++ {
		if _, err := fmt.Fprintf(pw, "{\"i\":%d}\n", i); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("{\"i\":%d}\n", i)
		for deadline := time.Now().Add(10 * time.Second); !strings.HasSuffix(out.String(), want); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("record %d not printed while stdin is open; stdout %q", i, out.String())
			}
		}
	}
	pw.Close()
	if code := <-done; code != 0 || out.String() != "{\"i\":1}\n{\"i\":2}\n" {
		t.Fatalf("exit %d, stdout %q: %s", code, out.String(), errs.String())
	}
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// buildHost builds the binary, for the tests that signal a real process.
func buildHost(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "host")
	build := exec.Command(filepath.Join(goruntime.GOROOT(), "bin", "go"), "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// stderrLines sends the lines read from r on the channel it returns,
// which is closed when r ends.
func stderrLines(r io.Reader) <-chan string {
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		s := bufio.NewScanner(r)
		for s.Scan() {
			lines <- s.Text()
		}
	}()
	return lines
}

// startForever starts the binary on an unbounded job whose print sink
// writes to the returned pipe, and waits for its first record. Its stderr
// lines arrive on the channel, which is closed when stderr closes.
func startForever(t *testing.T, bin string) (*exec.Cmd, *os.File, <-chan string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "forever.yaml")
	writeFile(t, p, "version: 1\nname: forever\nparallelism: 2\noperators:\n  - id: nums\n    source: { type: generator, preset: sequence }\n  - id: out\n    sink: { type: print }\n")
	stdout, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--progress=none", p)
	cmd.Dir = filepath.Dir(p)
	cmd.Stdout = w
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); stdout.Close() })
	lines := stderrLines(stderr)
	if _, err := stdout.Read(make([]byte, 1)); err != nil {
		t.Fatalf("no record on stdout: %v", err)
	}
	return cmd, stdout, lines
}

// waitLine waits up to 10 s for a stderr line containing want.
func waitLine(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stderr closed without %q", want)
			}
			if strings.Contains(l, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q on stderr in 10 s", want)
		}
	}
}

// TestRunSecondSignalQuitsAtOnce: a print sink blocked on a full stdout
// pipe keeps the job from ending when the first SIGINT cancels it; the
// run says so, and a second SIGINT ends the process at once.
func TestRunSecondSignalQuitsAtOnce(t *testing.T) {
	cmd, _, lines := startForever(t, buildHost(t)) // nobody reads stdout any more: the pipe fills
	time.Sleep(200 * time.Millisecond)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitLine(t, lines, `cancelling job "forever" (interrupt again to quit at once)`)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("exited (%v) with its sink blocked: the test shows nothing", err)
	case <-time.After(500 * time.Millisecond):
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
			t.Fatalf("ended by %v, want killed by SIGINT", cmd.ProcessState)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second SIGINT did not end the process")
	}
}

// TestRunSignalCancelsCleanly: when nothing blocks, the first SIGINT or
// SIGTERM cancels the job, which ends with its summary and exit
// 128+signal.
func TestRunSignalCancelsCleanly(t *testing.T) {
	bin := buildHost(t)
	for _, c := range []struct {
		sig        syscall.Signal
		code       int
		hint, name string
	}{
		{syscall.SIGINT, 130, "interrupt again to quit at once", "interrupt"},
		{syscall.SIGTERM, 143, "send SIGTERM again to quit at once", "terminated"},
	} {
		t.Run(c.sig.String(), func(t *testing.T) {
			cmd, stdout, lines := startForever(t, bin)
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			var errs strings.Builder
			for l := range lines {
				errs.WriteString(l + "\n")
			}
			err := cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != c.code {
				t.Fatalf("exit %d (%v), want %d:\n%s", code, err, c.code, errs.String())
			}
			for _, want := range []string{`cancelling job "forever" (` + c.hint + `)`, `job "forever" (streaming)`, "records in",
				`cancelled: job "forever" cancelled: ` + c.name + ` signal received`} {
				if !strings.Contains(errs.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, errs.String())
				}
			}
		})
	}
}

// TestRunCancelledWhileLoadingPlugins: a signal while the plugins load is
// a cancellation (exit 128+signal, "cancelled: ..."), not an error, and
// the message names the plugin once.
func TestRunCancelledWhileLoadingPlugins(t *testing.T) {
	t.Chdir("../..")
	t.Setenv("SLUICE_CACHE_DIR", t.TempDir())
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&signalError{syscall.SIGTERM}) // before run reaches the plugins
	var out, errs bytes.Buffer
	code := run(ctx, []string{"run", "--progress=none", "configs/languages.yaml"}, strings.NewReader(""), &out, &errs)
	if code != 143 || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, want 143:\n%s", code, out.String(), errs.String())
	}
	got := errs.String()
	if !strings.Contains(got, `cancelling job "languages" (send SIGTERM again to quit at once)`) ||
		!strings.Contains(got, `cancelled: job "languages" while loading plugins: `) || strings.Contains(got, "error:") {
		t.Fatalf("stderr:\n%s", got)
	}
	if n := strings.Count(got, `plugin "valid"`); n > 1 {
		t.Fatalf("the plugin is named %d times:\n%s", n, got)
	}
}

// TestRunTakesEverySettingAsAFlag: a host setting with no flag of its own
// in run's code (max-output-bytes) is a flag all the same, and reaches
// the plugin host.
func TestRunTakesEverySettingAsAFlag(t *testing.T) {
	t.Chdir("../..")
	t.Setenv("SLUICE_CACHE_DIR", t.TempDir())
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"run", "--progress=none", "--max-output-bytes=100", "configs/quickstart.yaml"}, strings.NewReader(""), &out, &errs)
	if code != 1 || !strings.Contains(errs.String(), "past the limit of 100 bytes per call (the max-output-bytes setting;") {
		t.Fatalf("exit %d:\n%s", code, errs.String())
	}
}

// TestRunBatchReadsStdin: a BATCH job reads stdin to the end of its input
// and prints only each key's final sum, whether the pipeline or --mode
// asks for batch; AUTOMATIC streams stdin (a plan cannot tell a pipe from
// a terminal) and prints the rolling sums.
func TestRunBatchReadsStdin(t *testing.T) {
	dir := t.TempDir()
	pipe := func(mode string) string {
		p := filepath.Join(dir, mode+".yaml")
		writeFile(t, p, "version: 1\nname: sums\nmode: "+mode+`
operators:
  - id: src
    source: { type: stdin }
  - id: s
    key-by: k
    sum: n
  - id: out
    sink: { type: print }
`)
		return p
	}
	in := `{"k":"a","n":1}` + "\n" + `{"k":"b","n":5}` + "\n" + `{"k":"a","n":2}` + "\n"
	final := `{"k":"b","n":5}` + "\n" + `{"k":"a","n":3}` + "\n" // key by key, in the order of their key groups
	rolling := `{"k":"a","n":1}` + "\n" + `{"k":"b","n":5}` + "\n" + `{"k":"a","n":3}` + "\n"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--progress=none", pipe("batch")}, final},
		{[]string{"run", "--progress=none", "--mode", "batch", pipe("streaming")}, final},
		{[]string{"run", "--progress=none", pipe("automatic")}, rolling},
		{[]string{"run", "--progress=none", "--mode", "streaming", pipe("batch")}, rolling},
	} {
		code, out, errs := runHostStdin(t, in, c.args...)
		if code != 0 || out != c.want {
			t.Errorf("%v: exit %d\n%s\ngot:\n%s\nwant:\n%s", c.args, code, errs, out, c.want)
		}
	}
	if code, _, errs := runHostStdin(t, in, "run", "--mode", "bogus", pipe("batch")); code == 0 || !strings.Contains(errs, `unknown --mode "bogus": use streaming, batch or automatic`) {
		t.Errorf("--mode bogus: exit %d, %s", code, errs)
	}
}

// TestRunBatchFailureEmitsNoFinals: a BATCH aggregation emits each key's
// final value at the end of its input; when the job fails upstream (a
// malformed line) its input never ends cleanly, and it emits nothing: a
// "final" sum of the records before the failure (3 for a true 103) would
// pass for a result. Flink cancels the other tasks of a failed job.
func TestRunBatchFailureEmitsNoFinals(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in.jsonl"), `{"k":"a","v":1}`+"\n"+`{"k":"a","v":2}`+"\nbad\n"+`{"k":"a","v":100}`+"\n")
	p := filepath.Join(dir, "p.yaml")
	writeFile(t, p, `version: 1
name: bf
mode: batch
operators:
  - id: src
    source: { type: file, path: in.jsonl }
  - id: s
    key-by: k
    sum: v
  - id: out
    sink: { type: print }
`)
	code, out, errs := runHost(t, "run", "--progress=none", p)
	if code != 1 || out != "" || !strings.Contains(errs, "in.jsonl:3: malformed JSON") {
		t.Errorf("exit %d, stdout %q (want none), stderr:\n%s", code, out, errs)
	}
}

// TestSinkThroughALinkToItsSource: a file sink whose path is a link to the
// file a source reads would truncate the input (the pipeline's own check
// compares paths): lint and run refuse it, and the input is intact.
func TestSinkThroughALinkToItsSource(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "same.jsonl")
	writeFile(t, in, `{"k":"a","v":1}`+"\n")
	if err := os.Symlink("same.jsonl", filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "p.yaml")
	writeFile(t, p, "version: 1\nname: same\noperators:\n  - id: src\n    source: { type: file, path: same.jsonl }\n  - id: o\n    sink: { type: file, path: link.jsonl }\n")
	want := `p.yaml:7:11: sink "o" writes link.jsonl, which is the file source "src" (line 4) reads as same.jsonl (a link to it): the sink would truncate its input`
	for _, cmd := range []string{"lint", "run"} {
		code, out, errs := runHost(t, cmd, p)
		if code != 1 || !strings.Contains(out+errs, want) {
			t.Errorf("%s: exit %d\n%s%s\nwant %s", cmd, code, out, errs, want)
		}
	}
	if b, err := os.ReadFile(in); err != nil || len(b) == 0 {
		t.Errorf("the input is %d bytes after run (%v)", len(b), err)
	}
}

// TestRunCSVNullLiteral: a job reads CSV from stdin with null-literal NULL
// and writes CSV with null-literal "-": a null stays a null (print shows
// it), "" stays "", and a CSV sink writes each null as its literal.
func TestRunCSVNullLiteral(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "nulls.yaml")
	writeFile(t, p, `version: 1
name: nulls
operators:
  - id: src
    source: { type: stdin, format: csv, null-literal: "NULL" }
  - id: show
    sink: { type: print }
  - id: out
    input: src
    sink: { type: file, path: out.csv, null-literal: "-" }
`)
	in := "id,note\n1,NULL\n2,\n3,x\n"
	code, out, errs := runHostStdin(t, in, "run", "--progress=none", p)
	if want := `{"id":1,"note":null}` + "\n" + `{"id":2,"note":""}` + "\n" + `{"id":3,"note":"x"}` + "\n"; code != 0 || out != want {
		t.Fatalf("exit %d\n%s\ngot:\n%s\nwant:\n%s", code, errs, out, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out.csv"))
	if want := "id,note\n1,-\n2,\n3,x\n"; err != nil || string(b) != want {
		t.Errorf("out.csv: %q (%v), want %q", b, err, want)
	}
}
