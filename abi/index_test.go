package abi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// indexBatch is records of every shape the index tells apart: flat maps,
// keys and no keys, times and none, a nested value, a map with a non-string
// key, a value that is not a map.
func indexBatch() (Writer, []string) {
	var w Writer
	flat := AppendMapHeader(nil, 3)
	flat = AppendInt(AppendStr(flat, "amount"), 7)
	flat = AppendStr(AppendStr(flat, "accountId"), "acct-1")
	flat = AppendFloat(AppendStr(flat, string(bytes.Repeat([]byte{'k'}, 40))), 1.5) // a str8 key
	nested := AppendMapHeader(nil, 2)
	nested = AppendMapHeader(AppendStr(nested, "inner"), 1)
	nested = AppendInt(AppendStr(nested, "x"), 1)
	nested = AppendInt(AppendStr(nested, "amount"), -3)
	intKey := AppendMapHeader(nil, 1)
	intKey = AppendStr(AppendInt(intKey, 5), "five")
	w.Append(1_700_000_000_000, true, nil, flat)
	w.Append(0, false, AppendStr(nil, "key"), nested)
	w.Append(-1, true, AppendInt(nil, 42), intKey)
	w.Append(3, true, nil, AppendArrayHeader(nil, 0))
	w.Append(4, false, nil, AppendMapHeader(nil, 0))
	return w, []string{"amount", "accountId", "inner", "x", string(bytes.Repeat([]byte{'k'}, 40)), "missing"}
}

func TestAppendIndexDescribesEveryRecord(t *testing.T) {
	w, names := indexBatch()
	prefix := []byte{1, 2, 3}
	idx, err := AppendIndex(prefix, w.Buf, w.Count)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(idx[:3], prefix) {
		t.Fatal("AppendIndex changed what dst held")
	}
	idx = idx[3:]
	word := func(i int) uint32 { return binary.LittleEndian.Uint32(idx[4*i:]) }
	fieldBase := w.Count * IndexRecordWords
	off := 0
	for i := 0; i < w.Count; i++ {
		r, end, err := ParseRecord(w.Buf, off)
		if err != nil {
			t.Fatal(err)
		}
		e := i * IndexRecordWords
		if int(word(e)) != off || int(word(e+1)) != end {
			t.Fatalf("record %d: range %d..%d, want %d..%d", i, word(e), word(e+1), off, end)
		}
		vs := int(word(e + 3))
		if !bytes.Equal(w.Buf[vs:end], r.Value) {
			t.Fatalf("record %d: value % x, want % x", i, w.Buf[vs:end], r.Value)
		}
		if ks := word(e + 2); (ks == IndexNoKey) != (r.Key == nil) || (r.Key != nil && !bytes.Equal(w.Buf[ks:vs], r.Key)) {
			t.Fatalf("record %d: key at %d, want % x", i, ks, r.Key)
		}
		flags := word(e + 6)
		tm := int64(uint64(word(e+4)) | uint64(word(e+5))<<32)
		if (flags&IndexHasTime != 0) != r.HasTime || (r.HasTime && tm != r.Time) {
			t.Fatalf("record %d: time %d (flags %x), want %d/%v", i, tm, flags, r.Time, r.HasTime)
		}
		wantIndexed := i == 0 || i == 1 || i == 4
		if (flags&IndexFields != 0) != wantIndexed {
			t.Fatalf("record %d: indexed %v, want %v", i, flags&IndexFields != 0, wantIndexed)
		}
		if wantIndexed {
			n, first := int(flags>>IndexCountShift), int(word(e+7))
			for _, name := range names {
				want, ok, _ := MapField(r.Value, name)
				var got []byte
				for f := first; f < first+n; f++ {
					fe := fieldBase + f*IndexFieldWords
					if k := r.Value[word(fe):word(fe+1)]; string(k) == name {
						got = r.Value[word(fe+1):word(fe+2)]
						break
					}
				}
				if !bytes.Equal(got, want) || (got != nil) != ok {
					t.Fatalf("record %d field %q: % x, want % x", i, name, got, want)
				}
			}
		}
		off = end
	}
}

func TestAppendIndexRefusesWhatReaderRefuses(t *testing.T) {
	w, _ := indexBatch()
	for _, c := range []struct {
		batch []byte
		count int
	}{{w.Buf, w.Count + 1}, {w.Buf, w.Count - 1}, {w.Buf[:len(w.Buf)-1], w.Count}, {w.Buf, -1}} {
		rd := NewReader(c.batch, c.count)
		for rd.Next() {
		}
		dst, err := AppendIndex([]byte{9}, c.batch, c.count)
		if err == nil || err.Error() != rd.Err().Error() || !errors.Is(err, errors.Unwrap(rd.Err())) {
			t.Errorf("count %d, %d bytes: %v, want %v", c.count, len(c.batch), err, rd.Err())
		}
		if len(dst) != 1 {
			t.Errorf("a failed AppendIndex left %d bytes, want dst as it was", len(dst))
		}
	}
}

