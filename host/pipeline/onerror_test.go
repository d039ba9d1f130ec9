package pipeline

import (
	"slices"
	"testing"
)

// TestDeadLetterInputs: any operator whose on-error is dead-letter (a
// source, a plugin map, a built-in aggregation) has a dead-letter side
// output a sink can read; a process operator may emit it itself.
func TestDeadLetterInputs(t *testing.T) {
	src := `version: 1
name: dl
plugins:
  p: { path: p.wasm }
operators:
  - id: src
    source: { type: file, path: in.jsonl }
    on-error: dead-letter
  - id: m
    map: p
    on-error: dead-letter
  - id: total
    sum: amount
    key-by: account
    on-error: dead-letter
  - id: proc
    process: p
  - id: out
    sink: { type: print }
  - id: bad-lines
    sink: { type: discard }
    input: [src.dead-letter, m.dead-letter, total.dead-letter, proc.dead-letter]
`
	p, err := Parse("dl.yaml", []byte(src), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range p.Operator("bad-lines").Inputs {
		got = append(got, in.Operator+"."+in.SideOutput)
	}
	want := []string{"src.dead-letter", "m.dead-letter", "total.dead-letter", "proc.dead-letter"}
	if !slices.Equal(got, want) {
		t.Errorf("inputs %v, want %v", got, want)
	}
	for id, policy := range map[string]string{"src": "dead-letter", "m": "dead-letter", "total": "dead-letter", "proc": ""} {
		if p.Operator(id).OnError != policy {
			t.Errorf("%s: on-error %q, want %q", id, p.Operator(id).OnError, policy)
		}
	}
}

// TestGrants: grant: takes a list or one name.
func TestGrants(t *testing.T) {
	src := `version: 1
name: g
plugins:
  both: { path: a.wasm, grant: [clock, random] }
  one: { path: b.wasm, grant: clock }
  none: { path: c.wasm }
operators:
  - id: src
    source: { type: elements, values: [1] }
`
	p, err := Parse("g.yaml", []byte(src), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{"both": {"clock", "random"}, "one": {"clock"}, "none": nil} {
		if got := p.Plugins[name].Grants; !slices.Equal(got, want) {
			t.Errorf("plugin %s grants %v, want %v", name, got, want)
		}
	}
}
