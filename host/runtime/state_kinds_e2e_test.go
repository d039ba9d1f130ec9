package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
)

const lastNJob = `
version: 1
name: last-n
plugins:
  lastn: { path: plugins/last-n/%s }
operators:
  - id: src
    source: { type: elements, values: [%s] }
  - id: lastn
    key-by: account
    process: lastn
    parallelism: %d
    config: { n: %d }
  - id: out
    sink: { type: print }
`

// TestLastNPlugin runs plugins/last-n (list state of the last n amounts
// and map state of per-merchant counts, per account) from YAML at
// parallelism 1, 2 and 3, and checks every output record against a model
// of the transactions computed here: each account's records keep their
// order through the key-by, so the model is per account.
func TestLastNPlugin(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	type txn struct {
		acct, merchant string
		amount         int
	}
	var txns []txn
	var vals []string
	for i := 0; i < 300; i++ {
		x := txn{fmt.Sprintf("acct-%d", r.IntN(12)), fmt.Sprintf("m%d", r.IntN(5)), r.IntN(10000)}
		txns = append(txns, x)
		vals = append(vals, fmt.Sprintf("{account: %s, merchant: %s, amount: %d, seq: %d}", x.acct, x.merchant, x.amount, i))
	}
	const n = 4
	// the model: per account, in input order, the record the plugin emits
	want := map[string][]string{}
	hist := map[string][]int{}
	counts := map[string]map[string]int{}
	for i, x := range txns {
		hist[x.acct] = append(hist[x.acct], x.amount)
		last := hist[x.acct][max(0, len(hist[x.acct])-n):]
		if counts[x.acct] == nil {
			counts[x.acct] = map[string]int{}
		}
		counts[x.acct][x.merchant]++
		lastJSON, _ := json.Marshal(last)
		want[x.acct] = append(want[x.acct], fmt.Sprintf(`{"account":%q,"merchant":%q,"amount":%d,"seq":%d,"last":%s,"merchant_count":%d,"merchants":%d}`,
			x.acct, x.merchant, x.amount, i, lastJSON, counts[x.acct][x.merchant], len(counts[x.acct])))
	}
	// the Go plugin, and its C, Rust and AssemblyScript builds (plugins/last-n/c, rust
	// and as) when built
	builds := []string{"last-n.wasm"}
	for _, b := range []string{"last-n-c.wasm", "last-n-rust.wasm", "last-n-as.wasm"} {
		if _, err := os.Stat("../../plugins/last-n/" + b); err == nil || os.Getenv("SLUICE_REQUIRE_LANGS") != "" {
			builds = append(builds, b)
		}
	}
	for _, build := range builds {
		for _, p := range []int{1, 2, 3} {
			t.Run(fmt.Sprint(build, "/p=", p), func(t *testing.T) {
				src := fmt.Sprintf(lastNJob, build, strings.Join(vals, ", "), p, n)
				res := runPipeline(t, filepath.Join("..", "..", "last-n.yaml"), src, nil, runtime.Options{})
				if res.err != nil {
					t.Fatal(res.err)
				}
				got := map[string][]string{}
				for _, l := range res.lines {
					acct, _ := l.Fields["account"].(string)
					got[acct] = append(got[acct], l.JSON)
				}
				if len(res.lines) != len(txns) {
					t.Fatalf("%d records out, want %d", len(res.lines), len(txns))
				}
				for acct, w := range want {
					g := got[acct]
					if len(g) != len(w) {
						t.Fatalf("%s: %d records, want %d", acct, len(g), len(w))
					}
					for i := range w {
						if g[i] != w[i] {
							t.Fatalf("%s record %d:\n got %s\nwant %s", acct, i, g[i], w[i])
						}
					}
				}
			})
		}
	}
}

const lastNCheckpointJob = `
version: 1
name: last-n-checkpoint
parallelism: 2
plugins:
  lastn: { path: ../plugins/last-n/last-n.wasm }
operators:
  - id: src
    source: { type: generator, preset: transactions, count: 6000, rate: 12000, accounts: 40 }
    parallelism: 1 # one source: each account's records keep one order, so "last" is exact
  - id: lastn
    key-by: accountId
    process: lastn
  - id: out
    sink: { type: discard }
`

// TestCheckpointListAndMapState: plugins/last-n's list and map state
// (the last 3 amounts, a count per merchant) checkpointed at parallelism
// 2 and restored at 3 and at 1: every account's last record carries the
// last amounts and the count of an uninterrupted run, and that count is
// the number of the account's records. The source has one subtask: with
// two, an account's records would interleave differently from run to run
// and its last amounts with them.
func TestCheckpointListAndMapState(t *testing.T) {
	type fin struct {
		last  string
		count int64
	}
	final := func(vals [][]byte) (map[string]fin, map[string]int64) {
		m, n := map[string]fin{}, map[string]int64{}
		for _, v := range vals {
			k, _, _ := abi.MapField(v, "accountId")
			l, _, _ := abi.MapField(v, "last")
			c, _, _ := abi.MapField(v, "merchant_count")
			cnt, _ := abi.ReadInt(c)
			m[string(k)] = fin{string(l), cnt}
			n[string(k)]++
		}
		return m, n
	}
	g, plugins := planCheckpointJob(t, lastNCheckpointJob, 0)
	conn := newMarkConnectors()
	if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: conn, Plugins: plugins}); err != nil {
		t.Fatal(err)
	}
	want, records := final(conn.committed(0))
	if len(want) != 40 {
		t.Fatalf("%d accounts, want 40", len(want))
	}
	for k, w := range want {
		if w.count != records[k] {
			t.Fatalf("account %s: merchant_count %d, but %d records", k, w.count, records[k])
		}
	}
	for _, p := range []int{3, 1} {
		got, _ := final(checkpointThenRestore(t, lastNCheckpointJob, 500, p, "lastn", "out"))
		if len(got) != len(want) {
			t.Fatalf("p=%d: %d accounts, want %d", p, len(got), len(want))
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("p=%d account %s: %+v after the restore, %+v uninterrupted", p, k, got[k], w)
			}
		}
	}
}
