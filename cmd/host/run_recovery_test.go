package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The recovery tests run a real `host run` process for each failure case
// of issue 25: a changed max parallelism, a damaged latest checkpoint, a
// checkpoint that expires, a rescale through two savepoints, and a plugin
// that traps in its snapshot. What a job must have produced is computed
// from the generator's raw records (a run of the source alone), never
// from the output of the job under test.

// recoveryJob is a job folder for a host binary.
type recoveryJob struct {
	t   *testing.T
	bin string
	dir string
}

func newRecoveryJob(t *testing.T, bin string, wasm ...string) *recoveryJob {
	t.Helper()
	dir := t.TempDir()
	for _, w := range wasm {
		b, err := os.ReadFile(filepath.Join("../../plugins", w))
		if err != nil {
			t.Fatalf("%v: run make plugins (plugins-wat for the wat/ test plugins)", err)
		}
		writeFile(t, filepath.Join(dir, filepath.Base(w)), string(b))
	}
	return &recoveryJob{t: t, bin: bin, dir: dir}
}

// run runs host run in the job's folder to its end.
func (j *recoveryJob) run(args ...string) (code int, stderr string) {
	j.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // killed past it: the test fails, never hangs
	defer cancel()
	cmd := exec.CommandContext(ctx, j.bin, append([]string{"run", "--progress=none"}, args...)...)
	cmd.Dir = j.dir
	var e bytes.Buffer
	cmd.Stderr = &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), e.String()
	} else if err != nil {
		j.t.Fatal(err)
	}
	return 0, e.String()
}

// stopWithSavepoint starts host run, lets it run for d, sends SIGTERM and
// returns the savepoint it stopped with.
func (j *recoveryJob) stopWithSavepoint(d time.Duration, args ...string) string {
	j.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // killed past it: the test fails, never hangs
	defer cancel()
	cmd := exec.CommandContext(ctx, j.bin, append([]string{"run", "--progress=none", "--savepoint-dir", "sp"}, args...)...)
	cmd.Dir = j.dir
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		j.t.Fatal(err)
	}
	time.Sleep(d)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		j.t.Fatalf("stop-with-savepoint: %v\n%s", err, e.String())
	}
	m := regexp.MustCompile(`stopped with savepoint (\S+) `).FindStringSubmatch(e.String())
	if m == nil {
		j.t.Fatalf("no savepoint: the job ended before SIGTERM?\n%s", e.String())
	}
	return m[1]
}

// txn is the part of a transactions record the tests add up.
type txn struct {
	Account string `json:"accountId"`
	Amount  int64  `json:"amount"`
	file    string // the part file it was read from
}

// lines reads the committed part files of the sink whose path is
// out/<name>.jsonl, subtask by subtask and part by part in order.
func (j *recoveryJob) lines(name string) []txn {
	j.t.Helper()
	parts, _ := filepath.Glob(filepath.Join(j.dir, "out", name+"-*.jsonl"))
	if one := filepath.Join(j.dir, "out", name+".jsonl"); len(parts) == 0 {
		parts = []string{one} // the sink without checkpoints writes one file
	}
	num := regexp.MustCompile(`-(\d+)-(\d+)\.jsonl$`)
	key := func(p string) [2]int {
		m := num.FindStringSubmatch(p)
		if m == nil {
			return [2]int{}
		}
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		return [2]int{a, b}
	}
	slices.SortFunc(parts, func(a, b string) int {
		ka, kb := key(a), key(b)
		if ka[0] != kb[0] {
			return ka[0] - kb[0]
		}
		return ka[1] - kb[1]
	})
	var out []txn
	for _, p := range parts {
		f, err := os.Open(p)
		if err != nil {
			j.t.Fatal(err)
		}
		s := bufio.NewScanner(f)
		for s.Scan() {
			r := txn{file: filepath.Base(p)}
			if err := json.Unmarshal(s.Bytes(), &r); err != nil {
				j.t.Fatalf("%s: %v: %q", p, err, s.Text())
			}
			out = append(out, r)
		}
		f.Close()
	}
	return out
}

