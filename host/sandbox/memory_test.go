package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// Row 2: a memory bomb's growth is refused at the configured page limit,
// with a clear "memory limit" error; the host's resident memory stays
// bounded over repeated bombs.
func TestSandbox02_MemoryBomb(t *testing.T) {
	h := tenant(t, func(c *plugin.Config) { c.MemoryLimitPages = 64 }) // 4 MiB
	before := rss(t)
	for i := 0; i < 5; i++ {
		j := runYAML(t, h, t.TempDir(), poisonJob(`[{n: 1}, {n: 2, c: grow}]`, "fail"), runtime.Options{}, nil)
		failed(t, h, j)
		wantWords(t, j.err, `plugin "poison" (operator m, subtask 1/1) export sluice_process at input record 2`,
			"memory limit: guest memory at 64 of 64 pages (4 MiB, the memory-pages setting) could not grow", "wasm trap")
		if !errors.Is(j.err, plugin.ErrMemoryLimit) {
			t.Errorf("errors.Is(err, ErrMemoryLimit) is false")
		}
	}
	if grown := rss(t) - before; grown > 64<<20 {
		t.Errorf("resident memory grew by %d MiB over 5 bombs of a 4 MiB limit", grown>>20)
	}
	healthy(t, h)
}

// rss is the process's resident set size, from /proc/self/status.
func rss(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatalf("resident memory is read from /proc/self/status (Linux): %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// Row 3: a module declaring more initial memory than allowed is refused at
// load, by the header check lint runs (plugin.CheckFile), and when a job
// names it, with both numbers. (`host lint` and `host plugin inspect`:
// cmd/host TestLintPluginMemoryAboveLimit, TestInspectPluginMemoryAboveLimit.)
func TestSandbox03_InitialMemoryAboveLimit(t *testing.T) {
	h := tenant(t, func(c *plugin.Config) { c.MemoryLimitPages = 256 })
	const want = "declares 300 pages (18.8 MiB) of initial memory, above the host's limit of 256 pages (16 MiB)"
	_, err := h.LoadFile(context.Background(), wasm(t, "bigmem"))
	wantWords(t, err, `plugin "bigmem"`, "cannot be loaded: "+want)
	problems, err := plugin.CheckFile(wasm(t, "bigmem"), h.Config())
	if err != nil || strings.Join(problems, "\n") != want {
		t.Errorf("CheckFile: %v, %q", err, problems)
	}
	j := runYAML(t, h, t.TempDir(), `version: 1
name: big
plugins:
  big: { path: {wasm:bigmem} }
operators:
  - { id: src, source: { type: elements, values: [1] } }
  - { id: m, map: big }
  - { id: out, sink: { type: discard } }
`, runtime.Options{}, nil)
	wantWords(t, j.err, `plugin "big"`, want)
	healthy(t, h)
}

// Row 15: huge records, and batches built from many large records, are
// cut by bytes as well as by count, so memory stays bounded: 300 records
// of 100 KB (30 MB) pass through a plugin limited to 4 MiB of memory, over
// a file source and a network edge, each record once.
func TestSandbox15_HugeRecords(t *testing.T) {
	h := tenant(t, func(c *plugin.Config) { c.MemoryLimitPages = 64 })
	dir := t.TempDir()
	pad := strings.Repeat("x", 100_000)
	var in strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&in, "{\"n\":%d,\"pad\":%q}\n", i, pad)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.jsonl"), []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	j := runYAML(t, h, dir, `version: 1
name: huge
plugins:
  poison: { path: {wasm:poison} }
operators:
  - { id: src, source: { type: file, path: big.jsonl } }
  - { id: m, map: poison, parallelism: 2, partition: rebalance }
  - { id: out, sink: { type: file, path: out.jsonl }, parallelism: 1, partition: rebalance }
`, runtime.Options{BatchBytes: 128 << 10, Linger: time.Hour}, nil) // no linger: only bytes or count cut a batch
	if j.err != nil {
		t.Fatal(j.err)
	}
	out, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		var n int
		if _, err := fmt.Sscanf(l, "{\"n\":%d,", &n); err != nil || !strings.HasSuffix(l, "\""+pad+"\"}") || seen[n] {
			t.Fatalf("bad or repeated output line %.60q... (%v)", l, err)
		}
		seen[n] = true
	}
	if len(seen) != 300 {
		t.Errorf("%d records out, want 300", len(seen))
	}
	if m := j.res.Operator("m"); m.RecordsIn != 300 || m.BytesIn < 30_000_000 {
		t.Errorf("m: %d records, %d bytes in", m.RecordsIn, m.BytesIn)
	}
}
