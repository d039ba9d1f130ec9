package connector

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
)

// options reads a connector's options as the YAML parser left them. The
// first problem sticks: later reads return zero values and finish reports
// it, so a constructor reads everything and checks once.
type options struct {
	spec  *spec.Connector // nil for a type this package does not make
	role  string          // "source" or "sink"
	op    string          // operator id
	typ   string          // connector type
	m     map[string]any
	known map[string]bool
	err   error
}

func newOptions(role, op string, c *pipeline.Connector) *options {
	r := spec.Source
	if role == "sink" {
		r = spec.Sink
	}
	m, _ := lookup(r, c)
	return &options{spec: m.spec, role: role, op: op, typ: c.Type, m: c.Options, known: map[string]bool{}}
}

// The readers below take an option's default, range and choices from the
// connector's spec, the one lint checked the pipeline against, so the two
// cannot disagree.

// opt is option name of the spec. A name the spec lacks is a mistake in
// this package: reported as the connector's error, which every test of
// the connector shows.
func (o *options) opt(name string) spec.Option {
	if o.spec != nil {
		if s, ok := o.spec.Option(name); ok {
			return s
		}
	}
	o.fail("option %q is not in the connector's spec (a bug in sluice)", name)
	return spec.Option{}
}

// def is option name's default, as the spec gives it for these options.
func (o *options) def(name string) any {
	if o.spec == nil {
		return nil
	}
	return o.spec.DefaultOf(name, o.m)
}

// specInt reads an Int option: the spec's default and range.
func (o *options) specInt(name string) int64 {
	s := o.opt(name)
	def, _ := o.def(name).(int64)
	return o.int(name, def, int64(s.Min), int64(s.Max))
}

// specNumber reads a Number option: the spec's default and range.
func (o *options) specNumber(name string) float64 {
	s := o.opt(name)
	def, _ := o.def(name).(float64)
	return o.float(name, def, s.Min, s.Max)
}

// specString reads a String option: the spec's default.
func (o *options) specString(name string) string {
	o.opt(name)
	def, _ := o.def(name).(string)
	return o.str(name, def)
}

// specBool reads a Bool option: the spec's default, else false.
func (o *options) specBool(name string) bool {
	o.opt(name)
	v, ok := o.get(name)
	if !ok {
		def, _ := o.def(name).(bool)
		return def
	}
	b, isBool := v.(bool)
	if !isBool {
		o.fail("option %q must be true or false, got %v", name, v)
	}
	return b
}

// specMap reads a Map option: its fields as lint left them, nil when it
// is not given.
func (o *options) specMap(name string) map[string]any {
	o.opt(name)
	v, ok := o.get(name)
	if !ok {
		return nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		o.fail("option %q must be a mapping, got %v", name, v)
	}
	return m
}

// specEnum reads an Enum option: def when it is not given (the spec's
// default when def is ""), one of the spec's choices.
func (o *options) specEnum(name, def string) string {
	s := o.opt(name)
	if def == "" {
		def, _ = o.def(name).(string)
	}
	if s.Required && !o.has(name) {
		o.fail("option %q is required: one of %s", name, strings.Join(s.Choices, ", "))
	}
	return o.oneOf(name, def, s.Choices...)
}

// errorf returns an error that names the operator and its connector type.
func (o *options) errorf(format string, args ...any) error {
	return fmt.Errorf("%s %q (%s): %s", o.role, o.op, o.typ, fmt.Sprintf(format, args...))
}

func (o *options) fail(format string, args ...any) {
	if o.err == nil {
		o.err = o.errorf(format, args...)
	}
}

// get returns an option's value, marking it as one this connector reads.
func (o *options) get(name string) (any, bool) {
	o.known[name] = true
	v, ok := o.m[name]
	return v, ok && v != nil
}

func (o *options) has(name string) bool {
	_, ok := o.get(name)
	return ok
}

func (o *options) str(name, def string) string {
	v, ok := o.get(name)
	if !ok {
		return def
	}
	s, isStr := v.(string)
	if !isStr {
		o.fail("option %q must be a string, got %v", name, v)
	}
	return s
}

