package spec

// Discard is the discard sink: it counts records and drops them, Flink's
// DiscardingSink.
var Discard = &Connector{
	Name:    "discard",
	Role:    Sink,
	Summary: "counts records and drops them (Flink's `DiscardingSink`)",
	Doc:     "For measuring a pipeline, and for outputs a job must connect but nobody reads.",
	// it writes nothing, so nothing is written twice
	Guarantee: ExactlyOnce,
	Contained: true,
}
