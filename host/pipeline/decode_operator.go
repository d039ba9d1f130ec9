package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/host/connector/spec"
)

// operatorKeys are the keys an operator may hold besides its kind.
var operatorKeys = []string{"id", "input", "connect", "key-by", "partition", "parallelism",
	"max-parallelism", "chaining", "start-new-chain", "slot-sharing-group", "config", "on-error", "window", "window-all"}

// Partition strategies a user may name (custom takes a mapping).
var partitionNames = []string{"forward", "rebalance", "rescale", "shuffle", "global", "broadcast"}

func (d *decoder) operators(p *Pipeline, n *yaml.Node) {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "operators must be a list, not %s", describe(n))
		return
	}
	if len(n.Content) == 0 {
		d.errorf(n, "operators must not be empty: a pipeline needs at least a source")
		return
	}
	for i, c := range n.Content {
		if op := d.operator(c, i); op != nil {
			p.Operators = append(p.Operators, op)
		}
	}
}

// operator decodes one entry of operators:. Inputs hold only what was
// written; validate resolves the default input.
func (d *decoder) operator(n *yaml.Node, index int) *Operator {
	ps, ok := d.mapping(n, fmt.Sprintf("operator #%d", index+1))
	if !ok {
		return nil
	}
	op := &Operator{Pos: nodePos(deref(n)), KeyPos: map[string]Pos{}}
	for _, kv := range ps {
		if kv.Key.Value == "id" {
			if id, ok := d.str(kv.Val, "operator id"); ok {
				if idPattern.MatchString(id) {
					op.ID = id
				} else {
					d.errorf(kv.Val, "invalid operator id %q: use letters, digits, _ and -", id)
				}
			}
		}
	}
	where := "operator '" + op.ID + "'"
	if op.ID == "" {
		where = fmt.Sprintf("operator #%d", index+1)
		if !hasKey(ps, "id") {
			d.errorf(n, "%s needs an id", where)
		}
	}
	var kindKeys []*yaml.Node
	for _, kv := range ps {
		k, v := kv.Key.Value, kv.Val
		op.KeyPos[k] = nodePos(kv.Key)
		if isKind(k) {
			kindKeys = append(kindKeys, kv.Key)
			if len(kindKeys) == 1 {
				op.Kind = Kind(k)
				d.kindValue(op, v, where)
			}
			continue
		}
		switch k {
		case "id":
		case "input":
			op.Inputs = append(op.Inputs, d.inputs(v, "input")...)
		case "connect":
			if deref(v).Kind != yaml.SequenceNode {
				d.skipShape[op] = true
			}
			op.Inputs = append(op.Inputs, d.inputs(v, "connect")...)
		case "key-by":
			op.KeyBy = d.keyBy(v)
		case "partition":
			op.Partition = d.partition(v)
		case "parallelism":
			op.Parallelism, _ = d.integer(v, "parallelism", 1, MaxParallelismBound)
		case "max-parallelism":
			op.MaxParallelism, _ = d.integer(v, "max-parallelism", 1, MaxParallelismBound)
		case "chaining":
			if c, ok := d.boolean(v, "chaining"); ok {
				op.DisableChaining = !c
			}
		case "start-new-chain":
			op.StartNewChain, _ = d.boolean(v, "start-new-chain")
		case "slot-sharing-group":
			op.SlotSharingGroup, _ = d.str(v, "slot-sharing-group")
		case "config":
			op.Config = d.config(v, "config")
			op.ConfigPos = configPos(v)
		case "window", "window-all":
			if op.Window != nil {
				d.errorf(kv.Key, "%s gives both window and window-all: give one", where)
				continue
			}
			op.Window = d.window(v, k == "window-all", where)
		case "on-error":
			op.OnError, _ = d.oneOf(v, "on-error", "fail", "skip", "dead-letter")
		default:
			if d.notSupported(kv.Key, "operator", where) {
				continue
			}
			known := append([]string(nil), operatorKeys...)
			for _, kd := range Kinds {
				known = append(known, string(kd))
			}
			d.unknownKey(kv.Key, where, known)
		}
	}
	switch len(kindKeys) {
	case 0:
		names := make([]string, len(Kinds))
		for i, k := range Kinds {
			names[i] = string(k)
		}
		d.errorf(n, "%s has no kind: give exactly one of %s", where, strings.Join(names, ", "))
	case 1:
	default:
		names := make([]string, len(kindKeys))
		for i, k := range kindKeys {
			names[i] = k.Value
		}
		d.errorf(kindKeys[1], "%s has %d kinds (%s): give exactly one", where, len(kindKeys), strings.Join(names, ", "))
	}
	if _, ok := op.KeyPos["input"]; ok {
		if _, ok := op.KeyPos["connect"]; ok {
			d.errorf(n, "%s gives both input and connect: a co-operator reads connect, others read input", where)
			d.skipShape[op] = true
		}
	}
	if op.KeyBy != nil && op.Partition != nil {
		d.errorf(n, "%s gives both key-by and partition: an input edge has one strategy (key-by is HASH)", where)
	}
	for _, in := range op.Inputs {
		if in.Partition == nil {
			continue
		}
		if op.KeyBy != nil || op.Partition != nil {
			d.errs.errorf(d.file, in.Partition.Pos, "%s gives a partition on input %q and a %s on the operator: partition each input, or the operator, not both", where, in.Operator, map[bool]string{true: "key-by", false: "partition"}[op.KeyBy != nil])
			break
		}
	}
	return op
}

