package codec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/sluicehq/sluice/abi"
)

// oldJSONToMsgpack is the encoding/json-based decoder JSONToMsgpack
// replaced, kept as the oracle of the differential tests. It appends the msgpack encoding of the one JSON value in js
// to dst. Objects become maps with their keys in the order written;
// integers (no fraction, no exponent) become msgpack ints, other numbers
// float64. Nesting deeper than abi.MaxDepth is refused, and so is text
// that is not valid UTF-8 (encoding/json would make each bad byte U+FFFD;
// JSON text is UTF-8, and Jackson refuses it too).
func oldJSONToMsgpack(dst, js []byte) ([]byte, error) {
	if !utf8.Valid(js) {
		return dst, fmt.Errorf("json: invalid UTF-8 at byte %d", InvalidUTF8(js)+1)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	out, err := oldFromJSON(dec, dst, 0)
	if err != nil {
		return dst, oldJSONErr(dec, err)
	}
	if end := dec.InputOffset(); dec.More() || !oldAtEOF(dec) {
		return dst, fmt.Errorf("json: more than one value: input goes on after byte %d", end)
	}
	return out, nil
}

func oldAtEOF(dec *json.Decoder) bool {
	_, err := dec.Token()
	return err == io.EOF
}

func oldJSONErr(dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("json: %v at byte %d", se, se.Offset)
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("json: unexpected end of input at byte %d", dec.InputOffset())
	}
	return fmt.Errorf("json: %w (at byte %d)", err, dec.InputOffset())
}

var oldErrTooDeep = fmt.Errorf("nested deeper than %d levels", abi.MaxDepth)

func oldFromJSON(dec *json.Decoder, dst []byte, depth int) ([]byte, error) {
	tok, err := dec.Token()
	if err != nil {
		return dst, err
	}
	switch v := tok.(type) {
	case json.Delim:
		if depth+1 > abi.MaxDepth {
			return dst, oldErrTooDeep
		}
		var body []byte
		var keys oldFieldNames
		n := 0
		for dec.More() {
			if v == '{' {
				k, err := dec.Token()
				if err != nil {
					return dst, err
				}
				if keys.seen(k.(string)) {
					return dst, fmt.Errorf("duplicate field %q", k)
				}
				body = abi.AppendStr(body, k.(string))
			}
			if body, err = oldFromJSON(dec, body, depth+1); err != nil {
				return dst, err
			}
			n++
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return dst, err
		}
		if v == '{' {
			dst = abi.AppendMapHeader(dst, n)
		} else {
			dst = abi.AppendArrayHeader(dst, n)
		}
		return append(dst, body...), nil
	case string:
		return abi.AppendStr(dst, v), nil
	case json.Number:
		return oldAppendNumber(dst, string(v))
	case bool:
		return abi.AppendBool(dst, v), nil
	case nil:
		return abi.AppendNil(dst), nil
	}
	return dst, fmt.Errorf("unexpected token %v", tok)
}

// oldFieldNames are the keys of one object so far. An object that names a
// field twice is refused: a record would keep both, key-by would read the
// first and JSON readers downstream the last (Jackson's
// STRICT_DUPLICATE_DETECTION refuses it too). A few keys are compared in
// turn; more go into a map.
type oldFieldNames struct {
	few  [8]string
	n    int
	many map[string]struct{}
}

// seen reports whether k was seen before, and notes it.
func (f *oldFieldNames) seen(k string) bool {
	if f.many == nil {
		for _, s := range f.few[:f.n] {
			if s == k {
				return true
			}
		}
		if f.n < len(f.few) {
			f.few[f.n] = k
			f.n++
			return false
		}
		f.many = make(map[string]struct{}, 2*len(f.few))
		for _, s := range f.few {
			f.many[s] = struct{}{}
		}
	}
	if _, ok := f.many[k]; ok {
		return true
	}
	f.many[k] = struct{}{}
	return false
}

func oldAppendNumber(dst []byte, s string) ([]byte, error) {
	if oldIsInteger(s) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return abi.AppendInt(dst, i), nil
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return binary.BigEndian.AppendUint64(append(dst, 0xcf), u), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return dst, fmt.Errorf("number %s: %w", s, err)
	}
	return abi.AppendFloat(dst, f), nil
}

func oldIsInteger(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return false
		}
	}
	return true
}
