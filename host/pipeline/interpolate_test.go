package pipeline

import (
	"reflect"
	"testing"
)

func TestInterpolate(t *testing.T) {
	env := mapLookup(map[string]string{"HOST": "db", "EMPTY": "", "PORT": "5432", "BRACE": "}{"})
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "plain", want: "plain"},
		{in: "${HOST}", want: "db"},
		{in: "${HOST}:${PORT}", want: "db:5432"},
		{in: "x${HOST}y", want: "xdby"},
		{in: "${MISSING:fallback}", want: "fallback"},
		{in: "${MISSING:}", want: ""},
		{in: "${MISSING:a:b}", want: "a:b"},
		{in: "${HOST:fallback}", want: "db"},
		{in: "${EMPTY:fallback}", want: "", err: ""}, // set but empty is a value
		{in: "${BRACE}", want: "}{"},                 // values are not interpolated again
		{in: "$${HOST}", want: "${HOST}"},
		{in: "cost: $5", want: "cost: $5"},
		{in: "$HOST", want: "$HOST"},
		{in: "${MISSING}", err: "variable MISSING is not set (write ${MISSING:default} to give a default)"},
		{in: "${HOST", err: `unterminated ${ in "${HOST": write $${ for a literal ${`},
		{in: "${}", err: `invalid variable name "" in ${}: use letters, digits and _`},
		{in: "${1X}", err: `invalid variable name "1X" in ${1X}: use letters, digits and _`},
		{in: "${A-B}", err: `invalid variable name "A-B" in ${A-B}: use letters, digits and _`},
	} {
		got, err := Interpolate(tc.in, env)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("Interpolate(%q) error = %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("Interpolate(%q): %v", tc.in, err)
		case tc.err == "" && got != tc.want:
			t.Errorf("Interpolate(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if _, err := Interpolate("${HOME}", nil); err == nil {
		t.Error("a nil lookup must know no variable")
	}
}

// TestInterpolationInPipeline: every scalar value is interpolated after
// parsing and typed again from its new text (quoted or not; an explicit
// !!str keeps a string); keys are left alone and a value cannot inject
// YAML.
func TestInterpolationInPipeline(t *testing.T) {
	src := `version: 1
name: ${NAME}
parallelism: ${P:4}
chaining: ${CHAIN:true}
plugins:
  p:
    path: ${DIR:plugins}/p.wasm
    config:
      quoted: "${P:4}"
      plain: ${P:4}
      str: !!str ${P:4}
      ${KEY}: 1
      literal: $${P}
operators:
  - id: src
    source: { type: generator, preset: "${PRESET:words}", count: "${COUNT}" }
  - id: m
    map: p
`
	p := mustParse(t, src, ParseOptions{Lookup: mapLookup(map[string]string{
		"NAME": "a: [b, c]", "COUNT": "10", "CHAIN": "false"})})
	if p.Name != "a: [b, c]" {
		t.Errorf("name = %q: a variable must not inject YAML", p.Name)
	}
	if p.Parallelism != 4 || p.Chaining {
		t.Errorf("parallelism %d chaining %v: interpolated scalars must be typed again", p.Parallelism, p.Chaining)
	}
	pl := p.Plugins["p"]
	if pl.Path != "plugins/p.wasm" {
		t.Errorf("path = %q", pl.Path)
	}
	want := map[string]any{"quoted": 4, "plain": 4, "str": "4", "${KEY}": 1, "literal": "${P}"}
	if !reflect.DeepEqual(pl.Config, want) {
		t.Errorf("config = %#v, want %#v", pl.Config, want)
	}
	if got := p.Operators[0].Source.Options; got["count"] != 10 || got["preset"] != "words" {
		t.Errorf("source options = %#v", got)
	}
}
