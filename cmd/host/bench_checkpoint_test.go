package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The benchmarks of issue 25 that need the whole `host run`: the job
// master writing every checkpoint to disk, and a real process killed. They
// report figures only; nothing here asserts a time.

// quickstartJob writes configs/quickstart.yaml into dir with count
// records, a discard sink and, when ckpt, exactly-once checkpoints every
// second into dir/ckpt.
func quickstartJob(b *testing.B, dir string, count int, ckpt bool) string {
	b.Helper()
	src, err := os.ReadFile("../../configs/quickstart.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for _, pl := range []string{"valid", "enrich"} {
		w, err := os.ReadFile(filepath.Join("../../plugins", pl, pl+".wasm"))
		if err != nil {
			b.Fatalf("%v: run make plugins", err)
		}
		if err := os.WriteFile(filepath.Join(dir, pl+".wasm"), w, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s := strings.NewReplacer("../plugins/valid/", "", "../plugins/enrich/", "").Replace(string(src))
	s = strings.Replace(s, "count: 1000,", fmt.Sprintf("count: %d,", count), 1)
	s = strings.Replace(s, "sink: { type: print, prefix: totals }", "sink: { type: discard }", 1)
	if ckpt {
		s = strings.Replace(s, "mode: streaming\n", "mode: streaming\ncheckpointing: { interval: 1s, mode: exactly-once, storage: ckpt }\n", 1)
	}
	file := filepath.Join(dir, "quickstart.yaml")
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		b.Fatal(err)
	}
	return file
}

var jobDuration = regexp.MustCompile(`(?m)^job "quickstart" \(streaming\): (\S+)$`)

// BenchmarkRunQuickstartCheckpoints runs the quickstart (b.N records)
// through `host run` in this process, without checkpoints and with
// exactly-once checkpoints every second written by the job master
// (none, exactly-once-1s). records/s is over the job's own duration, from
// the summary, so loading the plugins is left out; checkpoints is how
// many completed.
func BenchmarkRunQuickstartCheckpoints(b *testing.B) {
	for _, c := range []struct {
		name string
		ckpt bool
	}{{"none", false}, {"exactly-once-1s", true}} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			file := quickstartJob(b, dir, b.N, c.ckpt)
			var out, errs bytes.Buffer
			b.ResetTimer()
			code := run(context.Background(), []string{"run", "--progress=none", file}, strings.NewReader(""), &out, &errs)
			b.StopTimer()
			if code != 0 {
				b.Fatalf("exit %d\n%s", code, errs.String())
			}
			m := jobDuration.FindStringSubmatch(errs.String())
			if m == nil {
				b.Fatalf("no job duration in\n%s", errs.String())
			}
			d, err := time.ParseDuration(strings.ReplaceAll(m[1], "µ", "u"))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/d.Seconds(), "records/s")
			if c.ckpt {
				n := regexp.MustCompile(`numberOfCompletedCheckpoints (\d+)`).FindStringSubmatch(errs.String())
				if n == nil {
					b.Fatalf("no checkpoint statistics in\n%s", errs.String())
				}
				var k float64
				fmt.Sscan(n[1], &k)
				b.ReportMetric(k, "checkpoints")
			}
		})
	}
}

// BenchmarkRestartAfterKill: a checkpointed keyed job printing every
// running total is killed with SIGKILL once a checkpoint completed; each
// iteration times a new `host run --from latest` from its start to the
// first record on its stdout (restart-ms): the process start, the plugin
// load, the restore, and the first batch.
func BenchmarkRestartAfterKill(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "host")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	dir := b.TempDir()
	wasm, err := os.ReadFile("../../plugins/reduce-sum/reduce-sum.wasm")
	if err != nil {
		b.Fatalf("%v: run make plugins", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "reduce-sum.wasm"), wasm, 0o644); err != nil {
		b.Fatal(err)
	}
	job := `version: 1
name: restart
parallelism: 2
checkpointing: { interval: 100ms, storage: ckpt }
restart-strategy: none
plugins:
  sum: { path: reduce-sum.wasm }
operators:
  - id: txns
    source: { type: generator, preset: transactions, rate: 5000, seed: 3, accounts: 1000 }
  - id: totals
    key-by: accountId
    reduce: sum
  - id: out
    sink: { type: print }
`
	if err := os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(job), 0o644); err != nil {
		b.Fatal(err)
	}
	// start runs the job and returns once its first record is printed
	start := func(args ...string) (*exec.Cmd, time.Duration) {
		cmd := exec.Command(bin, append([]string{"run", "--progress=none"}, append(args, "job.yaml")...)...)
		cmd.Dir = dir
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		s := bufio.NewScanner(stdout)
		if !s.Scan() {
			b.Fatalf("no output: %v", cmd.Wait())
		}
		d := time.Since(t0)
		go func() {
			for s.Scan() {
			}
		}()
		return cmd, d
	}
	kill := func(cmd *exec.Cmd) {
		// once a checkpoint completed: a restart has one to restore
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			if m, _ := filepath.Glob(filepath.Join(dir, "ckpt", "restart", "chk-*", "_metadata")); len(m) > 0 {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("no checkpoint in a minute")
			}
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
	cmd, _ := start()
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		kill(cmd)
		var d time.Duration
		cmd, d = start("--from", "latest")
		total += d
	}
	b.StopTimer()
	kill(cmd)
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "restart-ms")
}
