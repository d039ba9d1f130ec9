package sdktest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/abi"
)

// fromJSON converts one JSON value to msgpack, keeping the order of object
// keys. Whole numbers become integers, others float64.
func fromJSON(s string) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	b, err := jsonValue(d, nil)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("sdktest: text after the JSON value")
	}
	return b, nil
}

func jsonValue(d *json.Decoder, b []byte) ([]byte, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return abi.AppendNil(b), nil
	case bool:
		return abi.AppendBool(b, t), nil
	case string:
		return abi.AppendStr(b, t), nil
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return abi.AppendInt(b, i), nil
		}
		f, err := t.Float64()
		return abi.AppendFloat(b, f), err
	case json.Delim:
		var body []byte
		n := 0
		for d.More() {
			if t == '{' {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				body = abi.AppendStr(body, k.(string))
			}
			if body, err = jsonValue(d, body); err != nil {
				return nil, err
			}
			n++
		}
		if _, err := d.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		if t == '{' {
			return append(abi.AppendMapHeader(b, n), body...), nil
		}
		return append(abi.AppendArrayHeader(b, n), body...), nil
	}
	return nil, errors.New("sdktest: unexpected JSON token")
}

// toJSON renders one msgpack value as JSON, map keys in their order; a
// whole float keeps a ".0" and binary becomes a base64 string.
func toJSON(b []byte) (string, error) {
	var w bytes.Buffer
	if err := writeJSON(&w, b); err != nil {
		return "", err
	}
	return w.String(), nil
}

func writeJSON(w *bytes.Buffer, b []byte) error {
	switch abi.TypeOf(b) {
	case abi.TypeNil:
		w.WriteString("null")
	case abi.TypeBool:
		v, _ := abi.ReadBool(b)
		w.WriteString(strconv.FormatBool(v))
	case abi.TypeInt:
		v, err := abi.ReadInt(b)
		if err != nil {
			return err
		}
		w.WriteString(strconv.FormatInt(v, 10))
	case abi.TypeFloat:
		v, err := abi.ReadFloat(b)
		if err != nil {
			return err
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("sdktest: NaN or infinity has no JSON form")
		}
		f := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(f, ".e") {
			f += ".0" // keep a whole float a float: 12.0, not 12
		}
		w.WriteString(f)
	case abi.TypeStr:
		s, err := abi.ReadStr(b)
		if err != nil {
			return err
		}
		q, _ := json.Marshal(string(s))
		w.Write(q)
	case abi.TypeBin:
		end, err := abi.Skip(b, 0)
		if err != nil {
			return err
		}
		n := end - 2
		body := 2
		if b[0] == 0xc5 {
			n, body = end-3, 3
		} else if b[0] == 0xc6 {
			n, body = end-5, 5
		}
		w.WriteString(`"` + base64.StdEncoding.EncodeToString(b[body:body+n]) + `"`)
	case abi.TypeArray, abi.TypeMap:
		return writeContainer(w, b)
	default:
		return errors.New("sdktest: no JSON form for msgpack " + abi.TypeOf(b).String())
	}
	return nil
}

func writeContainer(w *bytes.Buffer, b []byte) error {
	isMap := abi.TypeOf(b) == abi.TypeMap
	n, off, err := abi.Len(b)
	if err != nil {
		return err
	}
	open, end := byte('['), byte(']')
	if isMap {
		open, end = '{', '}'
	}
	w.WriteByte(open)
	for i := 0; i < n; i++ {
		if i > 0 {
			w.WriteByte(',')
		}
		if isMap {
			kEnd, err := abi.Skip(b, off)
			if err != nil {
				return err
			}
			if abi.TypeOf(b[off:]) != abi.TypeStr {
				return errors.New("sdktest: a map key is not a string")
			}
			if err := writeJSON(w, b[off:kEnd]); err != nil {
				return err
			}
			w.WriteByte(':')
			off = kEnd
		}
		vEnd, err := abi.Skip(b, off)
		if err != nil {
			return err
		}
		if err := writeJSON(w, b[off:vEnd]); err != nil {
			return err
		}
		off = vEnd
	}
	w.WriteByte(end)
	return nil
}
