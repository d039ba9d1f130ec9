package pipeline

import (
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// optionSpec describes one option of a source or sink type.
type optionSpec struct {
	name     string
	kind     optionKind
	required bool
	choices  []string // optEnum
	lo, hi   float64  // optInt, optNumber
	empty    bool     // optString: "" is a value (print's prefix: none)
}

type optionKind int

const (
	optString optionKind = iota
	optEnum
	optInt
	optNumber
	optList
)

var formats = []string{"json", "csv"}

// sourceTypes and sinkTypes are the built-in connectors and their options:
// the spec lint checks a pipeline against.
var sourceTypes = map[string][]optionSpec{
	"generator": {
		{name: "preset", kind: optEnum, required: true, choices: []string{"transactions", "sensors", "words", "sequence"}},
		{name: "count", kind: optInt, lo: 0, hi: 1 << 53}, // records; unbounded when absent
		{name: "rate", kind: optNumber, lo: 0, hi: 1e12},  // records per second; 0 or absent: as fast as downstream takes them
		{name: "seed", kind: optInt, lo: -1 << 53, hi: 1 << 53},
		{name: "skew", kind: optNumber, lo: 0, hi: 1}, // share of records carrying the hot key
		{name: "hot-key", kind: optString},
		{name: "accounts", kind: optInt, lo: 1, hi: 1e15}, // transactions: distinct accounts
		{name: "devices", kind: optInt, lo: 1, hi: 1e15},  // sensors: distinct devices
	},
	"elements": {{name: "values", kind: optList, required: true}},
	"file": {
		{name: "path", kind: optString, required: true},
		{name: "format", kind: optEnum, choices: formats},
		{name: "null-literal", kind: optString, empty: true}, // csv: the cell text of null
	},
	"stdin": {
		{name: "format", kind: optEnum, choices: formats},
		{name: "null-literal", kind: optString, empty: true},
	},
}

var sinkTypes = map[string][]optionSpec{
	"print": {{name: "prefix", kind: optString, empty: true}}, // Flink's print(""): no identifier
	"file": {
		{name: "path", kind: optString, required: true},
		{name: "format", kind: optEnum, choices: formats},
		{name: "null-literal", kind: optString, empty: true}, // csv: the cell text of null
	},
	"discard": {},
}

// Bounded reports whether a source ends by itself (Flink's
// Boundedness.BOUNDED): a generator with a count, elements, or a file.
// stdin and a generator without count are unbounded. stdin does end at the
// end of its input, but a plan cannot know whether it is a pipe or a
// terminal: AUTOMATIC streams it, and an explicit BATCH reads it to the end.
func (c *Connector) Bounded() bool {
	switch c.Type {
	case "elements", "file":
		return true
	case "generator":
		_, ok := c.Options["count"]
		return ok
	}
	return false
}

// ParallelismOf is op's parallelism as the planner gives it: its own, else
// 1 for a non-parallel source, else the job's (at least 1).
func (p *Pipeline) ParallelismOf(op *Operator) int {
	switch {
	case op.Parallelism > 0:
		return op.Parallelism
	case op.Source != nil && op.Source.NonParallel():
		return 1
	case p.Parallelism > 0:
		return p.Parallelism
	}
	return 1
}

// SubtaskFile is the file subtask writes for a file sink whose path is
// path, at parallelism above 1: "-<subtask>" (0-based, like Flink's part
// files) inserted before the extension of the base name, so out.jsonl
// becomes out-0.jsonl, out-1.jsonl, ... The connector names its files with
// it and lint compares them, so the two cannot disagree.
func SubtaskFile(path string, subtask int) string {
	ext := filepath.Ext(path)
	if base := filepath.Base(path); ext == base { // ".hidden"
		ext = ""
	}
	return strings.TrimSuffix(path, ext) + "-" + strconv.Itoa(subtask) + ext
}

// NonParallel reports whether a source runs as one subtask whatever the
// job's parallelism, as Flink's non-parallel sources (fromElements): the
// inline elements and standard input.
func (c *Connector) NonParallel() bool { return c.Type == "elements" || c.Type == "stdin" }

// connector decodes a source or sink: a mapping with a type and the
// options of that type.
func (d *decoder) connector(n *yaml.Node, what string, types map[string][]optionSpec) *Connector {
	ps, ok := d.mapping(n, what)
	if !ok {
		return nil
	}
	c := &Connector{Pos: nodePos(deref(n)), Options: map[string]any{}}
	var typeNode *yaml.Node
	for _, p := range ps {
		if p.Key.Value == "type" {
			typeNode = p.Val
		}
	}
	names := make([]string, 0, len(types))
	for t := range types {
		names = append(names, t)
	}
	sort.Strings(names)
	if typeNode == nil {
		d.errorf(n, "%s needs a type: one of %s", what, strings.Join(names, ", "))
		return nil
	}
	t, ok := d.oneOf(typeNode, what+" type", names...)
	if !ok {
		return nil
	}
	c.Type = t
	specs := types[t]
	known := []string{"type"}
	for _, s := range specs {
		known = append(known, s.name)
	}
	given := map[string]bool{}
	for _, p := range ps {
		k := p.Key.Value
		if k == "type" {
			continue
		}
		spec, found := findOption(specs, k)
		if !found {
			d.unknownKey(p.Key, what+" "+t, known)
			continue
		}
		given[k] = true
		d.ordered = t == "elements" && k == "values" // records keep their key order
		v, ok := d.option(p.Val, what+" "+t+" "+k, spec)
		d.ordered = false
		if ok {
			c.Options[k] = v
		}
	}
	for _, s := range specs {
		if s.required && !given[s.name] {
			d.errorf(n, "%s %s needs %s", what, t, s.name)
		}
	}
	if t == "generator" {
		preset, _ := c.Options["preset"].(string)
		for _, p := range ps {
			if takers, ok := presetOptions[p.Key.Value]; ok && preset != "" && !slices.Contains(takers, preset) {
				d.errorf(p.Key, "%s generator: %s is an option of the %s preset%s, not of %s (which takes %s)",
					what, p.Key.Value, strings.Join(takers, " and "), map[bool]string{true: "s"}[len(takers) > 1], preset, presetTakes(preset))
			}
		}
	}
	if _, ok := c.Options["null-literal"]; ok {
		if format := c.Format(); format != "csv" {
			for _, p := range ps {
				if p.Key.Value == "null-literal" {
					d.errorf(p.Key, "%s %s: null-literal is an option of format csv, and this %s is format %s%s",
						what, t, what, format, map[bool]string{true: " (its path does not end in .csv)"}[c.Options["format"] == nil && t == "file"])
				}
			}
		}
	}
	return c
}

// Format is the format of a file or stdin connector: its format option,
// else csv for a file path ending in .csv (any case), else json.
func (c *Connector) Format() string {
	if f, ok := c.Options["format"].(string); ok {
		return f
	}
	if path, ok := c.Options["path"].(string); ok && c.Type == "file" {
		return FileFormat(path)
	}
	return "json"
}

// FileFormat is a file connector's format when the pipeline names none:
// csv for a path ending in .csv (a JSON reader on a CSV file failed at its
// first line; a sink wrote JSON lines into a .csv file), else json lines.
func FileFormat(path string) string {
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		return "csv"
	}
	return "json"
}

