package sdktest

import (
	"strings"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/sdk/go/internal/mpvalue"
)

// Record is a record going into an operator under test, or one that came
// out of it.
//
// Values decode to plain Go types: integers are int64, floats float64,
// nested values []any and map[string]any. To compare output with field
// order included, use JSON.
type Record struct {
	Port    int    // input: the input port (1 is a co-operator's second input); output: the output port
	Tag     string // output: the side-output tag, "" for the main output
	Time    int64  // event time in ms, when HasTime
	HasTime bool
	Key     any            // the envelope key; nil when unkeyed
	Value   map[string]any // the fields

	raw  []byte // the value as msgpack, in field order
	err  error  // a problem building an input record
	mark int    // Watermark or ProcessingTime: not a record
}

// Map returns an input record with the given fields. Its msgpack map has
// the keys sorted; use JSON to choose the order.
func Map(fields map[string]any) Record {
	raw, err := mpvalue.Encode(nil, fields)
	return Record{Value: fields, raw: raw, err: err}
}

// JSON returns an input record from a JSON object, keeping its key order.
// Whole numbers become integers and others floats, as a host reading
// JSON lines does. A malformed object fails the run that uses it.
func JSON(object string) Record {
	raw, err := fromJSON(object)
	if err == nil && abi.TypeOf(raw) != abi.TypeMap {
		err = errNotObject
	}
	if err != nil {
		return Record{err: err}
	}
	m, err := mpvalue.DecodeMap(raw)
	return Record{Value: m, raw: raw, err: err}
}

// JSONLines returns one input record per non-empty line of text.
func JSONLines(text string) []Record {
	var out []Record
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) != "" {
			out = append(out, JSON(line))
		}
	}
	return out
}

// WithKey returns r with the envelope key k (a string, an integer, a
// float, a bool or a []any of them), as a keyBy upstream would set it.
func (r Record) WithKey(k any) Record {
	r.Key = k
	return r
}

// WithTime returns r with the event time ms.
func (r Record) WithTime(ms int64) Record {
	r.Time, r.HasTime = ms, true
	return r
}

// OnPort returns r arriving on input port p (0 or 1).
func (r Record) OnPort(p int) Record {
	r.Port = p
	return r
}

// JSON renders the record's fields as a JSON object in field order.
func (r Record) JSON() string {
	s, err := toJSON(r.raw)
	if err != nil {
		return "!" + err.Error()
	}
	return s
}

// envelope encodes r as a batch record; keyBy, when set, replaces the key
// with that field's value.
func (r Record) envelope(dst []byte, keyBy string) ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	var key []byte
	if keyBy != "" {
		raw, ok, err := abi.MapField(r.raw, keyBy)
		if err != nil || !ok {
			return nil, errKeyBy(keyBy)
		}
		key = raw
	} else if r.Key != nil {
		var err error
		if key, err = mpvalue.Encode(nil, r.Key); err != nil {
			return nil, err
		}
	}
	return abi.AppendEnvelope(dst, r.Time, r.HasTime, key, r.raw), nil
}

// output decodes an emitted envelope.
func output(rec abi.Record, port int32, tag string) (Record, error) {
	out := Record{Port: int(port), Tag: tag, Time: rec.Time, HasTime: rec.HasTime}
	out.raw = append([]byte(nil), rec.Value...)
	if rec.Key != nil {
		k, err := mpvalue.Decode(rec.Key)
		if err != nil {
			return out, err
		}
		out.Key = k
	}
	m, err := mpvalue.DecodeMap(out.raw)
	out.Value = m
	return out, err
}

// Window returns the header record a host sends first in a call of a
// process-window plugin (abi.AppendWindowHeader): the window [start,
// end) of key (nil for a window-all). Follow it with the window's
// records in the same Run, with a BatchSize that holds them all: the
// call is one window.
func Window(start, end int64, key any) Record {
	r := Map(map[string]any{abi.WindowStartKey: start, abi.WindowEndKey: end})
	r.Key = key
	return r.WithTime(end - 1)
}
