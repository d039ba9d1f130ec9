package pipeline

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/suggest"
)

// validate checks what spans operators: unique ids, default and named
// inputs, the shape each kind needs, plugin references, parallelism
// against max parallelism, and cycles. It resolves the default input (the
// previous operator in the file) into op.Inputs.
func (d *decoder) validate(p *Pipeline) {
	byID := map[string]*Operator{}
	for _, op := range p.Operators {
		if op.ID == "" {
			continue
		}
		if first, dup := byID[op.ID]; dup {
			d.errs.errorf(d.file, op.KeyPos["id"], "duplicate operator id %q (first at line %d)", op.ID, first.Pos.Line)
			continue
		}
		byID[op.ID] = op
	}
	for i, op := range p.Operators {
		d.shape(p, i, op)
		d.references(p, op, byID)
		d.parallelism(p, op)
	}
	d.cycles(p, byID)
	d.windows(p, byID)
	d.filePaths(p)
	d.unreadDeadLetters(p)
}

// unreadDeadLetters refuses on-error: dead-letter on an operator whose
// dead-letter output nothing reads. The runtime would send its bad records
// nowhere while the summary counts them as dead-lettered: on-error: skip
// with a misleading report. An unread side output is legal in Flink, but
// choosing dead-letter over skip says the records are wanted, so the
// choice is the user's to make explicit (the reverse, reading the
// dead-letter output of an operator that has none, is refused in
// references).
func (d *decoder) unreadDeadLetters(p *Pipeline) {
	read := map[string]bool{}
	for _, op := range p.Operators {
		for _, in := range op.Inputs {
			if in.SideOutput == DeadLetter {
				read[in.Operator] = true
			}
		}
	}
	for _, op := range p.Operators {
		if op.OnError == DeadLetter && op.ID != "" && op.Kind != KindSink && !read[op.ID] {
			d.errs.errorf(d.file, op.KeyPos["on-error"], "%s has on-error: dead-letter, but nothing reads %s.dead-letter: its bad records would be dropped; add an operator with input: %s.dead-letter (a sink), or write on-error: skip to drop them", name(op), op.ID, op.ID)
		}
	}
}

// filePaths refuses a file sink writing where a file source reads (the
// sink truncates the file the source is reading: the input is lost) or
// where another file sink writes (one overwrites the other's records). It
// compares the files each side really opens: a source reads its path from
// every subtask, but a sink at parallelism p > 1 writes p files,
// SubtaskFile(path, i), so `path: x.jsonl` at parallelism 2 truncates a
// source reading x-1.jsonl and not one reading x.jsonl.
func (d *decoder) filePaths(p *Pipeline) {
	read, written := map[string]fileUse{}, map[string]fileUse{}
	for _, op := range p.Operators {
		if op.Source != nil {
			for _, f := range p.files(op, op.Source) {
				if _, ok := read[f.file]; !ok {
					read[f.file] = f
				}
			}
		}
	}
	for _, op := range p.Operators {
		if op.Sink == nil {
			continue
		}
		// one problem per pair of operators, at the first file they share
		reported := map[*Operator]bool{}
		for _, f := range p.files(op, op.Sink) {
			if src, ok := read[f.file]; ok && !reported[src.op] {
				reported[src.op] = true
				d.errs.errorf(d.file, op.Sink.Pos, "%s writes %s%s, which source %q (line %d) reads: the sink would truncate its input", name(op), f.name(), f.detail(""), src.op.ID, src.op.Pos.Line)
			}
			first, ok := written[f.file]
			if !ok {
				written[f.file] = f
				continue
			}
			if !reported[first.op] {
				reported[first.op] = true
				d.errs.errorf(d.file, op.Sink.Pos, "%s writes %s%s, as sink %q (line %d) does%s: one would overwrite the other", name(op), f.name(), f.detail(""), first.op.ID, first.op.Pos.Line, first.detail("its "))
			}
		}
	}
}

// fileUse is one file a file connector opens.
type fileUse struct {
	op      *Operator
	file    string // resolved against the pipeline file's folder, cleaned
	path    string // the path option as written
	subtask int    // the sink subtask writing SubtaskFile(path, subtask); -1 for the path itself
	par     int
}

