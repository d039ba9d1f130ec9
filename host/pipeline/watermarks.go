package pipeline

import (
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/host/watermark"
)

// Watermarks is a watermarks: mapping (Flink's WatermarkStrategy), written
// on a source or, as every source's default, on the pipeline.
type Watermarks struct {
	watermark.Strategy
	Pos Pos
	// KeyPos holds where each key was written.
	KeyPos map[string]Pos
	// Invalid: the mapping was written with errors (reported): lint does
	// not also say the source has no watermarks.
	Invalid bool
}

// WatermarksKeys are the keys of watermarks:.
var WatermarksKeys = []string{"strategy", "max-out-of-orderness", "interval", "idleness", "timestamp"}

// WatermarksOf is the strategy source operator op runs with: its own,
// else the pipeline's; nil when neither wrote one (no watermarks, as
// Flink's WatermarkStrategy.noWatermarks()).
func (p *Pipeline) WatermarksOf(op *Operator) *Watermarks {
	if op == nil || op.Source == nil {
		return nil
	}
	if op.Source.Watermarks != nil {
		return op.Source.Watermarks
	}
	return p.Watermarks
}

// watermarks decodes watermarks: (what names where it was written): a
// strategy's name, or a mapping.
func (d *decoder) watermarks(n *yaml.Node, what string) *Watermarks {
	w := &Watermarks{Pos: nodePos(deref(n)), KeyPos: map[string]Pos{}}
	w.Interval = watermark.DefaultInterval
	w.Format = watermark.EpochMillis
	if dn := deref(n); dn.Kind == yaml.ScalarNode {
		k, ok := d.oneOf(n, what+" strategy", watermark.Kinds...)
		if !ok {
			return &Watermarks{Pos: w.Pos, Invalid: true}
		}
		w.Kind = k
		w.KeyPos["strategy"] = nodePos(dn)
		if k == watermark.BoundedOutOfOrderness {
			d.errorf(n, "%s: bounded-out-of-orderness needs max-out-of-orderness: write {strategy: bounded-out-of-orderness, max-out-of-orderness: 5s}", what)
			return &Watermarks{Pos: w.Pos, Invalid: true}
		}
		return w
	}
	ps, ok := d.mapping(n, what)
	if !ok {
		return &Watermarks{Pos: w.Pos, Invalid: true}
	}
	before := len(d.errs)
	for _, kv := range ps {
		k, v := kv.Key.Value, kv.Val
		where := what + " " + k
		ok := true
		switch k {
		case "strategy":
			w.Kind, ok = d.oneOf(v, where, watermark.Kinds...)
		case "max-out-of-orderness":
			w.MaxOutOfOrderness, ok = d.duration(v, where, 0)
			if ok && w.MaxOutOfOrderness%time.Millisecond != 0 {
				d.errorf(v, "%s %v is finer than a millisecond: event time counts milliseconds", where, w.MaxOutOfOrderness)
				ok = false
			}
		case "interval":
			w.Interval, ok = d.duration(v, where, time.Millisecond)
		case "idleness":
			w.Idleness, ok = d.duration(v, where, time.Millisecond)
		case "timestamp":
			ok = d.timestamp(v, where, w)
		default:
			d.unknownKey(kv.Key, what, WatermarksKeys)
			continue
		}
		if ok {
			w.KeyPos[k] = nodePos(kv.Key)
		}
	}
	if len(d.errs) > before {
		return &Watermarks{Pos: w.Pos, Invalid: true}
	}
	_, hasBound := w.KeyPos["max-out-of-orderness"]
	switch w.Kind {
	case "":
		d.errorf(n, "%s needs a strategy: one of %s", what, strings.Join(watermark.Kinds, ", "))
		return &Watermarks{Pos: w.Pos, Invalid: true}
	case watermark.BoundedOutOfOrderness:
		if !hasBound {
			d.errorf(n, "%s: bounded-out-of-orderness needs max-out-of-orderness (how late a record may be, as 5s)", what)
			return &Watermarks{Pos: w.Pos, Invalid: true}
		}
	case watermark.Monotonous:
		if hasBound {
			d.errorf(deref(n), "%s: monotonous takes no max-out-of-orderness (it is bounded-out-of-orderness with 0): write one strategy or the other", what)
			return &Watermarks{Pos: w.Pos, Invalid: true}
		}
	case watermark.None:
		for _, k := range WatermarksKeys[1:] {
			if p, set := w.KeyPos[k]; set {
				d.errs.errorf(d.file, p, "%s: strategy none generates no watermarks: %s has no effect, remove it", what, k)
				return &Watermarks{Pos: w.Pos, Invalid: true}
			}
		}
	}
	return w
}

// timestamp decodes timestamp: event-time (the envelope's, the default) or
// {field: name, format: epoch-millis | rfc3339}.
func (d *decoder) timestamp(n *yaml.Node, what string, w *Watermarks) bool {
	if deref(n).Kind == yaml.ScalarNode {
		_, ok := d.oneOf(n, what, "event-time")
		return ok
	}
	ps, ok := d.mapping(n, what)
	if !ok {
		return false
	}
	for _, kv := range ps {
		switch kv.Key.Value {
		case "field":
			if w.Field, ok = d.str(kv.Val, what+" field"); ok && w.Field == "" {
				d.errorf(kv.Val, "%s field must name a field of the records", what)
				return false
			}
		case "format":
			if w.Format, ok = d.oneOf(kv.Val, what+" format", watermark.Formats...); !ok {
				return false
			}
		default:
			d.unknownKey(kv.Key, what, []string{"field", "format"})
			return false
		}
	}
	if w.Field == "" {
		d.errorf(n, "%s needs a field (timestamp: {field: ts, format: epoch-millis}), or write timestamp: event-time for the records' own event time", what)
		return false
	}
	return true
}

// Active reports whether w generates watermarks (nil, none or an
// invalid one do not).
func (w *Watermarks) Active() bool { return w != nil && !w.Invalid && w.Strategy.Active() }

// Written reports whether a strategy that generates watermarks was
// written, valid or not (lint's question before a window).
func (w *Watermarks) Written() bool { return w != nil && (w.Invalid || w.Strategy.Active()) }
