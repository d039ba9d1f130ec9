package spec

import (
	"fmt"
	"slices"
	"time"
)

// Incomplete lists what c's spec lacks or gets wrong, each as a sentence
// naming the option: a summary, doc or guarantee missing, an option
// without a type or doc, an enum without choices, a range that is empty,
// a default that does not fit its option. Tests hold every connector of a
// set to it (those of spec.Builtin here, those only host/connector makes
// there).
func Incomplete(c *Connector) []string {
	var out []string
	bad := func(format string, args ...any) {
		out = append(out, fmt.Sprintf("%s %s: ", c.Role, c.Name)+fmt.Sprintf(format, args...))
	}
	if c.Summary == "" || c.Doc == "" || c.Guarantee == "" {
		bad("summary, doc or guarantee missing")
	}
	var check func(prefix string, opts []Option)
	check = func(prefix string, opts []Option) {
		for _, o := range opts {
			name := prefix + o.Name
			switch {
			case o.Type == 0 || o.Doc == "":
				bad("option %s: no type or no doc", name)
			case o.Type == Map && len(o.Fields) == 0:
				bad("option %s: a mapping without fields", name)
			case o.Type == Enum && len(o.Choices) == 0:
				bad("option %s: an enum without choices", name)
			case (o.Type == Int || o.Type == Number) && o.Min >= o.Max:
				bad("option %s: range [%v, %v]", name, o.Min, o.Max)
			case o.Required && (o.Default != nil || o.DefaultDoc != ""):
				bad("option %s: required, with a default", name)
			}
			defaults := []any{o.Default}
			for _, v := range c.Variants {
				if d, ok := v.Defaults[o.Name]; ok {
					defaults = append(defaults, d)
				}
			}
			for _, d := range defaults {
				if d != nil && !fits(o, d) {
					bad("option %s: default %#v does not fit a %s", name, d, o.Type)
				}
			}
			if o.Only != nil {
				if _, ok := c.Option(o.Only.Option); !ok {
					bad("option %s: only with an option it does not have", name)
				}
			}
			if o.Type == Map {
				check(name+".", o.Fields)
			}
		}
	}
	check("", c.Options)
	return out
}

// fits: a default has its option's Go type and lies in its range or
// choices.
func fits(o Option, d any) bool {
	switch x := d.(type) {
	case int64:
		return o.Type == Int && float64(x) >= o.Min && float64(x) <= o.Max
	case float64:
		return o.Type == Number && x >= o.Min && x <= o.Max
	case bool:
		return o.Type == Bool
	case string:
		return o.Type == String && (x != "" || o.Empty) || o.Type == Enum && slices.Contains(o.Choices, x)
	case time.Duration:
		return o.Type == Duration && x >= o.MinDuration
	}
	return false
}
