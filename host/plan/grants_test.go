package plan

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/pipeline"
)

// TestGrantsInPlan: a plugin granted a real clock or random source is
// marked in the text and JSON plans (golden), and a job without grants
// prints no grants line or key.
func TestGrantsInPlan(t *testing.T) {
	src := `version: 1
name: granted
plugins:
  stamp: { path: stamp.wasm, grant: [clock, random] }
  plain: { path: plain.wasm }
operators:
  - id: src
    source: { type: elements, values: [{n: 1}] }
  - id: stamp
    map: stamp
  - id: plain
    map: plain
  - id: out
    sink: { type: print }
`
	p, err := pipeline.Parse("granted.yaml", []byte(src), pipeline.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Plan(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := render(t, g)
	for _, want := range []string{"grants         plugin stamp: clock, random", `"grants": {`, `"stamp": [`} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("plan lacks %q", want)
		}
	}
	golden(t, filepath.Join("testdata", "grants.golden"), got)

	ungranted, err := pipeline.Parse("plain.yaml", []byte(strings.Replace(src, ", grant: [clock, random]", "", 1)), pipeline.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err = Plan(ungranted, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out := render(t, g); bytes.Contains(out, []byte("grants")) {
		t.Errorf("a plan without grants mentions them:\n%s", out)
	}
}
