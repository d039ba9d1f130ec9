package sdktest

import "github.com/sluicehq/sluice/sdk/go/internal/mpvalue"

// Result is what an operator produced in a run.
type Result struct {
	// Describe is the map sluice_describe emitted (kind, sdk, name,
	// outputs, keyed).
	Describe map[string]any
	// Out holds the output records by side-output tag, "" for the main
	// output, in emission order.
	Out map[string][]Record
	// Keys is a key selector's output, one key per input.
	Keys []any
	// Channels is a partitioner's output, one channel per input.
	Channels []int

	host *fakeHost
}

// Main returns the records of the main output.
func (r *Result) Main() []Record { return r.Out[""] }

// Values returns the fields of the records emitted to tag ("" is main).
func (r *Result) Values(tag string) []map[string]any {
	out := []map[string]any{}
	for _, rec := range r.Out[tag] {
		out = append(out, rec.Value)
	}
	return out
}

// JSON returns the records emitted to tag as JSON objects in field order.
func (r *Result) JSON(tag string) []string {
	out := []string{}
	for _, rec := range r.Out[tag] {
		out = append(out, rec.JSON())
	}
	return out
}

// State returns the keyed state left under (slot, key) at the end of the
// run, decoded; key is given as in Record.WithKey.
func (r *Result) State(slot int, key any) (any, bool) {
	k, err := mpvalue.Encode(nil, key)
	if err != nil {
		return nil, false
	}
	raw, ok := r.host.state[stateKey{int32(slot), string(k)}]
	if !ok {
		return nil, false
	}
	v, err := mpvalue.Decode(raw)
	return v, err == nil
}

// List returns the list state left under (slot, key), decoded; ok is
// false when there is none.
func (r *Result) List(slot int, key any) ([]any, bool) {
	k, err := mpvalue.Encode(nil, key)
	if err != nil || r.host.kinds == nil {
		return nil, false
	}
	l, ok := r.host.kinds.lists[stateKey{int32(slot), string(k)}]
	if !ok {
		return nil, false
	}
	out := make([]any, len(l))
	for i, raw := range l {
		if out[i], err = mpvalue.Decode(raw); err != nil {
			return nil, false
		}
	}
	return out, true
}

// Map returns the map state left under (slot, key), decoded; ok is false
// when there is none.
func (r *Result) Map(slot int, key any) (map[string]any, bool) {
	k, err := mpvalue.Encode(nil, key)
	if err != nil || r.host.kinds == nil {
		return nil, false
	}
	m, ok := r.host.kinds.maps[stateKey{int32(slot), string(k)}]
	if !ok {
		return nil, false
	}
	out := make(map[string]any, len(m))
	for uk, raw := range m {
		if out[uk], err = mpvalue.Decode(raw); err != nil {
			return nil, false
		}
	}
	return out, true
}
