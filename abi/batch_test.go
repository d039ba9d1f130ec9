package abi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
)

// txn builds the value map of a transaction record.
func txn(b []byte, account string, amount int64) []byte {
	b = AppendMapHeader(b, 3)
	b = AppendStr(b, "accountId")
	b = AppendStr(b, account)
	b = AppendStr(b, "amount")
	b = AppendInt(b, amount)
	b = AppendStr(b, "payload")
	return AppendStr(b, "0123456789abcdef0123456789abcdef")
}

func TestBatchRoundTrip(t *testing.T) {
	var w Writer
	key := AppendStr(nil, "k1")
	for i := 0; i < 100; i++ {
		v := txn(nil, fmt.Sprintf("acct-%d", i%7), int64(i-50))
		switch i % 3 {
		case 0:
			w.Append(int64(1000+i), true, key, v)
		case 1:
			w.Append(0, false, nil, v)
		default:
			w.AppendRaw(AppendEnvelope(nil, -int64(i), true, AppendInt(nil, int64(i)), v))
		}
	}
	rd := NewReader(w.Buf, w.Count)
	i := 0
	for rd.Next() {
		r := rd.Record()
		switch i % 3 {
		case 0:
			if !r.HasTime || r.Time != int64(1000+i) || !bytes.Equal(r.Key, key) {
				t.Fatalf("record %d: time %d/%v key %x", i, r.Time, r.HasTime, r.Key)
			}
		case 1:
			if r.HasTime || r.Key != nil {
				t.Fatalf("record %d: want no time and nil key, got %d/%v %x", i, r.Time, r.HasTime, r.Key)
			}
		default:
			k, _ := ReadInt(r.Key)
			if r.Time != -int64(i) || k != int64(i) {
				t.Fatalf("record %d: time %d key %d", i, r.Time, k)
			}
		}
		raw, ok, err := MapField(r.Value, "amount")
		if err != nil || !ok {
			t.Fatalf("record %d: amount: %v %v", i, ok, err)
		}
		if a, _ := ReadInt(raw); a != int64(i-50) {
			t.Fatalf("record %d: amount %d", i, a)
		}
		acct, _, _ := MapField(r.Value, "accountId")
		if s, _ := ReadStr(acct); string(s) != fmt.Sprintf("acct-%d", i%7) {
			t.Fatalf("record %d: accountId %q", i, s)
		}
		if _, ok, _ := MapField(r.Value, "missing"); ok {
			t.Fatal("found a missing field")
		}
		i++
	}
	if err := rd.Err(); err != nil || i != 100 {
		t.Fatalf("read %d records, err %v", i, err)
	}
}

func TestReaderErrors(t *testing.T) {
	one := AppendEnvelope(nil, 1, true, nil, txn(nil, "a", 1))
	deep := bytes.Repeat([]byte{0x91}, 100_000) // 100k nested one-element arrays
	huge := append([]byte{0x93, 0xc0, 0xc0, 0xdd}, 0xff, 0xff, 0xff, 0xff)
	tests := []struct {
		name  string
		buf   []byte
		count int
		want  error
	}{
		{"truncated", one[:len(one)-3], 1, ErrTruncated},
		{"count above records", one, 2, ErrCount},
		{"trailing bytes", append(append([]byte{}, one...), 0xc0), 1, ErrTrailing},
		{"not an envelope", txn(nil, "a", 1), 1, ErrEnvelope},
		{"envelope of 2", []byte{0x92, 0xc0, 0xc0}, 1, ErrEnvelope},
		{"100k-deep nesting", append([]byte{0x93, 0xc0, 0xc0}, deep...), 1, ErrTooDeep},
		{"array header claiming 2^32 elements", huge, 1, ErrTruncated},
		{"never-used byte 0xc1", []byte{0x93, 0xc0, 0xc0, 0xc1}, 1, ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rd := NewReader(tc.buf, tc.count)
			for rd.Next() {
			}
			if !errors.Is(rd.Err(), tc.want) {
				t.Fatalf("err = %v, want %v", rd.Err(), tc.want)
			}
		})
	}
}

func TestReaderTimeMustBeInt(t *testing.T) {
	b := []byte{0x93, 0xa1, 'x', 0xc0, 0x80}
	rd := NewReader(b, 1)
	rd.Next()
	var de *DecodeError
	if !errors.As(rd.Err(), &de) || !errors.Is(de, ErrEnvelope) || de.Offset != 1 {
		t.Fatalf("err = %v, want ErrEnvelope at byte 1", rd.Err())
	}
}

func TestReaderMaxRecord(t *testing.T) {
	var w Writer
	w.Append(0, false, nil, AppendStr(nil, string(make([]byte, 1000))))
	rd := NewReader(w.Buf, 1)
	rd.MaxRecord = 100
	if rd.Next() || !errors.Is(rd.Err(), ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", rd.Err())
	}
}

