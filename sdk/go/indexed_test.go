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

// pick keeps about half the records (an even amount), fails on an
// amount that is a multiple of 7 and panics on one that is a multiple of
// 11 (0 aside).
func pick(r sdk.Record) (bool, error) {
	a := r.Int("amount")
	switch {
	case a != 0 && a%11 == 0:
		panic("amount " + strconv.FormatInt(a, 10))
	case a != 0 && a%7 == 0:
		return false, fmt.Errorf("amount %d", a)
	}
	return a%2 == 0, nil
}

// randomBatch is 1 to 8 random envelopes and the host's index of them.
func randomBatch(t *testing.T, r *rand.Rand) ([]byte, int32, []byte) {
	t.Helper()
	var batch []byte
	n := 1 + r.IntN(8)
	for j := 0; j < n; j++ {
		batch = sdk.RandomEnvelope(r, batch)
	}
	index, err := abi.AppendIndex(nil, batch, n)
	if err != nil {
		t.Fatal(err)
	}
	return batch, int32(n), index
}

// process calls sluice_process, or sluice_process_indexed with index.
func process(batch []byte, n int32, index []byte) abi.Status {
	if index == nil {
		return abi.Status(hostcall.Guest.Process(0, batch, n))
	}
	return abi.Status(hostcall.Guest.ProcessIndexed(0, batch, n, index))
}

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
			// a new time keeps the key, a new key keeps the time, as read
			switch r.Int("amount") % 3 {
			case 1:
				r.SetTime(5)
			case 2:
				r.SetKey(r.Get("accountId").Key())
			}
			t, ht := r.Time()
			seen = append(seen, string(r.Key().Raw())+"|"+strconv.FormatInt(t, 10)+"|"+strconv.FormatBool(ht))
			return r.SetInt("amount", r.Int("amount")+1), nil
		})
		return h.emits, process(batch, count, index)
	}
	for i := 0; i < 2000; i++ {
		batch, n, index := randomBatch(t, r)
		sdk.Reset()
		want, wantSt := run(batch, n, nil)
		wantSeen := append([]string(nil), seen...)
		sdk.Reset()
		got, st := run(batch, n, index)
		if st != wantSt || fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(seen) != fmt.Sprint(wantSeen) {
			t.Fatalf("batch % x:\nindexed %v %v %q\nscanned %v %v %q", batch, st, got, seen, wantSt, want, wantSeen)
		}
	}
	sdk.Reset()
	// every kind with a loop of its own over an indexed batch, including a
	// record that fails, one that panics and a side output: the same
	// emits, status and error text as the scanned call
	kinds := map[string]func(){
		"filter": func() { sdk.Filter(pick) },
		"map": func() {
			sdk.Map(func(r sdk.Record) (sdk.Record, error) {
				_, err := pick(r)
				return r.SetInt("amount", 2*r.Int("amount")), err
			})
		},
		"flatMap": func() {
			sdk.FlatMap(func(r sdk.Record, out sdk.Emitter) error {
				keep, err := pick(r)
				if keep {
					out.Emit(r)
					out.Emit(r.SetStr("n", "2"))
				}
				return err
			})
		},
		"process": func() {
			sdk.Process(func(r sdk.Record, ctx sdk.Context) error {
				keep, err := pick(r)
				if keep {
					ctx.EmitTo("side", r)
				}
				ctx.Emit(r)
				return err
			}).Outputs("side")
		},
	}
	for kind, register := range kinds {
		for i := 0; i < 500; i++ {
			batch, n, index := randomBatch(t, r)
			var outs [2][]recEmit
			var sts [2]abi.Status
			var texts [2]string
			for k := range outs {
				sdk.Reset()
				h := newRecHost()
				register()
				if k == 0 {
					sts[k] = process(batch, n, nil)
				} else {
					sts[k] = process(batch, n, index)
				}
				outs[k], texts[k] = h.emits, h.text
			}
			if sts[0] != sts[1] || texts[0] != texts[1] || fmt.Sprint(outs[0]) != fmt.Sprint(outs[1]) {
				t.Fatalf("%s, batch % x:\nscanned %v %q %v\nindexed %v %q %v", kind, batch, sts[0], texts[0], outs[0], sts[1], texts[1], outs[1])
			}
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

// fieldInt is field n's value: a fixint or a wider int.
func fieldInt(n int) int64 {
	if n%2 == 0 {
		return int64(n)
	}
	return int64(n*1000 + n)
}

// Record.Int and Record.Get read an indexed record's fields with their own
// word-at-a-time comparison of names: every name length from 1 to 20, and
// names that differ from a field's in its first, middle or last byte, read
// the same as the scanned call, which reads this record (a map16, not
// flat) through abi.MapField, and as the values written.
func TestIndexedGettersCompareEveryNameLength(t *testing.T) {
	var names []string
	value := abi.AppendMapHeader(nil, 20)
	for n := 1; n <= 20; n++ {
		nm := strings.Repeat(string('a'+byte(n%26)), n)
		value = abi.AppendInt(abi.AppendStr(value, nm), fieldInt(n))
		names = append(names, nm)
		for _, at := range []int{0, len(nm) / 2, len(nm) - 1} {
			miss := []byte(nm)
			miss[at]++
			names = append(names, string(miss))
		}
		names = append(names, nm[:len(nm)-1], nm+"x")
	}
	batch := abi.AppendEnvelope(nil, 1, true, nil, value)
	index, err := abi.AppendIndex(nil, batch, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got [2][]string
	for k, idx := range [][]byte{nil, index} {
		sdk.Reset()
		newRecHost()
		sdk.Filter(func(r sdk.Record) (bool, error) {
			for _, nm := range names {
				got[k] = append(got[k], nm+"="+strconv.FormatInt(r.Int(nm), 10)+"/"+string(r.Get(nm).Raw()))
			}
			return true, nil
		})
		if st := process(batch, 1, idx); st != abi.StatusOK {
			t.Fatalf("status %v", st)
		}
	}
	sdk.Reset()
	if fmt.Sprint(got[0]) != fmt.Sprint(got[1]) {
		t.Fatalf("indexed %q\nscanned %q", got[1], got[0])
	}
	for i, nm := range names {
		want := "0/"
		if i%6 == 0 { // a field's own name
			n := fieldInt(i/6 + 1)
			want = strconv.FormatInt(n, 10) + "/" + string(abi.AppendInt(nil, n))
		}
		if got[1][i] != nm+"="+want {
			t.Errorf("%q: got %q, want %q", nm, got[1][i], nm+"="+want)
		}
	}
}
