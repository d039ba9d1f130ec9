package pipeline

// Kinds lists every operator kind in the order the docs present them.
var Kinds = []Kind{
	KindSource, KindMap, KindFilter, KindFlatMap, KindProcess, KindReduce,
	KindSum, KindMin, KindMax, KindMinBy, KindMaxBy, KindCount,
	KindCoMap, KindCoProcess, KindSink,
}

// UsesPlugin reports whether the kind runs a user plugin (its YAML value
// names the plugin).
func (k Kind) UsesPlugin() bool {
	switch k {
	case KindMap, KindFilter, KindFlatMap, KindProcess, KindReduce, KindCoMap, KindCoProcess:
		return true
	}
	return false
}

// IsAggregation reports whether the kind is a built-in rolling
// aggregation on a field (sum, min, max, min-by, max-by).
func (k Kind) IsAggregation() bool {
	switch k {
	case KindSum, KindMin, KindMax, KindMinBy, KindMaxBy:
		return true
	}
	return false
}

// NeedsKey reports whether the kind works only on a keyed stream, as in
// Flink where sum, min, max, minBy, maxBy, count-per-key and reduce are
// methods of KeyedStream.
func (k Kind) NeedsKey() bool {
	return k.IsAggregation() || k == KindCount || k == KindReduce
}

// IsCoOperator reports whether the kind takes two connected inputs.
func (k Kind) IsCoOperator() bool { return k == KindCoMap || k == KindCoProcess }

// Stateless reports whether the kind keeps no state between records
// (map, filter, flat-map): moving it across a shuffle does not change
// results, which the planner's hints rely on.
func (k Kind) Stateless() bool {
	return k == KindMap || k == KindFilter || k == KindFlatMap
}

func isKind(s string) bool {
	for _, k := range Kinds {
		if string(k) == s {
			return true
		}
	}
	return false
}
