package runtime

import (
	"fmt"
	"strings"
	"testing"
)

// skewed is 4,000 elements, 80 % of them with c = 5.
func skewed() string {
	var vs []string
	for i := 0; i < 4000; i++ {
		c := 5
		if i%5 == 0 {
			c = 100 + i
		}
		vs = append(vs, fmt.Sprintf("{c: %d, v: 1}", c))
	}
	return "[" + strings.Join(vs, ", ") + "]"
}

// TestHotKeyOnCustomEdge: a custom partitioner's edge names its hot key
// and the subtask the partitioner sent it to (5 mod 4 = 1), as a key-by
// edge does, with advice for a partitioner.
func TestHotKeyOnCustomEdge(t *testing.T) {
	_, _, res, err := runYAML(t, `
version: 1
name: custom-hot
plugins:
  mod: { path: mod.wasm }
operators:
  - { id: src, source: { type: elements, values: `+skewed()+` } }
  - { id: out, parallelism: 4, partition: { custom: mod, key: c }, sink: { type: discard } }
`, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.HotKeys) != 1 {
		t.Fatalf("hot keys %+v, want the one of the CUSTOM edge", res.HotKeys)
	}
	h := res.HotKeys[0]
	if h.Key != "5" || h.Strategy != "CUSTOM" || h.Subtask != 1 || !strings.Contains(h.Advice, `partitioner "mod"`) {
		t.Fatalf("hot key %+v, want key 5 on the CUSTOM edge, subtask 1, advice naming the partitioner", h)
	}
	var b strings.Builder
	res.WriteSummary(&b)
	if !strings.Contains(b.String(), `warning: hot key 5 carries 8`) || !strings.Contains(b.String(), "on the CUSTOM edge src -> out: subtask 2/4") {
		t.Fatalf("summary:\n%s", b.String())
	}
}

// TestHotKeyAdviceOnMergeEdge: in streaming mode a keyed aggregation
// emits a running result per record, so the merge edge after it carries
// as many records as it read: the advice says salting cannot thin them
// there, instead of repeating "salt the key". In batch mode it emits one
// final per key, and the edge carries no hot key at all.
func TestHotKeyAdviceOnMergeEdge(t *testing.T) {
	src := `
version: 1
name: merge
mode: %s
operators:
  - { id: src, source: { type: elements, values: ` + skewed() + ` } }
  - { id: partials, key-by: c, sum: v, parallelism: 2 }
  - { id: merged, key-by: c, sum: v, parallelism: 4 }
  - { id: out, sink: { type: discard } }
`
	_, _, res, err := runYAML(t, fmt.Sprintf(src, "streaming"), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var merge *HotKey
	for i, h := range res.HotKeys {
		if h.From == "partials" {
			merge = &res.HotKeys[i]
		} else if !strings.HasPrefix(h.Advice, "salt the key") {
			t.Errorf("first key-by's advice %q", h.Advice)
		}
	}
	if merge == nil || !strings.Contains(merge.Advice, `"partials"'s running results`) || strings.HasPrefix(merge.Advice, "salt") {
		t.Fatalf("merge edge's hot key %+v: want advice on partials' running results", merge)
	}
	_, _, res, err = runYAML(t, fmt.Sprintf(src, "batch"), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.HotKeys {
		if h.From == "partials" {
			t.Errorf("batch mode: the merge edge reads one final per key, yet has hot key %+v", h)
		}
	}
}
