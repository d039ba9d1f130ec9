package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/runtime"
)

// Row 16: malformed input records at a source follow the source's
// on-error: fail names the file and line; skip and dead-letter count the
// records, and dead letters carry the error, operator, subtask, file, line
// and the line itself. The built-in aggregations follow theirs for a record
// without its key field or with a field of the wrong type.
func TestSandbox16_MalformedSourceRecords(t *testing.T) {
	h := tenant(t, nil)
	dir := t.TempDir()
	in := "{\"n\":1}\n{\"n\":2\n{\"n\":3}\nnot json\n{\"n\":5}\n"
	if err := os.WriteFile(filepath.Join(dir, "in.jsonl"), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	job := func(onError, extra string) string {
		return `version: 1
name: lines
operators:
  - { id: src, source: { type: file, path: in.jsonl }, on-error: ` + onError + ` }
  - { id: out, sink: { type: print } }
` + extra
	}
	t.Run("fail", func(t *testing.T) {
		j := runYAML(t, h, dir, job("fail", ""), runtime.Options{}, nil)
		failed(t, h, j)
		wantWords(t, j.err, `operator "src" (subtask 1/1): source "src": `+filepath.Join(dir, "in.jsonl")+":2: malformed JSON")
		if j.out != "{\"n\":1}\n" {
			t.Errorf("printed %q: the record before the bad line must still come out", j.out)
		}
	})
	t.Run("skip", func(t *testing.T) {
		j := runYAML(t, h, dir, job("skip", ""), runtime.Options{}, nil)
		if j.err != nil {
			t.Fatal(j.err)
		}
		if src := j.res.Operator("src"); j.out != "{\"n\":1}\n{\"n\":3}\n{\"n\":5}\n" || src.Skipped != 2 || src.DeadLettered != 0 {
			t.Errorf("printed %q, skipped %d, dead-lettered %d", j.out, src.Skipped, src.DeadLettered)
		}
		var summary strings.Builder
		if err := j.res.WriteSummary(&summary); err != nil || !strings.Contains(summary.String(), `operator "src": 2 records skipped`) {
			t.Errorf("summary lacks the counter: %v\n%s", err, summary.String())
		}
	})
	t.Run("dead-letter", func(t *testing.T) {
		j := runYAML(t, h, dir, job("dead-letter", "  - { id: bad, input: src.dead-letter, sink: { type: print, prefix: dead } }\n"), runtime.Options{}, nil)
		if j.err != nil {
			t.Fatal(j.err)
		}
		for _, want := range []string{
			"{\"n\":1}\n", "{\"n\":3}\n", "{\"n\":5}\n",
			`dead> {"error":"malformed JSON: json: unexpected end of input at byte 6","operator":"src","subtask":0,"input":"` + filepath.Join(dir, "in.jsonl") + `","line":2,"record":"{\"n\":2"}` + "\n",
			`dead> {"error":"malformed JSON: `, `,"operator":"src","subtask":0,"input":"` + filepath.Join(dir, "in.jsonl") + `","line":4,"record":"not json"}` + "\n",
		} {
			if !strings.Contains(j.out, want) {
				t.Errorf("printed no %q:\n%s", want, j.out)
			}
		}
		if src := j.res.Operator("src"); src.DeadLettered != 2 || src.Skipped != 0 || strings.Count(j.out, "\n") != 5 {
			t.Errorf("dead-lettered %d, skipped %d, %d lines", src.DeadLettered, src.Skipped, strings.Count(j.out, "\n"))
		}
	})
	t.Run("aggregation", func(t *testing.T) {
		j := runYAML(t, h, dir, `version: 1
name: sums
operators:
  - { id: src, source: { type: elements, values: [{a: x, v: 1}, {v: 2}, {a: x, v: two}, {a: {m: 1}, v: 5}, {a: x, v: 3}] } }
  - { id: total, sum: v, key-by: a, on-error: dead-letter }
  - { id: out, sink: { type: print } }
  - { id: bad, input: total.dead-letter, sink: { type: print, prefix: dead } }
`, runtime.Options{}, nil)
		if j.err != nil {
			t.Fatal(j.err)
		}
		for _, want := range []string{
			"{\"a\":\"x\",\"v\":1}\n", "{\"a\":\"x\",\"v\":4}\n",
			`dead> {"error":"no key field \"a\"","operator":"total","subtask":0,"position":2,"record":{"v":2}}`,
			`dead> {"error":"field \"v\" is str, want a number","operator":"total","subtask":0,"position":3,"record":{"a":"x","v":"two"}}`,
			`dead> {"error":"key {\"m\":1}: a key must be a string, a number, a boolean or an array of them, not a map"`, `"operator":"total","subtask":0,"position":4,"record":{"a":{"m":1},"v":5}}`,
		} {
			if !strings.Contains(j.out, want) {
				t.Errorf("printed no %q:\n%s", want, j.out)
			}
		}
		if m := j.res.Operator("total"); m.DeadLettered != 3 {
			t.Errorf("dead-lettered %d, want 3", m.DeadLettered)
		}
	})
	healthy(t, h)
}
