package pipeline

import "go.yaml.in/yaml/v3"

// notYet are the keys a Flink user may write for what sluice does not do
// yet, by where they are written, each with what it is (a plural noun)
// in Flink's words:
// lint says "not supported yet" rather than "unknown key", so the user
// knows the feature, not the spelling, is missing.
var notYet = map[string]map[string]string{
	"operator": {
		"trigger":       "window triggers (Flink's trigger)",
		"evictor":       "window evictors (Flink's evictor)",
		"watermarks":    "watermark strategies after a source (Flink's assignTimestampsAndWatermarks; a source's watermarks: key is supported)",
		"watermark":     "watermark strategies after a source (Flink's assignTimestampsAndWatermarks; a source's watermarks: key is supported)",
		"join":          "window joins (Flink's join(...).where(...).equalTo(...).window(...))",
		"interval-join": "interval joins (Flink's intervalJoin)",
	},
}

// movedKeys are Flink's names of what sluice has under another key, by
// where they are written: lint names the key to write.
var movedKeys = map[string]map[string]string{
	"pipeline": {
		"state-backend": "the state backend is the state: key: state: { backend: heap | pebble }",
	},
	"operator": {
		"windows":          "the key is window: (or window-all:)",
		"allowed-lateness": "allowed-lateness is a key of window: (window: { ..., allowed-lateness: 5s })",
		"state-ttl":        "state-ttl goes in the operator's config: map (config: { state-ttl: [{ slot: 0, ttl: 1h }] })",
	},
}

// notSupported reports key k of a mapping of kind (pipeline, operator or
// connector) as not supported yet when it names a Flink feature sluice
// lacks, and says whether it did.
func (d *decoder) notSupported(k *yaml.Node, kind, where string) bool {
	if hint, ok := movedKeys[kind][k.Value]; ok {
		d.errorf(k, "%s in %s: %s", k.Value, where, hint)
		return true
	}
	what, ok := notYet[kind][k.Value]
	if !ok {
		return false
	}
	d.errorf(k, "%s in %s: %s are not supported yet", k.Value, where, what)
	return true
}
