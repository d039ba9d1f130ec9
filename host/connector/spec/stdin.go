package spec

// Stdin is the stdin source: JSON lines or CSV from the host's standard
// input.
var Stdin = &Connector{
	Name:    "stdin",
	Role:    Source,
	Summary: "JSON lines or CSV from the host's standard input",
	Doc: "It runs as one subtask, and only one source of a job may read standard input. It ends at the end " +
		"of its input, which a plan cannot foresee (a pipe ends, a terminal need not): mode `automatic` " +
		"streams it, and mode `batch` reads it to the end. A line it cannot read goes the way of the " +
		"operator's `on-error`. What it read is gone: it cannot be replayed. See [formats](#formats).",
	Options: []Option{
		{Name: "format", Type: Enum, Choices: []string{"json", "csv"}, Default: "json",
			Doc: "`json`: one JSON value per line; `csv`: a header row naming the fields, then one record per row"},
		nullLiteralOption("the cell text read as null"),
	},
	Boundedness:  func(map[string]any) Boundedness { return EndsWithInput },
	UnboundedWhy: "standard input need not end",
	Check:        checkNullLiteral("source"),
	Guarantee:    None,
	NonParallel:  true,
	Example: `version: 1
name: from-stdin
mode: batch
operators:
  - id: rows
    source: { type: stdin, format: csv, null-literal: "NULL" }
  - id: out
    sink: { type: print }
`,
}