// kindValue decodes the value of the operator's kind key.
func (d *decoder) kindValue(op *Operator, v *yaml.Node, where string) {
	switch k := op.Kind; {
	case k == KindSource:
		op.Source = d.connector(v, spec.Source)
	case k == KindSink:
		op.Sink = d.connector(v, spec.Sink)
	case k.UsesPlugin():
		op.Plugin, _ = d.str(v, string(k)+" plugin name")
	case (k == KindMinBy || k == KindMaxBy) && deref(v).Kind == yaml.MappingNode:
		d.byAggregation(op, v, where)
	case k.IsAggregation():
		op.Field, _ = d.str(v, string(k)+" field")
	case k == KindCount:
		if b, ok := d.boolean(v, "count"); ok && !b {
			d.errorf(v, "%s: count must be true (count: true counts records per key)", where)
		}
	}
}

// byAggregation decodes min-by or max-by written as a mapping, Flink's
// minBy(field, first): { field: f, first: false } keeps the later of tied
// records.
func (d *decoder) byAggregation(op *Operator, v *yaml.Node, where string) {
	what := string(op.Kind)
	ps, ok := d.mapping(v, what)
	if !ok {
		return
	}
	first := true
	for _, kv := range ps {
		switch kv.Key.Value {
		case "field":
			op.Field, _ = d.str(kv.Val, what+" field")
		case "first":
			first, _ = d.boolean(kv.Val, what+" first")
		default:
			d.unknownKey(kv.Key, what+" of "+where, []string{"field", "first"})
		}
	}
	if !hasKey(ps, "field") {
		d.errorf(v, "%s: %s needs a field (%s: {field: f, first: true|false})", where, what, what)
	}
	op.Last = !first
}

// inputs decodes input: or connect:, one name or a list of names, each
// "op" or "op.tag" (side output tag of process operator op).
func (d *decoder) inputs(v *yaml.Node, what string) []Input {
	v = deref(v)
	var items []*yaml.Node
	switch v.Kind {
	case yaml.SequenceNode:
		if len(v.Content) == 0 {
			d.errorf(v, "%s must not be empty", what)
		}
		items = v.Content
	default:
		if what == "connect" {
			d.errorf(v, "connect must be a list of two inputs, not %s", describe(v))
			return nil
		}
		items = []*yaml.Node{v}
	}
	var out []Input
	for _, it := range items {
		ref, part := it, (*PartitionSpec)(nil)
		if deref(it).Kind == yaml.MappingNode {
			if ref, part = d.partitionedInput(it, what); ref == nil {
				continue
			}
		}
		s, ok := d.str(ref, what)
		if !ok {
			continue
		}
		opID, tag, side := strings.Cut(s, ".")
		if !idPattern.MatchString(opID) || (side && !idPattern.MatchString(tag)) {
			d.errorf(ref, "invalid %s %q: write an operator id, or id.tag for a side output", what, s)
			continue
		}
		out = append(out, Input{Operator: opID, SideOutput: tag, Pos: nodePos(deref(ref)), Partition: part})
	}
	return out
}

