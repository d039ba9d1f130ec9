package abi

import (
	"encoding/binary"
	"errors"
	"testing"
)

// trueEnds is the end of each record of b as Reader finds them, as
// ImportEmitEnds lays them out; ok is false when b is not count records.
func trueEnds(b []byte, count int) ([]byte, bool) {
	rd := NewReader(b, count)
	var ends []byte
	for rd.Next() {
		ends = binary.LittleEndian.AppendUint32(ends, uint32(rd.Offset()))
	}
	return ends, rd.Err() == nil
}

// endsAgree checks CheckBatchEnds(b, ends, count) against its definition:
// nil exactly when CheckBatch accepts b and ends are its records' ends,
// CheckBatch's error when it refuses b.
func endsAgree(t testing.TB, b, ends []byte, count int) {
	t.Helper()
	want, ok := trueEnds(b, count)
	got := CheckBatchEnds(b, ends, count)
	readerEndsAgree(t, b, ends, count, got == nil)
	switch {
	case !ok:
		if base := CheckBatch(b, count); got == nil || got.Error() != base.Error() {
			t.Fatalf("CheckBatchEnds(% x, % x, %d) = %v, CheckBatch says %v", b, ends, count, got, base)
		}
	case string(ends) == string(want):
		if got != nil {
			t.Fatalf("CheckBatchEnds(% x, % x, %d) = %v for the true ends", b, ends, count, got)
		}
	case got == nil:
		t.Fatalf("CheckBatchEnds(% x, % x, %d) accepted ends; the true ones are % x", b, ends, count, want)
	}
}

// readerEndsAgree reads b with NewReaderEnds: it must not panic, and when
// CheckBatchEnds accepted the ends (checked) it must give what NewReader
// gives, record by record.
func readerEndsAgree(t testing.TB, b, ends []byte, count int, checked bool) {
	t.Helper()
	e := ends
	got := NewReaderEnds(b, count, e)
	var n int
	for got.Next() {
		n++
	}
	if !checked {
		return
	}
	want, got := NewReader(b, count), NewReaderEnds(b, count, e)
	for want.Next() {
		if !got.Next() {
			t.Fatalf("NewReaderEnds(% x, %d, %v) stopped before record %d: %v", b, count, e, n, got.Err())
		}
		w, g := want.Record(), got.Record()
		if string(w.Raw) != string(g.Raw) || string(w.Key) != string(g.Key) || string(w.Value) != string(g.Value) ||
			w.Time != g.Time || w.HasTime != g.HasTime || (w.Key == nil) != (g.Key == nil) {
			t.Fatalf("NewReaderEnds(% x, %d, %v) read %+v, NewReader %+v", b, count, e, g, w)
		}
	}
	if got.Next() || want.Err() != nil || got.Err() != nil {
		t.Fatalf("NewReaderEnds(% x, %d, %v): more records or an error: %v (NewReader: %v)", b, count, e, got.Err(), want.Err())
	}
}

func TestReaderEndsRefusesBadEnds(t *testing.T) {
	w, _ := indexBatch()
	e, _ := trueEnds(w.Buf, w.Count)
	at := func(i int) uint32 { return binary.LittleEndian.Uint32(e[4*i:]) }
	le := func(xs ...uint32) []byte {
		var b []byte
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint32(b, x)
		}
		return b
	}
	for name, bad := range map[string][]byte{
		"one short":      e[:len(e)-4],
		"not whole":      e[:len(e)-1],
		"past the end":   append(append([]byte(nil), e[:len(e)-4]...), le(uint32(len(w.Buf)+1))...),
		"not increasing": append(le(at(0), at(0)), e[8:]...),
		"zero":           make([]byte, len(e)),
		"cut in a head":  append(le(1), e[4:]...),
	} {
		rd := NewReaderEnds(w.Buf, w.Count, bad)
		for rd.Next() {
		}
		if !errors.Is(rd.Err(), ErrEnds) && !errors.Is(rd.Err(), ErrTruncated) && !errors.Is(rd.Err(), ErrTrailing) {
			t.Errorf("%s: %v, want an error about the ends", name, rd.Err())
		}
	}
}

func TestCheckBatchEnds(t *testing.T) {
	w, _ := indexBatch()
	ends, ok := trueEnds(w.Buf, w.Count)
	if !ok || CheckBatchEnds(w.Buf, ends, w.Count) != nil {
		t.Fatalf("the true ends of a good batch are refused: %v", CheckBatchEnds(w.Buf, ends, w.Count))
	}
	// every end one off, both ways; a missing, an extra and a zero end
	for i := 0; i < len(ends); i += 4 {
		for _, d := range []int32{-1, 1} {
			e := append([]byte(nil), ends...)
			binary.LittleEndian.PutUint32(e[i:], uint32(int32(binary.LittleEndian.Uint32(e[i:]))+d))
			endsAgree(t, w.Buf, e, w.Count)
		}
	}
	endsAgree(t, w.Buf, ends[:len(ends)-4], w.Count)
	endsAgree(t, w.Buf, append(append([]byte(nil), ends...), 0, 0, 0, 0), w.Count)
	endsAgree(t, w.Buf, make([]byte, len(ends)), w.Count)
	// ends that are right for a batch cut short or with bytes changed
	for n := 0; n <= len(w.Buf); n++ {
		endsAgree(t, w.Buf[:n], ends, w.Count)
	}
	for i := range w.Buf {
		for _, v := range []byte{0x00, 0x7f, 0x80, 0x8f, 0x93, 0xa5, 0xc0, 0xc1, 0xcf, 0xd3, 0xd9, 0xde, 0xff} {
			b := append([]byte(nil), w.Buf...)
			b[i] = v
			endsAgree(t, b, ends, w.Count)
			if e, ok := trueEnds(b, w.Count); ok {
				endsAgree(t, b, e, w.Count)
			}
		}
	}
	if err := CheckBatchEnds(nil, nil, 0); err != nil {
		t.Fatalf("an empty batch: %v", err)
	}
	err := CheckBatchEnds(w.Buf, make([]byte, len(ends)), w.Count)
	if err == nil || err.Error() != "record ends disagree with the records at byte 0: record 0 ends at byte "+itoa(int64(binary.LittleEndian.Uint32(ends)))+", not 0" {
		t.Fatalf("wrong ends: %v", err)
	}
}

func FuzzCheckBatchEnds(f *testing.F) {
	w, _ := indexBatch()
	ends, _ := trueEnds(w.Buf, w.Count)
	f.Add(w.Buf, ends, w.Count)
	f.Add([]byte{0x93, 0xc0, 0xc0, 0x80}, []byte{4, 0, 0, 0}, 1)
	f.Fuzz(func(t *testing.T, b, ends []byte, count int) {
		if count < -1 || count > 1<<16 {
			return
		}
		endsAgree(t, b, ends, count)
		if e, ok := trueEnds(b, count); ok {
			endsAgree(t, b, e, count)
		}
	})
}
