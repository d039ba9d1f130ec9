package connector

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

func init() {
	registerSource(spec.Elements, func(_ *Builtin, o *options, _ *pipeline.Operator, _, parallelism int) (runtime.Source, error) {
		return newElements(o, parallelism)
	})
}

// elementsSource emits an inline list of values, in order, like Flink's
// fromElements: option values (a list). A map value becomes a msgpack map,
// a list an array and a scalar a scalar. Parallelism must be 1. Records
// have no event time.
//
// Maps keep the key order the pipeline file gives (pipeline.Map); a plain
// map[string]any (from code) is written with sorted keys.
type elementsSource struct {
	records abi.Writer // every record, encoded once
	offsets []int      // offsets[i] is where record i starts
	next    int        // the records before it were emitted: the checkpointed position
	total   int        // what this run emits
}

func newElements(o *options, parallelism int) (*elementsSource, error) {
	v, ok := o.get("values")
	if !ok {
		o.fail("option \"values\" is required: the list of records to emit")
	}
	s := &elementsSource{}
	if err := o.finish(); err != nil {
		return nil, err
	}
	if parallelism != 1 {
		return nil, o.errorf("parallelism must be 1, as for Flink's fromElements (got %d)", parallelism)
	}
	list, isList := v.([]any)
	if !isList {
		return nil, o.errorf("option \"values\" must be a list, got %T", v)
	}
	for i, e := range list {
		s.offsets = append(s.offsets, len(s.records.Buf))
		b := appendNoTimeNoKey(s.records.Buf)
		b, err := appendYAML(b, e, 0)
		if err != nil {
			return nil, o.errorf("values[%d]: %v", i, err)
		}
		s.records.Buf = b
		s.records.Count++
	}
	s.offsets = append(s.offsets, len(s.records.Buf))
	s.total = s.records.Count
	return s, nil
}

func (s *elementsSource) Open(*runtime.OpenContext) error { return nil }
func (s *elementsSource) Total() int64                    { return int64(s.total) }
func (s *elementsSource) Close() error                    { return nil }

// Run emits the values in batches.
func (s *elementsSource) Run(ctx context.Context, out runtime.Collector) error {
	for i := s.next; i < s.records.Count; {
		if err := ctx.Err(); err != nil {
			return err
		}
		j := i + 1
		for j < s.records.Count && j-i < maxBatchRecords && s.offsets[j+1]-s.offsets[i] <= maxBatchBytes {
			j++
		}
		s.next = j // before Emit, which may snapshot the position
		if err := out.Emit(0, s.records.Buf[s.offsets[i]:s.offsets[j]], j-i); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// SnapshotState implements runtime.CheckpointedSource: the position is
// one split element, the uvarint index of the next value to emit.
func (s *elementsSource) SnapshotState(checkpoint.ID) (split, union [][]byte, err error) {
	return [][]byte{binary.AppendUvarint(nil, uint64(s.next))}, nil, nil
}

// RestoreState implements runtime.CheckpointedSource.
func (s *elementsSource) RestoreState(r checkpoint.Restore) error {
	if len(r.Split) == 0 && len(r.Union) == 0 {
		return nil
	}
	if len(r.Split) != 1 || len(r.Union) != 0 {
		return fmt.Errorf("elements: the checkpoint holds %d split and %d union elements, want the one position an elements source writes", len(r.Split), len(r.Union))
	}
	n, k := binary.Uvarint(r.Split[0])
	if k <= 0 || k != len(r.Split[0]) || n > uint64(s.records.Count) {
		return fmt.Errorf("elements: position %x is not one of the %d values (did the values change?)", r.Split[0], s.records.Count)
	}
	s.next = int(n)
	s.total = s.records.Count - s.next
	return nil
}

// appendYAML appends a value as the YAML parser produced it (scalars,
// []any, map[string]any) as msgpack.
func appendYAML(b []byte, v any, depth int) ([]byte, error) {
	if depth > abi.MaxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", abi.MaxDepth)
	}
	switch x := v.(type) {
	case nil:
		return abi.AppendNil(b), nil
	case bool:
		return abi.AppendBool(b, x), nil
	case int:
		return abi.AppendInt(b, int64(x)), nil
	case int64:
		return abi.AppendInt(b, x), nil
	case uint64:
		if x > math.MaxInt64 { // a uint64, as the file source reads one from JSON
			return binary.BigEndian.AppendUint64(append(b, 0xcf), x), nil
		}
		return abi.AppendInt(b, int64(x)), nil
	case float64:
		return abi.AppendFloat(b, x), nil
	case string:
		return abi.AppendStr(b, x), nil
	case time.Time: // an unquoted YAML timestamp
		return abi.AppendStr(b, x.Format(time.RFC3339Nano)), nil
	case []any:
		b = abi.AppendArrayHeader(b, len(x))
		for _, e := range x {
			var err error
			if b, err = appendYAML(b, e, depth+1); err != nil {
				return nil, err
			}
		}
		return b, nil
	case pipeline.Map:
		b = abi.AppendMapHeader(b, len(x.Keys))
		for _, k := range x.Keys {
			var err error
			if b, err = appendYAML(abi.AppendStr(b, k), x.Values[k], depth+1); err != nil {
				return nil, err
			}
		}
		return b, nil
	case map[string]any:
		b = abi.AppendMapHeader(b, len(x))
		for _, k := range sortedKeys(x) {
			var err error
			if b, err = appendYAML(abi.AppendStr(b, k), x[k], depth+1); err != nil {
				return nil, err
			}
		}
		return b, nil
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = e
		}
		return appendYAML(b, m, depth)
	}
	return nil, fmt.Errorf("cannot turn a %T into a record value", v)
}
