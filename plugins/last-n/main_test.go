package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

// TestLastN runs random transactions through the plugin on the SDK's test
// host and checks every output against a model computed here.
func TestLastN(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 31))
	var in []sdktest.Record
	type txn struct {
		acct, merchant string
		amount         int
	}
	var txns []txn
	for i := 0; i < 200; i++ {
		x := txn{fmt.Sprintf("a%d", r.IntN(5)), fmt.Sprintf("m%d", r.IntN(4)), r.IntN(1000)}
		txns = append(txns, x)
		in = append(in, sdktest.JSON(fmt.Sprintf(`{"account":%q,"merchant":%q,"amount":%d}`, x.acct, x.merchant, x.amount)))
	}
	res := sdktest.Run(t, sdktest.Options{KeyBy: "account", BatchSize: 7}, in...)
	got := res.JSON("")
	if len(got) != len(txns) {
		t.Fatalf("%d outputs for %d inputs", len(got), len(txns))
	}
	hist := map[string][]int{}
	counts := map[string]map[string]int{}
	for i, x := range txns {
		hist[x.acct] = append(hist[x.acct], x.amount)
		last := hist[x.acct]
		if len(last) > 3 {
			last = last[len(last)-3:]
		}
		if counts[x.acct] == nil {
			counts[x.acct] = map[string]int{}
		}
		counts[x.acct][x.merchant]++
		lastJSON, _ := json.Marshal(last)
		want := fmt.Sprintf(`{"account":%q,"merchant":%q,"amount":%d,"last":%s,"merchant_count":%d,"merchants":%d}`,
			x.acct, x.merchant, x.amount, lastJSON, counts[x.acct][x.merchant], len(counts[x.acct]))
		if got[i] != want {
			t.Fatalf("output %d:\n got %s\nwant %s", i, got[i], want)
		}
	}
	l, ok := res.List(0, "a0")
	if !ok || len(l) != min(3, len(hist["a0"])) {
		t.Fatalf("list state left for a0: %v %v", l, ok)
	}
	if st, ok := res.Describe["state"].([]any); !ok || len(st) != 2 {
		t.Fatalf("describe declares the slots: %v", res.Describe["state"])
	}
}
