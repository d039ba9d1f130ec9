package abi

import (
	"bufio"
	"compress/gzip"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestJavaStringVectors holds StringHash, JavaString and
// CompareJavaStrings to what Java 17 computes (testdata/JavaStrings.java):
// every string of one to three bytes over an alphabet of leads,
// continuations and invalid bytes, random longer ones, texts mixing
// characters whose UTF-16 order differs from their code point order, and
// pairs of them.
func TestJavaStringVectors(t *testing.T) {
	f, err := os.Open("testdata/java-strings.txt.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	unhex := func(s string) []byte {
		if s == "-" {
			return nil
		}
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sc := bufio.NewScanner(z)
	hashes, pairs, bad := 0, 0, 0
	for line := 1; sc.Scan(); line++ {
		p := strings.Fields(sc.Text())
		if len(p) != 4 {
			t.Fatalf("line %d: %q", line, sc.Text())
		}
		want, err := strconv.Atoi(p[3])
		if p[0] == "h" {
			want, err = strconv.Atoi(p[2])
		}
		if err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		switch p[0] {
		case "h":
			hashes++
			s, java := unhex(p[1]), unhex(p[3])
			// a copy with no spare capacity, and one inside a longer buffer:
			// StringHash reads past the end when the capacity allows
			if h := StringHash(append([]byte(nil), s...)); h != int32(want) {
				bad++
				t.Errorf("StringHash(%x) = %d, Java %d", s, h, want)
			}
			if h := StringHash(append(append([]byte(nil), s...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)[:len(s)]); h != int32(want) {
				bad++
				t.Errorf("StringHash(%x) with capacity = %d, Java %d", s, h, want)
			}
			if got := JavaString(nil, s); string(got) != string(java) {
				bad++
				t.Errorf("JavaString(%x) = %x, Java %x", s, got, java)
			}
		case "c":
			pairs++
			a, b := unhex(p[1]), unhex(p[2])
			if got := CompareJavaStrings(a, b); got != want {
				bad++
				t.Errorf("CompareJavaStrings(%x, %x) = %d, Java %d", a, b, got, want)
			}
			if got := CompareJavaStrings(b, a); got != -want {
				bad++
				t.Errorf("CompareJavaStrings(%x, %x) = %d, Java %d", b, a, got, -want)
			}
		default:
			t.Fatalf("line %d: %q", line, sc.Text())
		}
		if bad > 20 {
			t.Fatal("too many differences")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if hashes < 20000 || pairs < 4000 {
		t.Fatalf("%d hash and %d compare vectors: the file is cut short", hashes, pairs)
	}
}