// parts maps the committed part files of the sink whose path is
// out/<name>.jsonl to their content.
func (j *recoveryJob) parts(name string) map[string]string {
	j.t.Helper()
	files, _ := filepath.Glob(filepath.Join(j.dir, "out", name+"-*.jsonl"))
	m := map[string]string{}
	for _, f := range files {
		m[filepath.Base(f)] = readFileT(j.t, f)
	}
	return m
}

// rawTransactions are the records of source, in sequence order: a run of
// the source alone at parallelism 1 into a file.
func rawTransactions(t *testing.T, bin, source string) []txn {
	t.Helper()
	j := newRecoveryJob(t, bin)
	writeFile(t, filepath.Join(j.dir, "raw.yaml"), `version: 1
name: raw
parallelism: 1
operators:
  - id: txns
    source: `+source+`
  - id: out
    sink: {type: file, path: out/raw.jsonl}
`)
	if code, errs := j.run("raw.yaml"); code != 0 {
		t.Fatalf("the raw run: exit %d\n%s", code, errs)
	}
	return j.lines("raw")
}

// runningTotals is what a keyed running sum of amount emits for records
// in order: one (account, total so far) per record.
func runningTotals(records []txn) []txn {
	sum := map[string]int64{}
	out := make([]txn, len(records))
	for i, r := range records {
		sum[r.Account] += r.Amount
		out[i] = txn{Account: r.Account, Amount: sum[r.Account]}
	}
	return out
}

// unfiled is s without the files it was read from.
func unfiled(s []txn) []txn {
	out := make([]txn, len(s))
	for i, r := range s {
		out[i] = txn{Account: r.Account, Amount: r.Amount}
	}
	return out
}

// sortedTxns is s without the files, sorted.
func sortedTxns(s []txn) []txn {
	s = unfiled(s)
	slices.SortFunc(s, func(a, b txn) int {
		if c := strings.Compare(a.Account, b.Account); c != 0 {
			return c
		}
		return int(a.Amount - b.Amount)
	})
	return s
}

const recoverySource = `{ type: generator, preset: transactions, count: %d, rate: %d, seed: 5, accounts: 20 }`