// name is the file as the connector names it, relative as written.
func (f fileUse) name() string {
	if f.subtask < 0 {
		return f.path
	}
	return spec.SubtaskFile(f.path, f.subtask)
}

// detail says where a subtask's file name comes from, "" for the path
// itself.
func (f fileUse) detail(its string) string {
	if f.subtask < 0 {
		return ""
	}
	return fmt.Sprintf(" (%ssubtask %d of path %s at parallelism %d)", its, f.subtask, f.path, f.par)
}

// files lists the files a file source or sink of op opens (a connector
// with a path option), none for another connector type.
func (p *Pipeline) files(op *Operator, c *Connector) []fileUse {
	role := spec.Sink
	if c == op.Source {
		role = spec.Source
	}
	path, _ := c.Options["path"].(string)
	s := c.specOf(role)
	if s == nil || path == "" {
		return nil
	}
	if _, hasPath := s.Option("path"); !hasPath {
		return nil
	}
	resolve := func(s string) string {
		if !filepath.IsAbs(s) {
			s = filepath.Join(filepath.Dir(p.File), s)
		}
		return filepath.Clean(s)
	}
	par := p.ParallelismOf(op)
	if c == op.Source || par == 1 {
		return []fileUse{{op: op, file: resolve(path), path: path, subtask: -1, par: par}}
	}
	out := make([]fileUse, par)
	for i := range out {
		out[i] = fileUse{op: op, file: resolve(spec.SubtaskFile(path, i)), path: path, subtask: i, par: par}
	}
	return out
}

func name(op *Operator) string {
	if op.ID == "" { // missing or invalid (which has its own error)
		return "the operator"
	}
	return "operator '" + op.ID + "'"
}

// shape checks the inputs and partitioning a kind allows, and resolves
// the default input.
func (d *decoder) shape(p *Pipeline, i int, op *Operator) {
	_, hasInput := op.KeyPos["input"]
	_, hasConnect := op.KeyPos["connect"]
	switch {
	case op.Kind == "" || d.skipShape[op]:
		return
	case op.Kind == KindSource:
		for _, k := range []string{"input", "connect", "key-by", "partition"} {
			if pos, ok := op.KeyPos[k]; ok {
				d.errs.errorf(d.file, pos, "%s is a source: it reads no input, so %s does not apply", name(op), k)
			}
		}
		return
	case op.Kind.IsCoOperator():
		switch {
		case hasConnect && len(op.Inputs) != 2:
			d.errs.errorf(d.file, op.KeyPos["connect"], "%s is a %s: connect needs exactly 2 inputs, not %d", name(op), op.Kind, len(op.Inputs))
		case !hasConnect && !hasInput:
			d.errs.errorf(d.file, op.KeyPos[string(op.Kind)], "%s is a %s: it needs connect: [first, second]", name(op), op.Kind)
		case !hasConnect:
			d.errs.errorf(d.file, op.KeyPos["input"], "%s is a %s: give its two inputs as connect: [first, second], not input", name(op), op.Kind)
		}
		return
	}
	if hasConnect {
		d.errs.errorf(d.file, op.KeyPos["connect"], "connect is only for co-map and co-process; %s is a %s (input: [a, b] is a union)", name(op), op.Kind)
		return
	}
	if hasInput {
		return
	}
	if i == 0 {
		d.errs.errorf(d.file, op.Pos, "%s has no input: it is the first operator, so it must be a source or name an input", name(op))
		return
	}
	prev := p.Operators[i-1]
	switch {
	case prev.ID == "":
	case prev.Kind == KindSink:
		d.errs.errorf(d.file, op.Pos, "%s has no input: the previous operator '%s' is a sink; give input:", name(op), prev.ID)
	default:
		op.Inputs = []Input{{Operator: prev.ID, Pos: op.Pos}}
	}
}

