package spec

// Print is the print sink: each record as a JSON line on standard output,
// Flink's print().
var Print = &Connector{
	Name:    "print",
	Role:    Sink,
	Summary: "each record as a line of JSON on standard output (Flink's `print`)",
	Doc: "A line is the record's value as compact JSON, keys in record order, after Flink's prefix: " +
		"`prefix:N> ` at parallelism above 1 (N is the subtask, from 1), `prefix> ` at parallelism 1, " +
		"`N> ` without a prefix at parallelism above 1, nothing with neither. Subtasks write whole lines.",
	Options: []Option{
		{Name: "prefix", Type: String, Empty: true, Default: "", DefaultDoc: "none", Doc: "the text before each line (Flink's `print(prefix)`)"},
	},
	// a line written stays written: a restored job prints again what
	// came after its checkpoint
	Guarantee: AtLeastOnce,
	Example: `version: 1
name: printed
parallelism: 2
operators:
  - id: words
    source: { type: generator, preset: words, count: 6, seed: 1 }
  - id: out
    sink: { type: print, prefix: line }
`,
}