func TestRunRecoveryFailureCases(t *testing.T) {
	bin := buildHost(t)

	// A checkpoint written at max parallelism 128 (the default) is refused
	// at 64 before anything loads, naming the operator and both values;
	// a damaged newest checkpoint is passed over by --from latest, which
	// restores the one before it, and refused by --from naming the file.
	t.Run("max parallelism and damaged checkpoints", func(t *testing.T) {
		j := newRecoveryJob(t, bin)
		job := func(extra string) string {
			return `version: 1
name: dmg
parallelism: 2
` + extra + `checkpointing: {interval: 100ms, storage: ckpt, retain: 3}
restart-strategy: none
operators:
  - id: txns
    source: ` + fmt.Sprintf(recoverySource, 3000, 3000) + `
  - id: totals
    key-by: accountId
    sum: amount
  - id: out
    sink: {type: file, path: out/totals.jsonl}
`
		}
		writeFile(t, filepath.Join(j.dir, "job.yaml"), job(""))
		writeFile(t, filepath.Join(j.dir, "job64.yaml"), job("max-parallelism: 64\n"))
		if code, errs := j.run("job.yaml"); code != 0 {
			t.Fatalf("exit %d\n%s", code, errs)
		}
		chks := checkpointDirs(t, filepath.Join(j.dir, "ckpt", "dmg"))
		if len(chks) < 3 {
			t.Fatalf("%d checkpoints retained, want 3: %v", len(chks), chks)
		}
		newest, previous := chks[len(chks)-1], chks[len(chks)-2]
		rel := func(p string) string { r, _ := filepath.Rel(j.dir, p); return r }

		code, errs := j.run("--from", "latest", "job64.yaml")
		for _, want := range []string{"--from latest: operator \"", "max parallelism differs from the checkpoint's", rel(newest), "with max parallelism 128, the job has 64", "set max-parallelism: 128"} {
			if code != 1 || !strings.Contains(errs, want) {
				t.Fatalf("a changed max parallelism: exit %d, want 1 and %q\n%s", code, want, errs)
			}
		}
		if strings.Contains(errs, "job \"dmg\"") {
			t.Fatalf("the refused restore started the job:\n%s", errs)
		}

		// a truncated state file in the newest
		state := filepath.Join(newest, "totals-1.state")
		if err := os.Truncate(state, 20); err != nil {
			t.Fatal(err)
		}
		code, errs = j.run("--from", "latest", "job.yaml")
		if code != 0 || !strings.Contains(errs, "warning: --from latest: skipping "+rel(state)+": truncated: 20 bytes, the metadata says") ||
			!strings.Contains(errs, "restoring from "+rel(previous)+" (checkpoint ") {
			t.Fatalf("--from latest past a truncated state file: exit %d, want 0, a warning naming %s and a restore of %s\n%s", code, rel(state), rel(previous), errs)
		}
		code, errs = j.run("--from", rel(newest), "job.yaml")
		if code != 1 || !strings.Contains(errs, "error: --from "+rel(newest)+": "+rel(state)+": truncated: 20 bytes") {
			t.Fatalf("--from the truncated one: exit %d\n%s", code, errs)
		}

		// a garbled _metadata: the restore above wrote newer checkpoints,
		// so damage the newest of those and its predecessor takes over
		chks = checkpointDirs(t, filepath.Join(j.dir, "ckpt", "dmg"))
		newest = chks[len(chks)-1]
		meta := filepath.Join(newest, "_metadata")
		b, err := os.ReadFile(meta)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x55
		writeFile(t, meta, string(b))
		code, errs = j.run("--from", rel(newest), "job.yaml")
		if code != 1 || !strings.Contains(errs, "error: --from "+rel(newest)+": "+rel(meta)+": checksum mismatch") {
			t.Fatalf("--from a garbled _metadata: exit %d\n%s", code, errs)
		}
		code, errs = j.run("--from", "latest", "job.yaml")
		if code != 0 || !strings.Contains(errs, "warning: --from latest: skipping "+rel(meta)+": checksum mismatch") || strings.Contains(errs, "restoring from "+rel(newest)+" ") {
			t.Fatalf("--from latest past a garbled _metadata: exit %d\n%s", code, errs)
		}
	})

	// A plugin whose first snapshot takes 500 ms holds up checkpoints
	// with a 100 ms timeout: they expire (counted, within
	// tolerable-failures), the next one completes, and the job goes on
	// to commit every record once.
	t.Run("checkpoint timeout", func(t *testing.T) {
		src := fmt.Sprintf(recoverySource, 3000, 2000)
		want := rawTransactions(t, bin, src)
		j := newRecoveryJob(t, bin, "wat/slow-snapshot.wasm")
		writeFile(t, filepath.Join(j.dir, "job.yaml"), `version: 1
name: slow
parallelism: 1
checkpointing: {interval: 200ms, timeout: 100ms, tolerable-failures: 10, storage: ckpt}
restart-strategy: none
plugins:
  slow: { path: slow-snapshot.wasm, grant: [clock] }
operators:
  - id: txns
    source: `+src+`
  - id: snap
    map: slow
  - id: out
    sink: {type: file, path: out/txns.jsonl}
`)
		code, errs := j.run("--log-level", "info", "job.yaml")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errs)
		}
		m := regexp.MustCompile(`numberOfCompletedCheckpoints (\d+), numberOfFailedCheckpoints (\d+),.* restarts 0`).FindStringSubmatch(errs)
		if m == nil || m[1] == "0" || m[2] == "0" || !strings.Contains(errs, "expired before completing: not acknowledged by txns[0] within 100ms") {
			t.Fatalf("want expired checkpoints, then completed ones, and no restart:\n%s", errs)
		}
		if got := unfiled(j.lines("txns")); !slices.Equal(got, unfiled(want)) {
			t.Fatalf("committed %d records, want the source's %d in order", len(got), len(want))
		}
	})

	// A savepoint at parallelism 2, restored at 3, a savepoint of that,
	// restored at 1: every record is summed exactly once, and the last
	// total of each account is the sum of its amounts in the source.
	t.Run("rescale through savepoints", func(t *testing.T) {
		src := fmt.Sprintf(recoverySource, 30000, 3000)
		raw := rawTransactions(t, bin, src)
		want := map[string]int64{}
		for _, r := range raw {
			want[r.Account] += r.Amount
		}
		j := newRecoveryJob(t, bin)
		job := func(par int) string {
			name := fmt.Sprintf("p%d.yaml", par)
			writeFile(t, filepath.Join(j.dir, name), fmt.Sprintf(`version: 1
name: rescale
parallelism: %d
checkpointing: {interval: 300ms, storage: ckpt}
restart-strategy: none
operators:
  - id: txns
    source: %s
  - id: totals
    key-by: accountId
    sum: amount
  - id: out
    sink: {type: file, path: out/totals.jsonl}
`, par, src))
			return name
		}
		sp1 := j.stopWithSavepoint(2*time.Second, job(2))
		sp2 := j.stopWithSavepoint(2*time.Second, "--from", sp1, job(3))
		before := j.parts("totals")
		code, errs := j.run("--from", sp2, job(1))
		if code != 0 || !strings.Contains(errs, "restoring from "+sp2+" (savepoint ") {
			t.Fatalf("the last run: exit %d\n%s", code, errs)
		}
		after := j.parts("totals")
		for name, content := range before {
			if after[name] != content {
				t.Fatalf("the last run changed %s, committed before it", name)
			}
		}
		if n := len(j.lines("totals")); n != len(raw) {
			t.Fatalf("%d totals committed over the three runs, want one per record: %d", n, len(raw))
		}
		got := map[string]int64{}
		for _, r := range j.lines("totals-0") { // the last run's one subtask, part by part
			if _, old := before[r.file]; !old {
				got[r.Account] = r.Amount // each account's last line is its final total
			}
		}
		if len(got) != len(want) {
			t.Fatalf("the last run has totals of %d accounts, want %d", len(got), len(want))
		}
		for acct, w := range want {
			if got[acct] != w {
				t.Errorf("%s: final total %d, want %d", acct, got[acct], w)
			}
		}
	})

	// A plugin whose second snapshot traps: the checkpoint is declined
	// with an error naming the plugin, the operator and the subtask, the
	// job restarts from the first checkpoint, as its fixed-delay strategy
	// says, and what the sink committed is every running total once.
	t.Run("plugin traps in its snapshot", func(t *testing.T) {
		src := fmt.Sprintf(recoverySource, 4000, 2000)
		want := sortedTxns(runningTotals(rawTransactions(t, bin, src)))
		j := newRecoveryJob(t, bin, "wat/trap-snapshot.wasm")
		writeFile(t, filepath.Join(j.dir, "job.yaml"), `version: 1
name: trap
parallelism: 2
checkpointing: {interval: 200ms, storage: ckpt}
restart-strategy: {type: fixed-delay, attempts: 2, delay: 100ms}
plugins:
  trap: { path: trap-snapshot.wasm }
operators:
  - id: txns
    source: `+src+`
    parallelism: 1
  - id: totals
    key-by: accountId
    sum: amount
  - id: snap
    map: trap
  - id: out
    sink: {type: file, path: out/totals.jsonl}
`)
		code, errs := j.run("--log-level", "info", "job.yaml")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errs)
		}
		for _, want := range []string{
			"checkpoint 2 aborted: declined by a task",
			`plugin \"trap\" (operator snap, subtask `,
			"export sluice_snapshot: wasm trap: unreachable",
			"job failed; restarting",
			"restarts 1\n",
		} {
			if !strings.Contains(errs, want) {
				t.Fatalf("stderr lacks %q:\n%s", want, errs)
			}
		}
		if got := sortedTxns(j.lines("totals")); !slices.Equal(got, want) {
			t.Fatalf("committed %d running totals, want exactly the %d of the records", len(got), len(want))
		}
	})
}

// checkpointDirs lists the chk-<id> folders in dir, by id.
func checkpointDirs(t *testing.T, dir string) []string {
	t.Helper()
	chks, _ := filepath.Glob(filepath.Join(dir, "chk-*"))
	id := func(p string) int {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(p), "chk-"))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	slices.SortFunc(chks, func(a, b string) int { return id(a) - id(b) })
	return chks
}
