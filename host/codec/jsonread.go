package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sluicehq/sluice/abi"
)

// JSONToMsgpack appends the msgpack encoding of the one JSON value in js
// to dst. Objects become maps with their keys in the order written;
// integers (no fraction, no exponent) become msgpack ints (a uint64 past
// the int64 range, float64 past that), other numbers float64. Nesting
// deeper than abi.MaxDepth is refused, and so is text that is not valid
// UTF-8 (JSON text is UTF-8, and Jackson refuses it too) and an object
// that names a field twice. Errors name the place of the problem: the
// 1-based byte, or the length of js for input that ends too soon. On an
// error dst is returned as it was (its spare capacity may be written).
//
// It reads js once, writing msgpack as it goes (headers are patched when
// a map or array closes), and allocates nothing once its pooled state
// has grown to the shape of the input.
func JSONToMsgpack(dst, js []byte) ([]byte, error) {
	d := decoders.Get().(*jsonDecoder)
	d.js = js
	d.pos = 0
	d.keys = d.keys[:0]
	out, err := d.value(dst, 0)
	if err == nil {
		err = d.end()
	}
	d.js = nil
	decoders.Put(d)
	if err != nil {
		// encoding/json's order, kept: a bad byte anywhere is the
		// error, before any syntax error that comes earlier
		if i := InvalidUTF8(js); i >= 0 {
			return dst, fmt.Errorf("json: invalid UTF-8 at byte %d", i+1)
		}
		return dst, err
	}
	return out, nil
}

var decoders = sync.Pool{New: func() any { return new(jsonDecoder) }}

// jsonDecoder is the state of one JSONToMsgpack call, pooled so that its
// buffers are reused.
type jsonDecoder struct {
	js   []byte
	pos  int      // the next byte of js to read
	keys []keyRef // the keys of the objects open, innermost last
	// sets index the keys of an object with more than fewFields, by
	// the hash of the key; one for each depth, cleared as reused
	sets [abi.MaxDepth + 1]map[uint64]int
}

// keyRef is where one key's bytes are in dst.
type keyRef struct{ off, end int }

// fewFields keys are compared in turn; an object with more indexes them.
const fewFields = 8

var keySeed = maphash.MakeSeed()

// errBadUTF8 stands for a bad byte in a string: JSONToMsgpack finds it.
var errBadUTF8 = errors.New("invalid UTF-8")

