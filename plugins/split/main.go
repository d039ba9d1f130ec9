// Command split is a sluice flatMap plugin: it splits the "line" field of
// each record into words and emits one record {"word": w} per word,
// lowercased, with punctuation trimmed from both ends ("Don't!" gives
// "don't"). Words are separated by white space; a record without a line
// emits nothing.
package main

import (
	"unicode"
	"unicode/utf8"

	sdk "github.com/sluicehq/sluice/sdk/go"
)

// word is scratch for the lowercased word being built: no allocation per
// word once it has grown.
var word []byte

func init() {
	sdk.FlatMap(func(r sdk.Record, out sdk.Emitter) error {
		line := r.StrBytes("line")
		for len(line) > 0 {
			var tok []byte
			tok, line = nextField(line)
			word = lower(word[:0], trimPunct(tok))
			if len(word) > 0 {
				out.Emit(sdk.NewRecord().SetStrBytes("word", word))
			}
		}
		return nil
	})
}

// nextField returns the first run of non-space runes in s and the rest.
func nextField(s []byte) (field, rest []byte) {
	i := 0
	for i < len(s) {
		c, n := utf8.DecodeRune(s[i:])
		if !unicode.IsSpace(c) {
			break
		}
		i += n
	}
	j := i
	for j < len(s) {
		c, n := utf8.DecodeRune(s[j:])
		if unicode.IsSpace(c) {
			break
		}
		j += n
	}
	return s[i:j], s[j:]
}

// trimPunct drops punctuation runes from both ends of w.
func trimPunct(w []byte) []byte {
	for len(w) > 0 {
		c, n := utf8.DecodeRune(w)
		if !unicode.IsPunct(c) {
			break
		}
		w = w[n:]
	}
	for len(w) > 0 {
		c, n := utf8.DecodeLastRune(w)
		if !unicode.IsPunct(c) {
			break
		}
		w = w[:len(w)-n]
	}
	return w
}

// lower appends the lowercase form of w to dst.
func lower(dst, w []byte) []byte {
	for len(w) > 0 {
		c, n := utf8.DecodeRune(w)
		dst = utf8.AppendRune(dst, unicode.ToLower(c))
		w = w[n:]
	}
	return dst
}

func main() {}
