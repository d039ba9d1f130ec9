package kafka

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/codec"
)

// decode appends the msgpack value that b holds in format f to dst. A nil
// b (a tombstone, or no key) is nil in every format. columns names a csv
// row's fields.
func decode(dst []byte, f Format, b []byte, columns []string) ([]byte, error) {
	if b == nil {
		return abi.AppendNil(dst), nil
	}
	switch f {
	case FormatJSON:
		out, err := codec.JSONToMsgpack(dst, bytes.TrimSpace(b))
		if err != nil {
			return dst, fmt.Errorf("malformed JSON: %w", err)
		}
		return out, nil
	case FormatMsgpack:
		end, err := abi.Skip(b, 0)
		if err != nil {
			return dst, fmt.Errorf("malformed msgpack: %w", err)
		}
		if end != len(b) {
			return dst, fmt.Errorf("malformed msgpack: %d bytes after the value", len(b)-end)
		}
		return append(dst, b...), nil
	case FormatRaw:
		if utf8.Valid(b) {
			return abi.AppendStrBytes(dst, b), nil
		}
		return abi.AppendBin(dst, b), nil
	case FormatCSV:
		return decodeCSV(dst, b, columns)
	}
	return dst, fmt.Errorf("unknown format %q", f)
}

func decodeCSV(dst, b []byte, columns []string) ([]byte, error) {
	if !utf8.Valid(b) {
		return dst, fmt.Errorf("invalid UTF-8 at byte %d", codec.InvalidUTF8(b)+1)
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	fields, err := r.Read()
	if err != nil {
		return dst, fmt.Errorf("malformed CSV: %w", err)
	}
	if _, err := r.Read(); err == nil {
		return dst, errors.New("malformed CSV: more than one row")
	}
	if columns == nil {
		dst = abi.AppendArrayHeader(dst, len(fields))
		for _, f := range fields {
			dst = appendCSVField(dst, f)
		}
		return dst, nil
	}
	if len(fields) != len(columns) {
		return dst, fmt.Errorf("CSV row has %d fields, csv-columns names %d", len(fields), len(columns))
	}
	dst = abi.AppendMapHeader(dst, len(fields))
	for i, f := range fields {
		dst = appendCSVField(abi.AppendStr(dst, columns[i]), f)
	}
	return dst, nil
}

// appendCSVField appends a CSV field as an int or a float when that number
// writes back as the same text (so 007, +1 and 1e3 stay strings), else as
// a string.
func appendCSVField(dst []byte, f string) []byte {
	if v, err := strconv.ParseInt(f, 10, 64); err == nil && strconv.FormatInt(v, 10) == f {
		return abi.AppendInt(dst, v)
	}
	if v, err := strconv.ParseFloat(f, 64); err == nil && strconv.FormatFloat(v, 'f', -1, 64) == f {
		return abi.AppendFloat(dst, v)
	}
	return abi.AppendStr(dst, f)
}

// encode appends the bytes of the msgpack value v in format f to dst. A
// nil value is nil (no bytes: a tombstone, or no key).
func encode(dst []byte, f Format, v []byte) ([]byte, error) {
	if abi.IsNil(v) {
		return nil, nil
	}
	switch f {
	case FormatJSON:
		return codec.MsgpackToJSON(dst, v)
	case FormatMsgpack:
		return append(dst, v...), nil
	case FormatRaw:
		return appendScalarText(dst, v)
	case FormatCSV:
		return encodeCSV(dst, v)
	}
	return dst, fmt.Errorf("unknown format %q", f)
}

// appendScalarText appends a scalar's text: a string's or binary's bytes,
// a number's or boolean's JSON text.
func appendScalarText(dst, v []byte) ([]byte, error) {
	switch t := abi.TypeOf(v); t {
	case abi.TypeStr:
		s, err := abi.ReadStr(v)
		return append(dst, s...), err
	case abi.TypeBin:
		b, err := readBin(v)
		return append(dst, b...), err
	case abi.TypeInt, abi.TypeFloat, abi.TypeBool:
		return codec.MsgpackToJSON(dst, v)
	default:
		return dst, fmt.Errorf("format raw writes strings, binary, numbers and booleans, not %s", t.Phrase())
	}
}

// encodeCSV writes one CSV row: a map's values in order, an array's
// elements, or a scalar as one field; nested values as their JSON text.
func encodeCSV(dst, v []byte) ([]byte, error) {
	var fields []string
	field := func(x []byte) error {
		var s []byte
		var err error
		switch abi.TypeOf(x) {
		case abi.TypeMap, abi.TypeArray:
			s, err = codec.MsgpackToJSON(nil, x)
		case abi.TypeNil:
		default:
			s, err = appendScalarText(nil, x)
		}
		fields = append(fields, string(s))
		return err
	}
	switch abi.TypeOf(v) {
	case abi.TypeMap, abi.TypeArray:
		isMap := abi.TypeOf(v) == abi.TypeMap
		n, off, err := abi.Len(v)
		if err != nil {
			return dst, err
		}
		for i := 0; i < n; i++ {
			if isMap { // skip the key
				if off, err = abi.Skip(v, off); err != nil {
					return dst, err
				}
			}
			end, err := abi.Skip(v, off)
			if err != nil {
				return dst, err
			}
			if err := field(v[off:end]); err != nil {
				return dst, err
			}
			off = end
		}
	default:
		if err := field(v); err != nil {
			return dst, err
		}
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(fields); err != nil {
		return dst, err
	}
	w.Flush()
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// readBin returns the bytes of the msgpack binary at v[0] (no copy).
func readBin(v []byte) ([]byte, error) {
	var n, hdr int
	switch {
	case len(v) >= 2 && v[0] == 0xc4:
		n, hdr = int(v[1]), 2
	case len(v) >= 3 && v[0] == 0xc5:
		n, hdr = int(binary.BigEndian.Uint16(v[1:])), 3
	case len(v) >= 5 && v[0] == 0xc6:
		n, hdr = int(binary.BigEndian.Uint32(v[1:])), 5
	default:
		return nil, errors.New("truncated binary value")
	}
	if len(v)-hdr < n {
		return nil, errors.New("truncated binary value")
	}
	return v[hdr : hdr+n], nil
}
