package sdk

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sluicehq/sluice/abi"
)

// The fast path of scan.go must give abi's answers: the same records, the
// same fields, an error exactly where abi has one.

// splitAgrees checks view.split against abi.ParseRecord at b[off:].
func splitAgrees(t testing.TB, b []byte, off int) {
	t.Helper()
	var v view
	v.reset()
	end, err := v.split(b, off)
	r, wantEnd, wantErr := abi.ParseRecord(b, off)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("split(% x, %d): error %v, abi says %v", b, off, err, wantErr)
	}
	if err != nil {
		if err.Error() != wantErr.Error() {
			t.Fatalf("split(% x, %d): error %q, abi says %q", b, off, err, wantErr)
		}
		return
	}
	if end != wantEnd || !bytes.Equal(v.raw, r.Raw) || !bytes.Equal(v.value, r.Value) ||
		!bytes.Equal(v.key, r.Key) || (v.key == nil) != (r.Key == nil) || v.time != r.Time || v.hasTime != r.HasTime {
		t.Fatalf("split(% x, %d) = end %d raw % x value % x key % x time %d/%v; abi: end %d raw % x value % x key % x time %d/%v",
			b, off, end, v.raw, v.value, v.key, v.time, v.hasTime, wantEnd, r.Raw, r.Value, r.Key, r.Time, r.HasTime)
	}
	// every field name of the value, and some that are not there
	names := []string{"", "amount", "a", "missing", "accountId"}
	if m, ok := decodeNames(r.Value); ok {
		names = append(names, m...)
	}
	for _, name := range names {
		got := v.field(name)
		want, ok, ferr := abi.MapField(r.Value, name)
		if !ok || ferr != nil {
			want = nil
		}
		if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("field %q of % x = % x, abi.MapField says % x (ok %v, err %v)", name, r.Value, got, want, ok, ferr)
		}
		if x, y := (Record{&v}).Int(name), (Value{want}).Int(); x != y {
			t.Fatalf("Int(%q) of % x = %d, Value.Int of abi's field says %d", name, r.Value, x, y)
		}
	}
}

// decodeNames returns the string keys of a msgpack map.
func decodeNames(m []byte) ([]string, bool) {
	n, off, err := abi.Len(m)
	if err != nil || abi.TypeOf(m) != abi.TypeMap {
		return nil, false
	}
	var names []string
	for i := 0; i < n; i++ {
		if s, err := abi.ReadStr(m[off:]); err == nil {
			names = append(names, string(s))
		}
		k, err := abi.Skip(m, off)
		if err != nil {
			return names, true
		}
		if off, err = abi.Skip(m, k); err != nil {
			return names, true
		}
	}
	return names, true
}

// randomValue writes a msgpack value of the kinds streams carry, with
// every header the fast path knows and some it hands to abi.
func randomValue(r *rand.Rand, b []byte, depth int) []byte {
	switch k := r.IntN(14); {
	case k == 0 && depth < 3:
		n := r.IntN(5)
		b = abi.AppendMapHeader(b, n)
		for i := 0; i < n; i++ {
			b = abi.AppendStr(b, randomName(r))
			b = randomValue(r, b, depth+1)
		}
		return b
	case k == 1 && depth < 3:
		n := r.IntN(4)
		b = abi.AppendArrayHeader(b, n)
		for i := 0; i < n; i++ {
			b = randomValue(r, b, depth+1)
		}
		return b
	case k == 2:
		return abi.AppendStr(b, string(bytes.Repeat([]byte{'x'}, r.IntN(300))))
	case k == 3:
		return abi.AppendFloat(b, r.NormFloat64())
	case k == 4:
		return abi.AppendBool(b, r.IntN(2) == 0)
	case k == 5:
		return abi.AppendNil(b)
	case k == 6:
		return append(b, 0xc4, 3, 1, 2, 3) // bin8
	case k == 7:
		return append(b, 0xca, 0x3f, 0x80, 0, 0) // float32
	case k == 8:
		return append(b, 0xd4, 1, 2) // fixext1
	}
	ints := []int64{0, 1, -1, 127, 128, -32, -33, 255, 256, 65535, 65536, -129, -32769, math.MaxInt32 + 1, math.MinInt64, math.MaxInt64}
	return abi.AppendInt(b, ints[r.IntN(len(ints))])
}