// nullLiteral reads option null-literal (Flink's csv.null-literal): the
// CSV cell text that stands for null, which only format csv takes. ok is
// false when it is not set: then a CSV source reads an empty cell as ""
// and a sink writes null as an empty cell.
func (o *options) nullLiteral(format string) (text string, ok bool) {
	if !o.has("null-literal") {
		return "", false
	}
	text = o.str("null-literal", "")
	if format != "csv" {
		o.fail("option \"null-literal\" is an option of format csv, and this is format %s", format)
	}
	return text, true
}

// oneOf reads a string option that must be one of choices; def when unset.
func (o *options) oneOf(name, def string, choices ...string) string {
	s := o.str(name, def)
	for _, c := range choices {
		if s == c {
			return s
		}
	}
	if o.err == nil {
		o.fail("option %q must be one of %s, got %q", name, strings.Join(choices, ", "), s)
	}
	return def
}

// int reads an integer option in [lo, hi]; def when unset. An integral
// float (YAML 1e6) is accepted.
func (o *options) int(name string, def, lo, hi int64) int64 {
	v, ok := o.get(name)
	if !ok {
		return def
	}
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int64:
		n = x
	case uint64:
		if x > math.MaxInt64 {
			o.fail("option %q is too large: %d", name, x)
			return def
		}
		n = int64(x)
	case float64:
		if x != math.Trunc(x) || x < math.MinInt64 || x >= math.MaxInt64 {
			o.fail("option %q must be a whole number, got %v", name, x)
			return def
		}
		n = int64(x)
	default:
		o.fail("option %q must be a whole number, got %v", name, v)
		return def
	}
	if n < lo || n > hi {
		o.fail("option %q must be between %d and %d, got %d", name, lo, hi, n)
		return def
	}
	return n
}

// float reads a number option in [lo, hi]; def when unset.
func (o *options) float(name string, def, lo, hi float64) float64 {
	v, ok := o.get(name)
	if !ok {
		return def
	}
	var f float64
	switch x := v.(type) {
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case uint64:
		f = float64(x)
	case float64:
		f = x
	default:
		o.fail("option %q must be a number, got %v", name, v)
		return def
	}
	if math.IsNaN(f) || f < lo || f > hi {
		o.fail("option %q must be between %v and %v, got %v", name, lo, hi, f)
		return def
	}
	return f
}

// finish reports the first problem, or an option this connector does not
// know.
func (o *options) finish() error {
	if o.err != nil {
		return o.err
	}
	for _, k := range sortedKeys(o.m) {
		if !o.known[k] {
			return o.errorf("unknown option %q (known: %s)", k, strings.Join(sortedKeys(o.known), ", "))
		}
	}
	return nil
}

// specDuration reads a Duration option: the spec's default and minimum.
func (o *options) specDuration(name string) time.Duration {
	s := o.opt(name)
	v, ok := o.get(name)
	if !ok {
		def, _ := o.def(name).(time.Duration)
		return def
	}
	d, isDur := v.(time.Duration)
	if !isDur {
		o.fail("option %q must be a duration such as 30s, got %v", name, v)
	} else if d < s.MinDuration {
		o.fail("option %q must be at least %v, got %v", name, s.MinDuration, d)
	}
	return d
}

// specStrings reads a List option of strings; nil when it is not given.
func (o *options) specStrings(name string) []string {
	o.opt(name)
	v, ok := o.get(name)
	if !ok {
		return nil
	}
	items, isList := v.([]any)
	if !isList {
		o.fail("option %q must be a list, got %v", name, v)
		return nil
	}
	out := make([]string, len(items))
	for i, it := range items {
		switch x := it.(type) {
		case string:
			out[i] = x
		case int, int64, uint64, float64, bool:
			out[i] = fmt.Sprint(x) // as written: a topic may be called 2024
		default:
			o.fail("option %q: item %d must be a string, got %v", name, i+1, it)
		}
	}
	return out
}