func (d *jsonDecoder) skipSpace() {
	for d.pos < len(d.js) {
		switch d.js[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *jsonDecoder) eof() error {
	return fmt.Errorf("json: unexpected end of input at byte %d", len(d.js))
}

// invalid is a syntax error at the byte at d.pos.
func (d *jsonDecoder) invalid(context string) error {
	r, _ := utf8.DecodeRune(d.js[d.pos:])
	return fmt.Errorf("json: invalid character %s %s at byte %d", quoteRune(r), context, d.pos+1)
}

// quoteRune is encoding/json's quoteChar, for a whole character.
func quoteRune(r rune) string {
	switch r {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(r))
	return "'" + s[1:len(s)-1] + "'"
}

// end checks that only space follows the value.
func (d *jsonDecoder) end() error {
	end := d.pos
	d.skipSpace()
	if d.pos == len(d.js) {
		return nil
	}
	switch c := d.js[d.pos]; {
	case c == '{' || c == '[' || c == '"' || c == '-' || c >= '0' && c <= '9' || c == 't' || c == 'f' || c == 'n':
		return fmt.Errorf("json: more than one value: input goes on after byte %d", end)
	}
	return d.invalid("after top-level value")
}

// value appends the value at d.pos (after any space), nested depth deep.
func (d *jsonDecoder) value(dst []byte, depth int) ([]byte, error) {
	d.skipSpace()
	if d.pos >= len(d.js) {
		return dst, d.eof()
	}
	switch c := d.js[d.pos]; c {
	case '{':
		return d.object(dst, depth)
	case '[':
		return d.array(dst, depth)
	case '"':
		dst, _, err := d.str(dst)
		return dst, err
	case 't':
		return d.literal(append(dst, 0xc3), "true")
	case 'f':
		return d.literal(append(dst, 0xc2), "false")
	case 'n':
		return d.literal(append(dst, 0xc0), "null")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return d.number(dst)
		}
	}
	return dst, d.invalid("looking for beginning of value")
}

func (d *jsonDecoder) literal(dst []byte, word string) ([]byte, error) {
	for i := 0; i < len(word); i, d.pos = i+1, d.pos+1 {
		if d.pos >= len(d.js) {
			return dst, d.eof()
		}
		if d.js[d.pos] != word[i] {
			return dst, d.invalid(fmt.Sprintf("in literal %s (expecting %s)", word, quoteRune(rune(word[i]))))
		}
	}
	return dst, nil
}

func (d *jsonDecoder) tooDeep(depth int) error {
	if depth+1 > abi.MaxDepth {
		return fmt.Errorf("json: nested deeper than %d levels (at byte %d)", abi.MaxDepth, d.pos+1)
	}
	return nil
}

var zeros [5]byte

// patchHeader writes the header of the map or array of n elements whose
// one-byte placeholder is at dst[at], moving its body on when n needs a
// longer header (as abi.AppendMapHeader and AppendArrayHeader choose).
func patchHeader(dst []byte, at, n int, fix, c16, c32 byte) []byte {
	if n <= 15 {
		dst[at] = fix | byte(n)
		return dst
	}
	extra := 2
	if n > math.MaxUint16 {
		extra = 4
	}
	dst = append(dst, zeros[:extra]...)
	copy(dst[at+1+extra:], dst[at+1:len(dst)-extra])
	if extra == 2 {
		dst[at] = c16
		binary.BigEndian.PutUint16(dst[at+1:], uint16(n))
	} else {
		dst[at] = c32
		binary.BigEndian.PutUint32(dst[at+1:], uint32(n))
	}
	return dst
}

func (d *jsonDecoder) array(dst []byte, depth int) ([]byte, error) {
	if err := d.tooDeep(depth); err != nil {
		return dst, err
	}
	at := len(dst)
	dst = append(dst, 0x90)
	d.pos++ // [
	d.skipSpace()
	if d.pos < len(d.js) && d.js[d.pos] == ']' {
		d.pos++
		return dst, nil
	}
	var err error
	for n := 1; ; n++ {
		if dst, err = d.value(dst, depth+1); err != nil {
			return dst, err
		}
		d.skipSpace()
		if d.pos >= len(d.js) {
			return dst, d.eof()
		}
		switch d.js[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return patchHeader(dst, at, n, 0x90, 0xdc, 0xdd), nil
		default:
			return dst, d.invalid("after array element")
		}
	}
}

func (d *jsonDecoder) object(dst []byte, depth int) ([]byte, error) {
	if err := d.tooDeep(depth); err != nil {
		return dst, err
	}
	at := len(dst)
	dst = append(dst, 0x80)
	d.pos++ // {
	first := len(d.keys)
	var err error
	for n := 1; ; n++ {
		d.skipSpace()
		if d.pos >= len(d.js) {
			return dst, d.eof()
		}
		if c := d.js[d.pos]; c != '"' {
			if c == '}' && n == 1 {
				d.pos++
				return dst, nil
			}
			return dst, d.invalid("looking for beginning of object key string")
		}
		keyAt := d.pos
		var off int
		if dst, off, err = d.str(dst); err != nil {
			return dst, err
		}
		d.keys = append(d.keys, keyRef{off, len(dst)})
		if err := d.noteKey(dst, first, depth, keyAt); err != nil {
			return dst, err
		}
		d.skipSpace()
		if d.pos >= len(d.js) {
			return dst, d.eof()
		}
		if d.js[d.pos] != ':' {
			return dst, d.invalid("after object key")
		}
		d.pos++
		if dst, err = d.value(dst, depth+1); err != nil {
			return dst, err
		}
		d.skipSpace()
		if d.pos >= len(d.js) {
			return dst, d.eof()
		}
		switch d.js[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			d.keys = d.keys[:first]
			if m := d.sets[depth]; m != nil && len(m) > 1<<12 {
				d.sets[depth] = nil // not kept for every later object to clear
			}
			return patchHeader(dst, at, n, 0x80, 0xde, 0xdf), nil
		default:
			return dst, d.invalid("after object key:value pair")
		}
	}
}

// noteKey notes the key just written at the end of dst (its msgpack
// string) as one of the object whose keys start at d.keys[first],
// refusing a key the object has already. An object that names a field
// twice is refused: a record would keep both, key-by would read the
// first and JSON readers downstream the last (Jackson's
// STRICT_DUPLICATE_DETECTION refuses it too). The first fewFields keys
// are compared in turn, with no hashing; past that, a hash set.
func (d *jsonDecoder) noteKey(dst []byte, first, depth, keyAt int) error {
	k := d.keys[len(d.keys)-1]
	key := dst[k.off:k.end]
	dup := false
	switch n := len(d.keys) - first; {
	case n <= fewFields:
		for _, o := range d.keys[first : len(d.keys)-1] {
			if bytes.Equal(dst[o.off:o.end], key) {
				dup = true
				break
			}
		}
	default:
		m := d.sets[depth]
		if n == fewFields+1 { // index the keys so far
			if m == nil {
				m = make(map[uint64]int, 4*fewFields)
				d.sets[depth] = m
			}
			clear(m)
			for i, o := range d.keys[first : len(d.keys)-1] {
				m[maphash.Bytes(keySeed, dst[o.off:o.end])] = first + i
			}
		}
		h := maphash.Bytes(keySeed, key)
		if i, ok := m[h]; !ok {
			m[h] = len(d.keys) - 1
		} else if o := d.keys[i]; bytes.Equal(dst[o.off:o.end], key) {
			dup = true
		} else { // two keys with one hash: compare with them all
			for _, o := range d.keys[first : len(d.keys)-1] {
				if bytes.Equal(dst[o.off:o.end], key) {
					dup = true
					break
				}
			}
		}
	}
	if dup {
		return fmt.Errorf("json: duplicate field %q (at byte %d)", key, keyAt+1)
	}
	return nil
}

// plain marks the ASCII bytes that stand for themselves in a string.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func strHeaderLen(n int) int {
	switch {
	case n <= 31:
		return 1
	case n <= math.MaxUint8:
		return 2
	case n <= math.MaxUint16:
		return 3
	}
	return 5
}