func randomName(r *rand.Rand) string {
	names := []string{"amount", "accountId", "a", "", "txnId", "currency", "amounT", "amount2", string(bytes.Repeat([]byte{'k'}, 40))}
	return names[r.IntN(len(names))]
}

// randomEnvelope writes one envelope: mostly flat records, sometimes
// other shapes.
func randomEnvelope(r *rand.Rand, b []byte) []byte {
	times := []int64{0, 5, 127, 128, 65536, -1, -33, -129, -40000, -1 << 31, 1_700_000_000_000, math.MinInt64, math.MaxInt64}
	var key []byte
	switch r.IntN(4) {
	case 1:
		key = abi.AppendStr(nil, "acct-7")
	case 2:
		key = abi.AppendInt(nil, 42)
	case 3:
		key = randomValue(r, nil, 1)
	}
	var val []byte
	if r.IntN(4) == 0 {
		val = randomValue(r, nil, 0)
	} else {
		n := r.IntN(16)
		if n < 16 && r.IntN(8) == 0 {
			n += 16 // a map16
		}
		val = abi.AppendMapHeader(nil, n)
		for i := 0; i < n; i++ {
			val = abi.AppendStr(val, randomName(r))
			val = randomValue(r, val, 2)
		}
	}
	return abi.AppendEnvelope(b, times[r.IntN(len(times))], r.IntN(5) != 0, key, val)
}

func TestSplitAndFieldAgreeWithABI(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		b := randomEnvelope(r, nil)
		splitAgrees(t, b, 0)
		// every truncation, and a corrupted byte, must fail (or not) as in abi
		splitAgrees(t, b[:r.IntN(len(b))], 0)
		c := append([]byte(nil), b...)
		c[r.IntN(len(c))] = byte(r.IntN(256))
		splitAgrees(t, c, 0)
		// not at the start of the buffer
		splitAgrees(t, append([]byte{0xc0, 0xc0}, b...), 2)
	}
	// a uint64 event time past int64, and a fixmap claiming more pairs
	// than there are bytes
	splitAgrees(t, []byte{0x93, 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xc0, 0x80}, 0)
	splitAgrees(t, []byte{0x93, 0xc0, 0xc0, 0x8f, 0xa6, 'a', 'm', 'o', 'u', 'n', 't', 0x01}, 0)
}

func FuzzSplit(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 32; i++ {
		f.Add(randomEnvelope(r, nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) { splitAgrees(t, b, 0) })
}

// The process loop splits with the fast path and words a batch whose
// records and count disagree as abi's reader does.
func TestBatchErrorsAsABI(t *testing.T) {
	rec := abi.AppendEnvelope(nil, 1, true, nil, abi.AppendMapHeader(nil, 0))
	for _, c := range []struct {
		batch []byte
		count int32
	}{
		{append(rec, rec...), 1}, // trailing bytes
		{rec, 2},                 // fewer records than the count
		{rec[:len(rec)-1], 1},    // truncated
	} {
		rd := abi.NewReader(c.batch, int(c.count))
		for rd.Next() {
		}
		want := "sluice_process: " + rd.Err().Error()
		Reset()
		Filter(func(Record) (bool, error) { return true, nil })
		err := eng.process(0, c.batch, c.count)
		if err == nil || err.Error() != want {
			t.Errorf("batch % x count %d: %v, want %s", c.batch, c.count, err, want)
		}
	}
	Reset()
}

// RandomEnvelope is randomEnvelope for the external tests.
var RandomEnvelope = randomEnvelope
