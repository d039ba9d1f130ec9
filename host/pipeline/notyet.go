package pipeline

import "go.yaml.in/yaml/v3"

// notYet are the keys a Flink user may write for what sluice does not do
// yet, by where they are written, each with what it is (a plural noun)
// in Flink's words:
// lint says "not supported yet" rather than "unknown key", so the user
// knows the feature, not the spelling, is missing.
var notYet = map[string]map[string]string{
	"pipeline": {
		"state-backend": "state backends (Flink's state.backend.type)",
	},
	"operator": {
		"windows":          "windows (Flink's window, windowAll and their assigners)",
		"trigger":          "window triggers (Flink's trigger)",
		"evictor":          "window evictors (Flink's evictor)",
		"allowed-lateness": "allowed lateness settings of windows (Flink's allowedLateness)",
		"watermarks":       "watermark strategies (Flink's assignTimestampsAndWatermarks)",
		"watermark":        "watermark strategies (Flink's assignTimestampsAndWatermarks)",
		"join":             "window joins (Flink's join(...).where(...).equalTo(...).window(...))",
		"interval-join":    "interval joins (Flink's intervalJoin)",
		"state-ttl":        "state time-to-live settings (Flink's StateTtlConfig)",
	},
}

// notSupported reports key k of a mapping of kind (pipeline, operator or
// connector) as not supported yet when it names a Flink feature sluice
// lacks, and says whether it did.
func (d *decoder) notSupported(k *yaml.Node, kind, where string) bool {
	what, ok := notYet[kind][k.Value]
	if !ok {
		return false
	}
	d.errorf(k, "%s in %s: %s are not supported yet", k.Value, where, what)
	return true
}
