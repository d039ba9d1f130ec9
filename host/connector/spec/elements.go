package spec

// Elements is the elements source: records written in the pipeline file,
// Flink's fromElements.
var Elements = &Connector{
	Name:    "elements",
	Role:    Source,
	Summary: "the records written inline in the pipeline file (Flink's `fromElements`)",
	Doc: "Each value of `values` is one record, emitted in order: a mapping keeps the key order the file " +
		"gives it, so print shows the fields as written. Records have no event time. It runs as one subtask " +
		"whatever the job's parallelism, as Flink's non-parallel sources do.",
	Options: []Option{
		{Name: "values", Type: List, Required: true, Ordered: true, Doc: "the records"},
	},
	Boundedness: func(map[string]any) Boundedness { return Bounded },
	Replayable:  true,
	Contained:   true,
	Guarantee:   ExactlyOnce,
	NonParallel: true,
	Example: `version: 1
name: inline
operators:
  - id: people
    source:
      type: elements
      values: [{ name: ada, born: 1815 }, { name: alan, born: 1912 }]
  - id: out
    sink: { type: print, prefix: person }
`,
}
