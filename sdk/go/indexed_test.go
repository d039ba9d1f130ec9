//go:build !wasip1

package sdk_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	sdk "github.com/sluicehq/sluice/sdk/go"
	"github.com/sluicehq/sluice/sdk/go/internal/hostcall"
)

// The host's batch index (sluice_process_indexed) and the guest's own
// scan (sluice_process) give an operator the same records and fields.
func TestIndexedAndScannedProcessAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var seen []string
	run := func(batch []byte, count int32, index []byte) ([]recEmit, abi.Status) {
		h := newRecHost()
		seen = seen[:0]
		sdk.Map(func(r sdk.Record) (sdk.Record, error) {
			k, _ := r.Time()
			seen = append(seen, string(r.Get("amount").Raw())+"|"+string(r.Get("accountId").Raw())+"|"+
				string(r.Key().Raw())+"|"+strconv.FormatInt(k, 10)+"|"+strconv.FormatInt(r.Int("a"), 10))
			return r.SetInt("amount", r.Int("amount")+1), nil
		})
		var st int32
		if index == nil {
			st = hostcall.Guest.Process(0, batch, count)
		} else {
			st = hostcall.Guest.ProcessIndexed(0, batch, count, index)
		}
		return h.emits, abi.Status(st)
	}
	for i := 0; i < 2000; i++ {
		var batch []byte
		n := 1 + r.IntN(8)
		for j := 0; j < n; j++ {
			batch = sdk.RandomEnvelope(r, batch)
		}
		index, err := abi.AppendIndex(nil, batch, n)
		if err != nil {
			t.Fatal(err)
		}
		sdk.Reset()
		want, wantSt := run(batch, int32(n), nil)
		wantSeen := append([]string(nil), seen...)
		sdk.Reset()
		got, st := run(batch, int32(n), index)
		if st != wantSt || fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(seen) != fmt.Sprint(wantSeen) {
			t.Fatalf("batch % x:\nindexed %v %v %q\nscanned %v %v %q", batch, st, got, seen, wantSt, want, wantSeen)
		}
	}
	sdk.Reset()
	// an index too short for its count is refused, not trusted
	h := newRecHost()
	sdk.Filter(func(sdk.Record) (bool, error) { return true, nil })
	rec := abi.AppendEnvelope(nil, 1, true, nil, abi.AppendMapHeader(nil, 0))
	if st := hostcall.Guest.ProcessIndexed(0, rec, 1, make([]byte, 8)); abi.Status(st) != abi.StatusMalformed || !strings.Contains(h.text, "index") {
		t.Errorf("a short index: status %v %q", abi.Status(st), h.text)
	}
	sdk.Reset()
}
