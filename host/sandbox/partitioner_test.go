package sandbox

import (
	"testing"

	"github.com/sluicehq/sluice/host/runtime"
)

// Row 8: a custom partitioner returning -1, >= n, or different channels for
// the same key fails the job with an error naming the plugin and the record
// (its position and key).
func TestSandbox08_BadPartitioner(t *testing.T) {
	h := tenant(t, nil)
	const values = `[{k: a, n: 1}, {k: b, n: 2}, {k: c, n: 3}, {k: d, n: 4}]`
	direct := func(mode string) string {
		return `version: 1
name: part
plugins:
  part: { path: {wasm:partitioner}, config: { mode: ` + mode + ` } }
operators:
  - { id: src, source: { type: elements, values: ` + values + ` } }
  - { id: out, sink: { type: print }, parallelism: 2, partition: { custom: part, key: k } }
`
	}
	t.Run("-1", func(t *testing.T) {
		j := runYAML(t, h, t.TempDir(), direct("neg1"), runtime.Options{}, nil)
		failed(t, h, j)
		wantWords(t, j.err, `custom partitioner plugin "part" of "out" returned channel -1 for record 3 (key "c"), want [0, 2)`, `{"k":"c","n":3}`)
	})
	t.Run(">= n", func(t *testing.T) {
		j := runYAML(t, h, t.TempDir(), direct("big_"), runtime.Options{}, nil)
		failed(t, h, j)
		wantWords(t, j.err, `custom partitioner plugin "part" of "out" returned channel 2 for record 3 (key "c"), want [0, 2)`)
	})
	t.Run("different answers for the same key", func(t *testing.T) {
		// the poison map emits record by record: one partition call each,
		// and "flip" answers call k with channel k mod 2
		j := runYAML(t, h, t.TempDir(), `version: 1
name: flip
plugins:
  poison: { path: {wasm:poison} }
  part: { path: {wasm:partitioner}, config: { mode: flip } }
operators:
  - { id: src, source: { type: elements, values: [{k: a, n: 1}, {k: a, n: 2}] } }
  - { id: m, map: poison }
  - { id: out, sink: { type: print }, parallelism: 2, partition: { custom: part, key: k } }
`, runtime.Options{}, nil)
		failed(t, h, j)
		wantWords(t, j.err, `operator "m" (subtask 1/1)`, `custom partitioner plugin "part" of "out" returned channel 0 for record 2 (key "a") but channel 1 for the same key before`)
	})
	healthy(t, h)
}