// CheckBatch gives Reader's verdict, and Reader's error, for any bytes.
func checkAgrees(t testing.TB, b []byte, count int) {
	t.Helper()
	rd := NewReader(b, count)
	for rd.Next() {
	}
	want, got := rd.Err(), CheckBatch(b, count)
	if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
		t.Fatalf("CheckBatch(% x, %d) = %v, Reader says %v", b, count, got, want)
	}
}

func TestCheckBatchAgreesWithReader(t *testing.T) {
	w, _ := indexBatch()
	for n := 0; n <= len(w.Buf); n++ {
		for _, c := range []int{w.Count - 1, w.Count, w.Count + 1, 0} {
			checkAgrees(t, w.Buf[:n], c)
		}
	}
	for i := range w.Buf {
		for _, v := range []byte{0x00, 0x7f, 0x80, 0x8f, 0x93, 0xa5, 0xc0, 0xc1, 0xcf, 0xd3, 0xd9, 0xde, 0xff} {
			b := append([]byte(nil), w.Buf...)
			b[i] = v
			checkAgrees(t, b, w.Count)
		}
	}
	// a uint64 event time past int64
	checkAgrees(t, []byte{0x93, 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xc0, 0x80}, 1)
}

func FuzzCheckBatch(f *testing.F) {
	w, _ := indexBatch()
	f.Add(w.Buf, w.Count)
	f.Add([]byte{0x93, 0xc0, 0xc0, 0x80}, 1)
	f.Fuzz(func(t *testing.T, b []byte, count int) {
		if count < -1 || count > 1<<16 {
			return
		}
		checkAgrees(t, b, count)
		if idx, err := AppendIndex(nil, b, count); (err == nil) != (CheckBatch(b, count) == nil) {
			t.Fatalf("AppendIndex %v (%d bytes) and CheckBatch disagree", err, len(idx))
		}
	})
}

// A flat record is indexed whatever int encoding its event time has, with
// the time ParseRecord reads.
func TestAppendIndexTakesEveryIntTime(t *testing.T) {
	value := AppendInt(AppendStr(AppendMapHeader(nil, 1), "amount"), 7)
	for _, tm := range []int64{0, 5, 127, 128, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32, 1_700_000_000_000,
		-1, -32, -33, -128, -129, -32768, -32769, -1 << 31, -1<<31 - 1, -1 << 63, 1<<63 - 1} {
		var w Writer
		w.Append(tm, true, nil, value)
		var f Flat
		var fields [15]FlatField
		if !FlatRecord(w.Buf, 0, &f, &fields) || !f.HasTime || f.Time != tm || f.End != len(w.Buf) || f.Fields != 1 {
			t.Fatalf("time %d (% x): flat %v, %+v", tm, w.Buf, FlatRecord(w.Buf, 0, &f, &fields), f)
		}
		endsAgree(t, w.Buf, binary.LittleEndian.AppendUint32(nil, uint32(len(w.Buf))), 1) // flatEnd's fast path
		idx, err := AppendIndex(nil, w.Buf, 1)
		if err != nil {
			t.Fatal(err)
		}
		flags := binary.LittleEndian.Uint32(idx[24:])
		got := int64(binary.LittleEndian.Uint64(idx[16:]))
		if flags&IndexFields == 0 || flags&IndexHasTime == 0 || got != tm {
			t.Fatalf("time %d: index flags %x time %d", tm, flags, got)
		}
	}
	// a time that is not an int, or an int cut short, stays out of the flat
	// path, and ParseRecord refuses the record too
	for _, b := range [][]byte{
		append([]byte{0x93, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xc0}, value...), // a float
		append([]byte{0x93, 0xa1, 'x', 0xc0}, value...),                    // a string
		{0x93, 0xcc}, {0x93, 0xcd, 0x01}, {0x93, 0xce, 0, 0, 1}, {0x93, 0xd0}, {0x93, 0xd1, 0xff}, {0x93, 0xd2, 0, 0, 0},
	} {
		var f Flat
		var fields [15]FlatField
		if FlatRecord(b, 0, &f, &fields) {
			t.Errorf("% x: flat, want not", b)
		}
		if _, _, err := ParseRecord(b, 0); err == nil {
			t.Errorf("% x: ParseRecord took it", b)
		}
		if err := CheckBatch(b, 1); err == nil {
			t.Errorf("% x: CheckBatch took it", b)
		}
	}
}