// presetTakes lists the options a generator preset takes.
func presetTakes(preset string) string {
	takes := []string{"count", "rate", "seed"}
	for opt, takers := range presetOptions {
		if slices.Contains(takers, preset) {
			takes = append(takes, opt)
		}
	}
	slices.Sort(takes[3:])
	return strings.Join(takes[:len(takes)-1], ", ") + " and " + takes[len(takes)-1]
}

// presetOptions: the generator options only some presets take (every one
// takes count, rate and seed).
var presetOptions = map[string][]string{
	"accounts": {"transactions"},
	"devices":  {"sensors"},
	"hot-key":  {"transactions", "sensors"},
	"skew":     {"transactions", "sensors"},
}

func findOption(specs []optionSpec, name string) (optionSpec, bool) {
	for _, s := range specs {
		if s.name == name {
			return s, true
		}
	}
	return optionSpec{}, false
}

// option checks one option value against its spec and returns it as a
// plain Go value.
func (d *decoder) option(n *yaml.Node, what string, s optionSpec) (any, bool) {
	switch s.kind {
	case optEnum:
		return d.oneOf(n, what, s.choices...)
	case optString:
		if s.empty && deref(n).Kind == yaml.ScalarNode && deref(n).ShortTag() == "!!str" && deref(n).Value == "" {
			return "", true
		}
		return d.str(n, what)
	case optInt:
		return d.integer(n, what, int(s.lo), int(s.hi))
	case optNumber:
		return d.number(n, what, s.lo, s.hi)
	case optList:
		if deref(n).Kind != yaml.SequenceNode {
			d.errorf(n, "%s must be a list, not %s", what, describe(n))
			return nil, false
		}
		if len(deref(n).Content) == 0 {
			d.errorf(n, "%s must not be empty", what)
			return nil, false
		}
		return d.value(n, what)
	}
	return nil, false
}