// references checks named inputs, plugins and kind requirements.
func (d *decoder) references(p *Pipeline, op *Operator, byID map[string]*Operator) {
	for _, in := range op.Inputs {
		up, ok := byID[in.Operator]
		switch {
		case !ok:
			d.errs.errorf(d.file, in.Pos, "%s reads %q, which is not an operator of this pipeline%s", name(op), in.Operator, didYouMean(in.Operator, byID))
		case up.Kind == KindSink:
			d.errs.errorf(d.file, in.Pos, "%s reads sink '%s': a sink has no output", name(op), up.ID)
		case in.SideOutput == DeadLetter && up.OnError == DeadLetter:
		case in.SideOutput == LateTag && up.Window != nil:
		case in.SideOutput == DeadLetter && up.Kind != KindProcess:
			d.errs.errorf(d.file, in.Pos, "%s reads the dead-letter output of '%s', whose on-error is %s: add on-error: dead-letter to '%s'", name(op), up.ID, onError(up), up.ID)
		case in.SideOutput != "" && up.Kind != KindProcess:
			d.errs.errorf(d.file, in.Pos, "%s reads side output %q of '%s', a %s: only process operators emit side outputs (a windowed operator emits late, any operator with on-error: dead-letter emits dead-letter)", name(op), in.SideOutput, up.ID, up.Kind)
		}
	}
	if pos, ok := op.KeyPos["on-error"]; ok && op.Kind == KindSink {
		d.errs.errorf(d.file, pos, "%s is a sink: on-error is for sources, plugin operators and aggregations (a sink that cannot write a record fails the job)", name(op))
	}
	if op.Kind.NeedsKey() && op.KeyBy == nil && (op.Window == nil || !op.Window.All) {
		d.errs.errorf(d.file, op.KeyPos[string(op.Kind)], "%s is a %s, which needs a keyed stream: add key-by", name(op), op.Kind)
	}
	if op.Kind == KindCount && op.KeyBy != nil {
		// count emits the key's fields then "count": a key field of that
		// name would make the record {"count":"a","count":1}, which JSON
		// readers resolve to one of the two, silently.
		for i, f := range op.KeyBy.Fields {
			if f == CountField {
				d.errs.errorf(d.file, op.KeyBy.FieldPos[i], "%s counts into a field named %q, which is also a key-by field: its records would hold %q twice; rename the field upstream (a map plugin) or key by other fields", name(op), CountField, CountField)
			}
		}
	}
	if op.Kind.UsesPlugin() && op.Plugin != "" {
		d.plugin(p, op.Plugin, op.KeyPos[string(op.Kind)], name(op))
	}
	if op.KeyBy != nil && op.KeyBy.Plugin != "" {
		d.plugin(p, op.KeyBy.Plugin, op.KeyBy.Pos, "the key-by of "+name(op))
	}
	for _, part := range op.Partitions() {
		if part.Plugin != "" {
			d.plugin(p, part.Plugin, part.Pos, "the partition of "+name(op))
		}
	}
	if pos, ok := op.KeyPos["config"]; ok && !op.Kind.UsesPlugin() && op.Kind != "" {
		d.errs.errorf(d.file, pos, "%s is a %s: config is only for plugin operators", name(op), op.Kind)
	}
}

// CountField is the field count: true writes the count of a key to.
const CountField = "count"

// DeadLetter is the on-error that sends bad records to the side output of
// the same name: a sink reads it with input: op.dead-letter.
const DeadLetter = "dead-letter"

// onError is the operator's on-error as written, "fail" when absent.
func onError(op *Operator) string {
	if op.OnError == "" {
		return "fail"
	}
	return op.OnError
}

func (d *decoder) plugin(p *Pipeline, plugin string, pos Pos, who string) {
	if _, ok := p.Plugins[plugin]; ok {
		return
	}
	names := make([]string, 0, len(p.Plugins))
	for n := range p.Plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	known := "none is declared"
	if len(names) > 0 {
		known = "declared: " + strings.Join(names, ", ")
	}
	d.errs.errorf(d.file, pos, "%s uses unknown plugin %q (%s under plugins:)", who, plugin, known)
}

func didYouMean(id string, byID map[string]*Operator) string {
	known := make([]string, 0, len(byID))
	for k := range byID {
		known = append(known, k)
	}
	sort.Strings(known)
	if s := suggest.Closest(id, known); s != "" {
		return " (did you mean " + s + "?)"
	}
	return ""
}

