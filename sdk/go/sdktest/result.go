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