func TestAppendIntSmallestForm(t *testing.T) {
	tests := []struct {
		v    int64
		size int
	}{
		{0, 1}, {127, 1}, {-32, 1}, {128, 2}, {255, 2}, {-33, 2}, {-128, 2},
		{256, 3}, {65535, 3}, {-129, 3}, {65536, 5}, {1 << 31, 5}, {-(1 << 31), 5},
		{1 << 32, 9}, {-(1 << 31) - 1, 9},
	}
	for _, tc := range tests {
		b := AppendInt(nil, tc.v)
		if len(b) != tc.size {
			t.Errorf("AppendInt(%d) takes %d bytes, want %d", tc.v, len(b), tc.size)
		}
		got, err := ReadInt(b)
		if err != nil || got != tc.v {
			t.Errorf("ReadInt(AppendInt(%d)) = %d, %v", tc.v, got, err)
		}
	}
}

func TestScalarsRoundTrip(t *testing.T) {
	if f, err := ReadFloat(AppendFloat(nil, 2.5)); err != nil || f != 2.5 {
		t.Fatalf("float: %v %v", f, err)
	}
	if v, err := ReadBool(AppendBool(nil, true)); err != nil || !v {
		t.Fatalf("bool: %v %v", v, err)
	}
	long := string(bytes.Repeat([]byte("x"), 70000))
	if s, err := ReadStr(AppendStr(nil, long)); err != nil || string(s) != long {
		t.Fatalf("str32: %d %v", len(s), err)
	}
	bin := AppendBin(nil, []byte{1, 2, 3})
	if end, err := Skip(bin, 0); err != nil || end != len(bin) {
		t.Fatalf("bin skip: %d %v", end, err)
	}
	m := AppendMapHeader(nil, 20)
	for i := 0; i < 20; i++ {
		m = AppendStr(m, fmt.Sprint("k", i))
		m = AppendArrayHeader(m, 20)
		for j := 0; j < 20; j++ {
			m = AppendInt(m, int64(j))
		}
	}
	raw, ok, err := MapField(m, "k19")
	if err != nil || !ok {
		t.Fatalf("map16 field: %v %v", ok, err)
	}
	if n, _, _ := Len(raw); n != 20 {
		t.Fatalf("array16 len %d", n)
	}
	if _, err := ReadInt([]byte{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}); !errors.Is(err, ErrRange) {
		t.Fatalf("uint64 max: %v, want ErrRange", err)
	}
}

func TestMapFieldSkipsNonStringKeys(t *testing.T) {
	m := AppendMapHeader(nil, 2)
	m = AppendInt(m, 7)
	m = AppendStr(m, "seven")
	m = AppendStr(m, "x")
	m = AppendInt(m, 1)
	raw, ok, err := MapField(m, "x")
	if err != nil || !ok || raw[0] != 1 {
		t.Fatalf("MapField = %x %v %v", raw, ok, err)
	}
}

func TestMapFieldHugeHeader(t *testing.T) {
	m := []byte{0xdf, 0xff, 0xff, 0xff, 0xff}
	binary.BigEndian.PutUint32(m[1:], 1<<31)
	if _, _, err := MapField(m, "x"); !errors.Is(err, ErrTruncated) {
		t.Fatalf("err = %v, want ErrTruncated", err)
	}
}

// FuzzReader feeds arbitrary bytes to the batch reader, the field lookup
// and the key hash: none may panic, and whatever the reader accepts must
// re-encode to the same bytes.
func FuzzReader(f *testing.F) {
	var w Writer
	w.Append(5, true, AppendStr(nil, "k"), txn(nil, "acct", 3))
	w.Append(0, false, nil, AppendArrayHeader(AppendMapHeader(nil, 1), 0))
	f.Add(w.Buf, uint8(w.Count))
	f.Add([]byte{0x93, 0xc0, 0xc0, 0xdf, 0xff, 0xff, 0xff, 0xff}, uint8(1))
	f.Add(bytes.Repeat([]byte{0x91}, 200), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, count uint8) {
		rd := NewReader(b, int(count))
		var out Writer
		for rd.Next() {
			r := rd.Record()
			_, _, _ = MapField(r.Value, "amount")
			_, _ = KeyHash(r.Key)
			out.Append(r.Time, r.HasTime, r.Key, r.Value)
		}
		if rd.Err() != nil {
			return
		}
		// Re-encoding may shrink a non-minimal time encoding, never change
		// the record count or the values.
		again := NewReader(out.Buf, out.Count)
		n := 0
		for again.Next() {
			n++
		}
		if again.Err() != nil || n != int(count) {
			t.Fatalf("re-encoded batch: %d records, err %v", n, again.Err())
		}
	})
}