// parallelism checks an operator's effective parallelism against its max
// parallelism when both are known (the planner computes the default max,
// never below the parallelism). As in Flink, the job-level values are only
// defaults: a job parallelism above the job's max-parallelism is fine when
// every operator sets its own, so the problem is reported per operator, at
// the key it wrote or, when it inherits both, at the operator.
func (d *decoder) parallelism(p *Pipeline, op *Operator) {
	_, setP := op.KeyPos["parallelism"]
	_, setM := op.KeyPos["max-parallelism"]
	if setP && op.Parallelism > 1 && op.Source != nil && op.Source.NonParallel() {
		d.errs.errorf(d.file, op.KeyPos["parallelism"], "%s: %s sources run as one subtask (Flink's non-parallel sources): parallelism must be 1, not %d", name(op), op.Source.Type, op.Parallelism)
	}
	par, maxP := p.ParallelismOf(op), op.MaxParallelism
	if maxP == 0 {
		maxP = p.MaxParallelism
	}
	if maxP == 0 || par <= maxP {
		return
	}
	switch {
	case setP:
		d.errs.errorf(d.file, op.KeyPos["parallelism"], "%s: parallelism %d is above its max parallelism %d%s", name(op), par, maxP, jobSetting(p, "max-parallelism", !setM))
	case setM:
		d.errs.errorf(d.file, op.KeyPos["max-parallelism"], "%s: parallelism %d%s is above its max parallelism %d", name(op), par, jobSetting(p, "parallelism", true), maxP)
	default:
		d.errs.errorf(d.file, op.Pos, "%s: parallelism %d%s is above its max parallelism %d%s: give the operator its own parallelism, or raise max-parallelism", name(op), par, jobSetting(p, "parallelism", true), maxP, jobSetting(p, "max-parallelism", true))
	}
}

// jobSetting says where an inherited value comes from: " (the job's
// parallelism, line 3)", "" when not inherited.
func jobSetting(p *Pipeline, key string, inherited bool) string {
	if !inherited {
		return ""
	}
	if pos, ok := p.KeyPos[key]; ok {
		return fmt.Sprintf(" (the job's %s, line %d)", key, pos.Line)
	}
	return ""
}

// cycles reports every cycle among operators once, at the input that
// closes it. Flink's DataStream graphs are acyclic (iterations aside).
func (d *decoder) cycles(p *Pipeline, byID map[string]*Operator) {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(op *Operator)
	visit = func(op *Operator) {
		color[op.ID] = grey
		stack = append(stack, op.ID)
		for _, in := range op.Inputs {
			up, ok := byID[in.Operator]
			if !ok {
				continue
			}
			switch color[up.ID] {
			case white:
				visit(up)
			case grey:
				start := len(stack) - 1
				for stack[start] != up.ID {
					start--
				}
				path := append([]string(nil), stack[start:]...)
				// stack runs downstream -> upstream; print it as data flows.
				for l, r := 0, len(path)-1; l < r; l, r = l+1, r-1 {
					path[l], path[r] = path[r], path[l]
				}
				path = append(path, path[0])
				if n := len(path); n > 12 {
					path = append(append(path[:5:5], fmt.Sprintf("... (%d operators) ...", n-1)), path[n-5:]...)
				}
				d.errs.errorf(d.file, in.Pos, "operators form a cycle: %s", strings.Join(path, " -> "))
			}
		}
		stack = stack[:len(stack)-1]
		color[op.ID] = black
	}
	for _, op := range p.Operators {
		if op.ID != "" && byID[op.ID] == op && color[op.ID] == white {
			visit(op)
		}
	}
}

// OnlySources refuses a pipeline of sources alone, as Flink refuses to
// execute one (No operators defined in streaming topology. Cannot
// execute.: a source adds no transformation of its own): it would run and
// write nothing, and exit as if it had done its work. An operator whose
// output nothing reads is legal, as in Flink, which runs it. Parse leaves
// it to the commands that run a pipeline (run, lint, the server): a plan
// of one is still worth showing.
func OnlySources(p *Pipeline) error {
	for _, op := range p.Operators {
		if op.Kind != KindSource {
			return nil
		}
	}
	if len(p.Operators) == 0 {
		return nil
	}
	return Errors{&Error{File: p.File, Pos: p.KeyPos["operators"], Msg: "the pipeline has only sources: it would run and write nothing (Flink: No operators defined in streaming topology. Cannot execute.); end it with a sink, such as - { id: out, sink: { type: print } }"}}
}
