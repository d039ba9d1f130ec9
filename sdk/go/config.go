package sdk

import (
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/abi"
)

// OpenContext is what the OnOpen hook receives (Flink's RuntimeContext):
// the operator's config from the pipeline and its place in the job.
//
// The Config getters return def when the key is missing or nil and accept
// strings that parse (as `host plugin run --operator-config key=value` passes
// them). A value of the wrong type makes open fail with
// abi.StatusConfig after the hook returns, naming the key.
type OpenContext struct {
	// Config is the operator's config: strings, int64 (uint64 for an
	// unsigned integer past int64's range), float64, bool, nil, []byte,
	// []any and map[string]any.
	Config         map[string]any
	Subtask        int // 0-based index of this parallel instance
	Parallelism    int
	MaxParallelism int

	st *openState
}

// openState is the per-instance part of open: the raw config and the
// config errors the getters found.
type openState struct {
	raw  []byte
	errs []string
}

// ConfigRaw returns the msgpack encoding of a top-level config value (a
// copy owned by the SDK, valid for the life of the instance).
func (c OpenContext) ConfigRaw(name string) ([]byte, bool) {
	if c.st == nil || len(c.st.raw) == 0 {
		return nil, false
	}
	raw, ok, err := abi.MapField(c.st.raw, name)
	return raw, ok && err == nil
}

// ConfigValue returns a top-level config value as a Value (valid for the
// life of the instance): for setting it on records with Record.SetValue,
// which, unlike SetRaw, does not check the bytes again on every record.
func (c OpenContext) ConfigValue(name string) (Value, bool) {
	raw, ok := c.ConfigRaw(name)
	return Value{raw}, ok
}

// ConfigString returns a string config value; numbers and booleans are
// formatted.
func (c OpenContext) ConfigString(name, def string) string {
	switch v := c.Config[name].(type) {
	case nil:
		return def
	case string:
		return v
	}
	if s, ok := scalarText(c.Config[name]); ok {
		return s
	}
	c.bad(name, "a string")
	return def
}

// ConfigInt returns an integer config value (a whole float or a numeric
// string is accepted).
func (c OpenContext) ConfigInt(name string, def int64) int64 {
	switch v := c.Config[name].(type) {
	case nil:
		return def
	case int64:
		return v
	case float64:
		if v >= -(1<<63) && v < 1<<63 && v == float64(int64(v)) {
			return int64(v)
		}
	case string:
		if i, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return i
		}
	}
	c.bad(name, "an integer (int64)")
	return def
}

// ConfigFloat returns a number config value (a numeric string is
// accepted).
func (c OpenContext) ConfigFloat(name string, def float64) float64 {
	switch v := c.Config[name].(type) {
	case nil:
		return def
	case float64:
		return v
	case int64:
		return float64(v)
	case uint64:
		return float64(v)
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return f
		}
	}
	c.bad(name, "a number")
	return def
}

// ConfigBool returns a boolean config value ("true", "false", "1", "0"
// and the like are accepted).
func (c OpenContext) ConfigBool(name string, def bool) bool {
	switch v := c.Config[name].(type) {
	case nil:
		return def
	case bool:
		return v
	case string:
		if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
			return b
		}
	}
	c.bad(name, "a boolean")
	return def
}

func (c OpenContext) bad(name, want string) {
	if c.st != nil {
		c.st.errs = append(c.st.errs, "config "+name+": want "+want+", got "+describeValue(c.Config[name]))
	}
}

// describeValue names a config value in an error: a scalar as written
// (a string quoted, cut at 40 bytes), a list or map by its kind.
func describeValue(v any) string {
	if s, ok := scalarText(v); ok {
		return s
	}
	switch v := v.(type) {
	case string:
		if len(v) > 40 {
			return strconv.Quote(v[:40]) + "..."
		}
		return strconv.Quote(v)
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	case []byte:
		return "binary"
	}
	return "nil"
}

// scalarText formats a number or boolean config value as ConfigString
// gives it.
func scalarText(v any) (string, bool) {
	switch v := v.(type) {
	case int64:
		return strconv.FormatInt(v, 10), true
	case uint64:
		return strconv.FormatUint(v, 10), true
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}
