package connector

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"testing"

	"github.com/sluicehq/sluice/host/connector/spec"
)

// TestEveryBuiltinSpecHasAConstructor: each connector of spec.Builtin is
// made by this package, under the same spec, and Set holds exactly what
// is registered.
func TestEveryBuiltinSpecHasAConstructor(t *testing.T) {
	for _, c := range spec.Builtin.All() {
		m, ok := makers[c.Role][c.Name]
		if !ok || m.spec != c {
			t.Errorf("%s %s has no constructor registered against its spec", c.Role, c.Name)
		}
	}
	n := 0
	for r, byName := range makers {
		for name, m := range byName {
			n++
			if Set().Lookup(r, name) != m.spec {
				t.Errorf("%s %s is registered but not in Set", r, name)
			}
		}
	}
	if len(Set().All()) != n {
		t.Errorf("Set holds %d connectors, %d are registered", len(Set().All()), n)
	}
}

// TestGeneratorRecordsMatchTheirSpec: the records of every preset have
// the fields its spec documents (docs/connectors.md is generated from
// it), of the documented types and within the documented ranges, and the
// timed presets' event time is their ts field.
func TestGeneratorRecordsMatchTheirSpec(t *testing.T) {
	for _, v := range spec.Generator.Variants {
		t.Run(v.Name, func(t *testing.T) {
			opts := map[string]any{"preset": v.Name, "count": 3000, "seed": 7}
			if _, ok := spec.Generator.Option("skew"); ok && slices.Contains([]string{"transactions", "sensors"}, v.Name) {
				opts["skew"] = 0.2
			}
			c, _ := runSource(t, &Builtin{}, sourceSpec("gen", "generator", opts), 0, 1)
			var want []string
			for _, f := range v.Fields {
				want = append(want, f.Name)
			}
			sort.Strings(want)
			for i, r := range c.records {
				dec := json.NewDecoder(bytes.NewReader([]byte(r.json)))
				dec.UseNumber()
				var rec map[string]any
				if err := dec.Decode(&rec); err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				var got []string
				for k := range rec {
					got = append(got, k)
				}
				sort.Strings(got)
				if !slices.Equal(got, want) {
					t.Fatalf("record %d has fields %v; the spec documents %v", i, got, want)
				}
				for _, f := range v.Fields {
					checkField(t, i, f, rec[f.Name])
				}
				if ts, timed := rec["ts"]; timed != r.hasTime || (timed && ts.(json.Number).String() != jsonInt(r.time)) {
					t.Fatalf("record %d: event time %v (set: %v), ts field %v", i, r.time, r.hasTime, ts)
				}
			}
		})
	}
}

func checkField(t *testing.T, i int, f spec.Field, v any) {
	t.Helper()
	switch f.Type {
	case "string":
		if s, ok := v.(string); !ok || s == "" {
			t.Fatalf("record %d: %s = %v, the spec says a string", i, f.Name, v)
		}
	case "int", "float":
		n, ok := v.(json.Number)
		if !ok {
			t.Fatalf("record %d: %s = %v, the spec says a number", i, f.Name, v)
		}
		if _, err := n.Int64(); f.Type == "int" && err != nil {
			t.Fatalf("record %d: %s = %v, the spec says an int", i, f.Name, v)
		}
		x, _ := n.Float64()
		if x < f.Min || x > f.Max {
			t.Fatalf("record %d: %s = %v, outside the spec's [%v, %v]", i, f.Name, v, f.Min, f.Max)
		}
	default:
		t.Fatalf("field %s: the spec gives type %q", f.Name, f.Type)
	}
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