// fieldList reads one field name or a list of them (a composite key), none
// twice.
func (d *decoder) fieldList(v *yaml.Node, what string) []string {
	v = deref(v)
	if v.Kind != yaml.SequenceNode {
		if s, ok := d.str(v, what); ok {
			return []string{s}
		}
		return nil
	}
	if len(v.Content) == 0 {
		d.errorf(v, "%s must name at least one field", what)
		return nil
	}
	var out []string
	for _, f := range v.Content {
		if s, ok := d.str(f, what+" field"); ok {
			if slices.Contains(out, s) {
				d.errorf(f, "%s names field %q twice", what, s)
			}
			out = append(out, s)
		}
	}
	return out
}

// keyBy decodes key-by: field, [f1, f2] or {plugin: name}.
func (d *decoder) keyBy(v *yaml.Node) *KeySpec {
	v = deref(v)
	ks := &KeySpec{Pos: nodePos(v)}
	switch v.Kind {
	case yaml.SequenceNode:
		if len(v.Content) == 0 {
			d.errorf(v, "key-by must name at least one field")
			return nil
		}
		seen := map[string]bool{}
		for _, f := range v.Content {
			if s, ok := d.str(f, "key-by field"); ok {
				if seen[s] {
					d.errorf(f, "key-by names field %q twice", s)
				}
				seen[s] = true
				ks.Fields = append(ks.Fields, s)
				ks.FieldPos = append(ks.FieldPos, nodePos(f))
			}
		}
	case yaml.MappingNode:
		ps, _ := d.mapping(v, "key-by")
		for _, kv := range ps {
			if kv.Key.Value != "plugin" {
				d.unknownKey(kv.Key, "key-by", []string{"plugin"})
				continue
			}
			ks.Plugin, _ = d.str(kv.Val, "key-by plugin")
		}
		if !hasKey(ps, "plugin") {
			d.errorf(v, "key-by as a mapping needs plugin: a key-selector plugin")
		}
	default:
		s, ok := d.str(v, "key-by")
		if !ok {
			return nil
		}
		ks.Fields, ks.FieldPos = []string{s}, []Pos{nodePos(v)}
	}
	return ks
}

// partitionedInput decodes an input written as {from: op, partition: p}:
// the node naming the operator, and the partition (nil when not given).
func (d *decoder) partitionedInput(n *yaml.Node, what string) (*yaml.Node, *PartitionSpec) {
	ps, ok := d.mapping(n, what)
	if !ok {
		return nil, nil
	}
	var from *yaml.Node
	var part *PartitionSpec
	for _, kv := range ps {
		switch kv.Key.Value {
		case "from":
			from = kv.Val
		case "partition":
			part = d.partition(kv.Val)
		default:
			d.unknownKey(kv.Key, "the "+what+" entry", []string{"from", "partition"})
		}
	}
	if from == nil {
		d.errorf(n, "an input written as a mapping needs from: {from: op, partition: strategy}")
	}
	return from, part
}

// partition decodes partition: name or {custom: plugin, key: field}.
func (d *decoder) partition(v *yaml.Node) *PartitionSpec {
	v = deref(v)
	ps := &PartitionSpec{Pos: nodePos(v)}
	if v.Kind != yaml.MappingNode {
		s, ok := d.str(v, "partition")
		if !ok {
			return nil
		}
		if s == "custom" {
			d.errorf(v, "a custom partition is a mapping: partition: {custom: plugin, key: field}")
			return nil
		}
		if s, ok = d.oneOf(v, "partition", partitionNames...); !ok {
			return nil
		}
		ps.Strategy = s
		return ps
	}
	fields, _ := d.mapping(v, "partition")
	ps.Strategy = "custom"
	for _, kv := range fields {
		switch kv.Key.Value {
		case "custom":
			ps.Plugin, _ = d.str(kv.Val, "partition custom plugin")
		case "key":
			ps.Keys = d.fieldList(kv.Val, "partition key")
		default:
			d.unknownKey(kv.Key, "partition", []string{"custom", "key"})
		}
	}
	for _, req := range []string{"custom", "key"} {
		if !hasKey(fields, req) {
			d.errorf(v, "a custom partition needs %s: partition: {custom: plugin, key: field}", req)
		}
	}
	return ps
}
