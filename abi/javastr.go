package abi

import (
	"bytes"
	"unicode/utf8"
)

// Strings as Java sees them. A msgpack string is UTF-8; a Flink key or
// field is a Java String decoded from it (new String(bytes, UTF_8)). For
// valid UTF-8 the two hold the same characters; for invalid UTF-8, Java's
// decoder puts one U+FFFD per malformed sequence as it delimits them,
// which is not one per byte (Go's range loop) nor Unicode's "maximal
// subpart" rule: E2 82 41 is U+FFFD 'A', ED A0 80 (a UTF-8 surrogate) is
// one U+FFFD. javaStep reproduces the JDK 17 decoder; the vectors in
// testdata/java-strings.txt.gz come from Java itself (JavaStrings.java).

// javaStep decodes the character at s[i] as Java's UTF-8 decoder does and
// returns it with the bytes it takes: a valid sequence gives its code
// point, a malformed one U+FFFD.
func javaStep(s []byte, i int) (rune, int) {
	r, n := utf8.DecodeRune(s[i:])
	if r != utf8.RuneError || n > 1 {
		return r, n
	}
	const bad = utf8.RuneError
	b1, rest := s[i], len(s)-i-1 // rest: bytes after b1
	cont := func(b byte) bool { return b&0xc0 == 0x80 }
	switch {
	case b1 >= 0xe0 && b1 <= 0xef: // a three-byte lead
		if rest == 0 {
			return bad, 1
		}
		b2 := s[i+1]
		if (b1 == 0xe0 && b2&0xe0 == 0x80) || !cont(b2) {
			return bad, 1
		}
		if rest == 1 {
			return bad, 2 // cut short by the end
		}
		if !cont(s[i+2]) {
			return bad, 2
		}
		return bad, 3 // well formed but a surrogate (ED A0..BF xx)
	case b1 >= 0xf0 && b1 <= 0xf7: // a four-byte lead
		if b1 > 0xf4 || rest == 0 {
			return bad, 1
		}
		b2 := s[i+1]
		if (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) || (b1 == 0xf4 && b2&0xf0 != 0x80) || !cont(b2) {
			return bad, 1
		}
		if rest == 1 {
			return bad, 2
		}
		if !cont(s[i+2]) {
			return bad, 2
		}
		return bad, 3 // the fourth byte is missing or not a continuation
	}
	return bad, 1 // a two-byte lead without its continuation, or no lead at all
}

// JavaString appends to dst the UTF-8 of the Java String that s decodes
// to: s itself when it is valid UTF-8, else s with each malformed sequence
// replaced by U+FFFD as Java replaces it. Two msgpack strings are equal
// Java Strings exactly when their JavaString bytes are equal.
func JavaString(dst, s []byte) []byte {
	if utf8.Valid(s) {
		return append(dst, s...)
	}
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			dst = append(dst, s[i])
			i++
			continue
		}
		r, n := javaStep(s, i)
		dst = utf8.AppendRune(dst, r)
		i += n
	}
	return dst
}

// CompareJavaStrings orders two UTF-8 strings as Java's String.compareTo
// orders the Strings they decode to: by UTF-16 code unit, then by length.
// That is code point order (the bytes' order) except that a character
// from U+E000 to U+FFFF comes after every supplementary character, whose
// first unit is a surrogate (U+D800 to U+DBFF).
func CompareJavaStrings(a, b []byte) int {
	if !utf8.Valid(a) || !utf8.Valid(b) {
		a, b = JavaString(nil, a), JavaString(nil, b)
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return bytes.Compare(a, b) // one is a prefix of the other
	}
	for i > 0 && !utf8.RuneStart(a[i]) { // back to the start of the character that differs
		i--
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	ka, kb := utf16Order(ra), utf16Order(rb)
	switch {
	case ka < kb:
		return -1
	case ka > kb:
		return 1
	}
	return 0
}

// utf16Order maps a code point to a number that sorts as its UTF-16 code
// units do.
func utf16Order(r rune) rune {
	if r >= 0xe000 && r <= 0xffff {
		return r + 0x110000
	}
	return r
}