func putStrHeader(b []byte, n int) {
	switch len(b) {
	case 1:
		b[0] = 0xa0 | byte(n)
	case 2:
		b[0], b[1] = 0xd9, byte(n)
	case 3:
		b[0] = 0xda
		binary.BigEndian.PutUint16(b[1:], uint16(n))
	default:
		b[0] = 0xdb
		binary.BigEndian.PutUint32(b[1:], uint32(n))
	}
}

// str appends the string at d.pos (its opening quote) and returns where
// its bytes start in dst.
func (d *jsonDecoder) str(dst []byte) ([]byte, int, error) {
	js := d.js
	start := d.pos + 1
	i := start
	for i < len(js) {
		c := js[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			break
		}
		r, n := utf8.DecodeRune(js[i:])
		if r == utf8.RuneError && n == 1 {
			return dst, 0, errBadUTF8
		}
		i += n
	}
	if i >= len(js) {
		return dst, 0, d.eof()
	}
	if js[i] == '"' { // no escapes: the bytes as they are
		n := i - start
		h := len(dst)
		dst = append(dst, zeros[:strHeaderLen(n)]...)
		putStrHeader(dst[h:], n)
		off := len(dst)
		dst = append(dst, js[start:i]...)
		d.pos = i + 1
		return dst, off, nil
	}
	// Escapes only ever shorten the text: room for a header for all the
	// rest of js is room enough, and the string moves back once decoded.
	h := len(dst)
	room := strHeaderLen(len(js) - start)
	dst = append(dst, zeros[:room]...)
	off := len(dst)
	dst = append(dst, js[start:i]...)
	for {
		if i >= len(js) {
			return dst, 0, d.eof()
		}
		c := js[i]
		switch {
		case c == '"':
			n := len(dst) - off
			if hl := strHeaderLen(n); hl < room {
				copy(dst[h+hl:], dst[off:])
				dst = dst[:h+hl+n]
				off = h + hl
				room = hl
			}
			putStrHeader(dst[h:h+room], n)
			d.pos = i + 1
			return dst, off, nil
		case c == '\\':
			i++
			if i >= len(js) {
				return dst, 0, d.eof()
			}
			switch e := js[i]; e {
			case '"', '\\', '/':
				dst = append(dst, e)
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r, err := d.hex4(i + 1)
				if err != nil {
					return dst, 0, err
				}
				i += 4
				if utf16.IsSurrogate(r) {
					// a pair makes one character; a surrogate alone is
					// U+FFFD, as encoding/json has it
					r2 := rune(-1)
					if i+2 < len(js) && js[i+1] == '\\' && js[i+2] == 'u' {
						if v, err := d.hex4(i + 3); err == nil {
							r2 = v
						}
					}
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						r = pair
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				dst = utf8.AppendRune(dst, r)
			default:
				d.pos = i
				return dst, 0, d.invalid("in string escape code")
			}
			i++
		case c < 0x20:
			d.pos = i
			return dst, 0, d.invalid("in string literal")
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, n := utf8.DecodeRune(js[i:])
			if r == utf8.RuneError && n == 1 {
				return dst, 0, errBadUTF8
			}
			dst = append(dst, js[i:i+n]...)
			i += n
		}
	}
}

// hex4 reads the four hex digits of a \u escape at js[i:].
func (d *jsonDecoder) hex4(i int) (rune, error) {
	var r rune
	for j := i; j < i+4; j++ {
		if j >= len(d.js) {
			return 0, d.eof()
		}
		c := d.js[j]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			d.pos = j
			return 0, d.invalid(`in \u hexadecimal character escape`)
		}
		r = r<<4 | rune(c)
	}
	return r, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number appends the number at d.pos: an integer (no fraction, no
// exponent; -0 is 0) as an int, a uint64 when past int64, float64 when
// past both; any other number float64, an error when out of its range.
func (d *jsonDecoder) number(dst []byte) ([]byte, error) {
	js := d.js
	start := d.pos
	i := start
	if js[i] == '-' {
		i++
	}
	if i >= len(js) {
		return dst, d.eof()
	}
	switch c := js[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		for i++; i < len(js) && isDigit(js[i]); i++ {
		}
	default:
		d.pos = i
		return dst, d.invalid("in numeric literal")
	}
	integer := true
	if i < len(js) && js[i] == '.' {
		integer = false
		i++
		if i >= len(js) {
			return dst, d.eof()
		}
		if !isDigit(js[i]) {
			d.pos = i
			return dst, d.invalid("after decimal point in numeric literal")
		}
		for i++; i < len(js) && isDigit(js[i]); i++ {
		}
	}
	if i < len(js) && (js[i] == 'e' || js[i] == 'E') {
		integer = false
		i++
		if i < len(js) && (js[i] == '+' || js[i] == '-') {
			i++
		}
		if i >= len(js) {
			return dst, d.eof()
		}
		if !isDigit(js[i]) {
			d.pos = i
			return dst, d.invalid("in exponent of numeric literal")
		}
		for i++; i < len(js) && isDigit(js[i]); i++ {
		}
	}
	d.pos = i
	text := js[start:i]
	if integer {
		digits, neg := text, text[0] == '-'
		if neg {
			digits = digits[1:]
		}
		if u, ok := parseUint(digits); ok {
			switch {
			case !neg && u <= math.MaxInt64:
				return abi.AppendInt(dst, int64(u)), nil
			case !neg:
				return binary.BigEndian.AppendUint64(append(dst, 0xcf), u), nil
			case u <= 1<<63:
				return abi.AppendInt(dst, int64(-u)), nil // -u wraps to MinInt64 at 1<<63
			}
		}
		// an integer past 64 bits would lose digits as a float
		// (99999999999999999999 became 1e20): refused, as 1e400 is
		f, _ := strconv.ParseFloat(string(text), 64)
		return dst, fmt.Errorf("json: integer %s %w (at byte %d): quote it to keep its digits as a string, or write it with an exponent (%s) for a float",
			text, ErrWideInteger, start+1, strconv.FormatFloat(f, 'g', 3, 64))
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		return dst, fmt.Errorf("json: number %s: %w (at byte %d)", text, err, start+1)
	}
	return abi.AppendFloat(dst, f), nil
}

// ErrWideInteger: a JSON integer past int64 and uint64, which a float
// would hold only approximately. encoding/json made it a float; the
// reader refuses it, as it refuses 1e400.
var ErrWideInteger = errors.New("does not fit in 64 bits")

// parseUint is the value of the decimal digits, and false past uint64.
func parseUint(digits []byte) (uint64, bool) {
	if len(digits) > 20 {
		return 0, false
	}
	var u uint64
	for _, c := range digits {
		if u > (math.MaxUint64-9)/10 { // u*10+9 may not fit
			if u > math.MaxUint64/10 {
				return 0, false
			}
			v := u*10 + uint64(c-'0')
			if v < u*10 {
				return 0, false
			}
			u = v
			continue
		}
		u = u*10 + uint64(c-'0')
	}
	return u, true
}
