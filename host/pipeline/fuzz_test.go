package pipeline_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
)

// FuzzParse feeds arbitrary bytes to the parser: it must never panic,
// must return either a pipeline or Errors with a position, and a pipeline
// it accepts must plan without panicking.
func FuzzParse(f *testing.F) {
	for _, glob := range []string{"testdata/bad/*.yaml", "../../configs/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte("version: 1\nname: x\noperators: [{id: a, source: {type: stdin}}, {id: b, input: [a, a], sink: {type: discard}}]"))
	f.Add([]byte("&a [*a]"))
	f.Add([]byte("{version: 1, name: &n x, operators: [{id: *n, source: {type: elements, values: [*n]}}]}"))
	lookup := func(k string) (string, bool) { return "${" + k + "}", k == "LOOP" }
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := pipeline.Parse("fuzz.yaml", data, pipeline.ParseOptions{Lookup: lookup, MaxBytes: 1 << 16})
		if err != nil {
			var list pipeline.Errors
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a non-empty Errors: %T %v", err, err)
			}
			if p != nil {
				t.Fatal("a failed parse returned a pipeline")
			}
			return
		}
		if p == nil || len(p.Operators) == 0 {
			t.Fatal("an accepted pipeline has no operators")
		}
		g, err := plan.Plan(p, plan.Options{})
		if err == nil && len(g.Operators) != len(p.Operators) {
			t.Fatalf("planned %d of %d operators", len(g.Operators), len(p.Operators))
		}
	})
}