// FuzzScanPaths checks the scanner's fast paths against its exact ones on
// arbitrary bytes: the same end or the same error (offset included) at
// every offset and depth, and the same field from MapField.
func FuzzScanPaths(f *testing.F) {
	var w Writer
	w.Append(1700000000000, true, AppendStr(nil, "k"), txn(nil, "acct-000042", -70))
	w.Append(0, false, nil, AppendArrayHeader(AppendMapHeader(nil, 1), 0))
	f.Add(w.Buf)
	f.Add(txn(nil, "a", 3))
	f.Add(append(bytes.Repeat([]byte{0x81, 0xa1, 'x'}, MaxDepth), 0xc0))
	f.Add(bytes.Repeat([]byte{0x91}, MaxDepth+1))
	f.Add([]byte{0x83, 0xa1, 'a', 0xd9, 0x05, 'x', 0xc1, 0x90})
	f.Add([]byte{0x93, 0xcd, 0x01, 0x00, 0xa1, 'k', 0x81, 0xa9, 'a', 'c', 'c', 'o', 'u', 'n', 't', 'I', 'd', 0x01})
	f.Add([]byte{0x93, 0xd3, 0, 0, 1, 0x8b, 0xcf, 0xe7, 0x5c, 0, 0xc0, 0x80})
	f.Add([]byte{0x93, 0xce, 0, 1, 0, 0, 0xd9, 1, 'k', 0x80})
	f.Add([]byte{0x93, 0xcd, 0x01, 0xc0, 0xc0, 0x80}) // a time whose last byte reads as nil
	f.Add([]byte{0x93, 0xcc, 0xff, 0xc0, 0x80})       // a uint8 time (the head's fast path)
	f.Add([]byte{0x93, 0xcc, 0xff})                   // a uint8 time with nothing after it
	f.Add([]byte{0x93, 0xce, 0, 0, 0x01, 0xa1, 0xc0, 0x80})
	f.Add([]byte{0x93, 0xd3, 0, 0, 0, 0, 0, 0, 0x01, 0xc0, 0xc0, 0x80})
	f.Add([]byte{0x93, 0xcf, 0, 0, 1, 0x8c, 0xbe, 0x5a, 0x18, 0, 0xc0, 0x80}) // a uint64 time (AppendInt's for ms since the epoch)
	f.Add([]byte{0x93, 0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0, 0xc0, 0x80})          // a uint64 time past int64
	f.Fuzz(func(t *testing.T, b []byte) {
		for off := 0; off <= len(b) && off < 64; off++ {
			for _, depth := range []int{0, 1, MaxDepth - 1} {
				fast, ferr := skipValue(b, off, depth)
				exact, eerr := skip(b, off, depth)
				if fast != exact || fmt.Sprint(ferr) != fmt.Sprint(eerr) {
					t.Fatalf("skip at %d depth %d: fast %d %v, exact %d %v", off, depth, fast, ferr, exact, eerr)
				}
			}
			for _, name := range []string{"a", "amount", "x", "accountId", "0123456789abcdef", "k0123456"} {
				fr, fok, ferr := MapField(b[off:], name)
				er, eok, eerr := mapField(b[off:], name)
				if !bytes.Equal(fr, er) || fok != eok || fmt.Sprint(ferr) != fmt.Sprint(eerr) {
					t.Fatalf("MapField(%q) at %d: fast %x %v %v, exact %x %v %v", name, off, fr, fok, ferr, er, eok, eerr)
				}
			}
			// the envelope head's fast path against the slow one
			var fr, sr Record
			fend, ferr := parseHead(&fr, b, off)
			send, serr := parseHeadSlow(&sr, b, off)
			if fend != send || fmt.Sprint(ferr) != fmt.Sprint(serr) ||
				ferr == nil && (fr.Time != sr.Time || fr.HasTime != sr.HasTime || !bytes.Equal(fr.Key, sr.Key) || (fr.Key == nil) != (sr.Key == nil)) {
				t.Fatalf("parseHead at %d: fast %d %v %+v, slow %d %v %+v", off, fend, ferr, fr, send, serr, sr)
			}
		}
	})
}

// TestEqName checks the word-wise name compare of MapField against string
// equality for every length up to 20 and a difference at every position.
func TestEqName(t *testing.T) {
	base := "abcdefghijklmnopqrst"
	for n := 0; n <= len(base); n++ {
		name := base[:n]
		buf := []byte(base[:n] + "!!!!!!!!") // bytes after the key must not count
		if !eqName(buf[:n], name) {
			t.Fatalf("eqName(%q, %q) = false", buf[:n], name)
		}
		for i := 0; i < n; i++ {
			k := []byte(name)
			k[i] ^= 1
			if eqName(k, name) {
				t.Fatalf("eqName(%q, %q) = true", k, name)
			}
		}
		if n > 0 && eqName(buf[:n-1], name) || eqName(buf[:n+1], name) {
			t.Fatalf("eqName matched a key of another length than %q", name)
		}
	}
}
