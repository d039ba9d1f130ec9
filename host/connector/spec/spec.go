// Package spec says what a connector is: its name, whether it is a source
// or a sink, its options (types, defaults, docs), whether it ends by
// itself, whether it can be replayed and which delivery guarantee it can
// give. A Set of them is what host/pipeline parses and lints a pipeline
// against, what host/plan reads boundedness from, what host/server extends
// with its collect sink and what docs/connectors.md is generated from.
//
// The package imports nothing of sluice's, so every layer may read it: the
// specs of the built-in connectors are here (one file each), and
// host/connector gives each one its constructor.
package spec

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Role says whether a connector reads records (a source) or writes them
// (a sink).
type Role int

// The two roles.
const (
	Source Role = iota + 1
	Sink
)

func (r Role) String() string {
	switch r {
	case Source:
		return "source"
	case Sink:
		return "sink"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// Type is the type of an option's value.
type Type int

// Option types.
const (
	String   Type = iota + 1 // any scalar but null, as written
	Enum                     // one of Option.Choices
	Int                      // an integer in [Option.Min, Option.Max]
	Number                   // an integer or a decimal number in [Option.Min, Option.Max]
	List                     // a non-empty list of values
	Bool                     // true or false
	Map                      // a mapping whose keys are Option.Fields
	Duration                 // a duration with its unit (30s, 5m, 1m30s) of at least Option.MinDuration; a bare 0 is 0
)

func (t Type) String() string {
	switch t {
	case String:
		return "string"
	case Enum:
		return "enum"
	case Int:
		return "integer"
	case Number:
		return "number"
	case List:
		return "list"
	case Bool:
		return "boolean"
	case Map:
		return "mapping"
	case Duration:
		return "duration"
	}
	return fmt.Sprintf("Type(%d)", int(t))
}

// Guarantee is the delivery guarantee a connector can give once a job is
// restored from a checkpoint: for a source, whether it can rewind to the
// checkpoint's position (so each record counts once in the restored
// state); for a sink, what a reader of its output sees.
type Guarantee string

// Guarantees, in Flink's words (DeliveryGuarantee).
const (
	ExactlyOnce Guarantee = "exactly-once"
	AtLeastOnce Guarantee = "at-least-once"
	None        Guarantee = "none"
)

// Boundedness says whether a source ends by itself (Flink's Boundedness).
type Boundedness int

const (
	// Unbounded: it runs until the job is cancelled.
	Unbounded Boundedness = iota
	// Bounded: it ends by itself, and a plan can know it.
	Bounded
	// EndsWithInput: it ends at the end of its input, which a plan cannot
	// foresee (standard input: a pipe ends, a terminal need not). Mode
	// automatic streams it; an explicit batch reads it to the end.
	EndsWithInput
)

// Option is one option of a connector: a key of its mapping in the
// pipeline file besides type.
type Option struct {
	Name     string
	Type     Type
	Required bool
	// Default is the value when the option is not given: an int64 for
	// an Int, a float64 for a Number, a string for a String or an Enum;
	// a time.Duration for a Duration; nil for none. A Variant may give
	// its own (Connector.DefaultOf).
	Default any
	// DefaultDoc says what the default is where Default cannot (it
	// depends on another option, or there is none), for the docs.
	DefaultDoc string
	Doc        string
	// Choices are the values of an Enum.
	Choices []string
	// Min and Max bound an Int or a Number.
	Min, Max float64
	// MinDuration is the least value of a Duration.
	MinDuration time.Duration
	// Empty lets a String be "" (print's prefix: none).
	Empty bool
	// Ordered keeps the key order of the mappings in a List (the records
	// of elements).
	Ordered bool
	// Only, when set, is an option of some of the values of another
	// option only (the generator's accounts: of preset transactions).
	Only *Only
	// Fields are the keys of a Map, each an option of its own (a TLS
	// mapping's ca-file, cert-file, ...).
	Fields []Option
}

// Field returns the key of a Map called name.
func (o Option) Field(name string) (Option, bool) {
	for _, f := range o.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Option{}, false
}

// Only restricts an option to some values of another.
type Only struct {
	Option string
	Values []string
}

// Variant is one value of the connector's VariantOption and what it
// makes: a generator preset and the fields of its records.
type Variant struct {
	Name   string
	Doc    string
	Fields []Field
	// Defaults are the variant's own defaults of options, over the
	// options' Default (the generator's hot-key).
	Defaults map[string]any
}

// Field is one field of a variant's records.
type Field struct {
	Name string
	// Type is the field's value type: "string", "int" or "float".
	Type string
	// Min and Max bound an int or float field; Doc says the rest (a
	// string's shape). Tests in host/connector hold records to them.
	Min, Max float64
	Doc      string
}

// Problem is what Check finds wrong with a connector's options: Option
// names the option it is about ("" for the connector as a whole).
type Problem struct {
	Option string
	Msg    string
}

// Connector is the spec of one connector.
type Connector struct {
	Name string
	Role Role
	// Summary is one line; Doc the rest, in Markdown.
	Summary string
	Doc     string
	Options []Option
	// Boundedness says whether a source with these options ends by
	// itself; nil means Unbounded. UnboundedWhy says why it does not
	// ("a generator without count"); "" means "<name> never ends".
	Boundedness  func(opts map[string]any) Boundedness
	UnboundedWhy string
	// BoundedDoc says when it ends, for the docs, where that depends on
	// its options ("with `count`").
	BoundedDoc string
	// Replayable: a source can read its records again from a position
	// (what a restore from a checkpoint needs).
	Replayable bool
	Guarantee  Guarantee
	// NonParallel: a source that runs as one subtask whatever the job's
	// parallelism (Flink's fromElements).
	NonParallel bool
	// Contained: the connector touches nothing outside the job: no file,
	// standard stream or network. Only contained connectors are offered
	// to host serve's tenants; the zero value is the safe one, so a new
	// connector is refused to tenants until it says otherwise.
	Contained bool
	// ServedWith, for a connector that is not Contained, says under
	// which server setting host serve offers it all the same (kafka:
	// "with `kafka-brokers`", under the server's policy); "" for none.
	ServedWith string
	// VariantOption names the option whose value picks a Variant.
	VariantOption string
	Variants      []Variant
	// Example is a pipeline using the connector, for the docs (a test
	// lints, plans and runs each); "" for none.
	Example string
	// Check finds problems across options that the options' own specs
	// cannot (null-literal only with format csv); nil: none.
	Check func(opts map[string]any) []Problem
}

// Option returns the option called name.
func (c *Connector) Option(name string) (Option, bool) {
	for _, o := range c.Options {
		if o.Name == name {
			return o, true
		}
	}
	return Option{}, false
}

// DefaultOf is the default of option name for a connector with options
// opts: the chosen variant's, else the option's; nil for none.
func (c *Connector) DefaultOf(name string, opts map[string]any) any {
	if c.VariantOption != "" {
		chosen, _ := opts[c.VariantOption].(string)
		for _, v := range c.Variants {
			if d, ok := v.Defaults[name]; ok && v.Name == chosen {
				return d
			}
		}
	}
	o, _ := c.Option(name)
	return o.Default
}

// OptionNames lists the options, in the spec's order.
func (c *Connector) OptionNames() []string {
	names := make([]string, len(c.Options))
	for i, o := range c.Options {
		names[i] = o.Name
	}
	return names
}

// BoundednessOf is the boundedness of a source with options opts.
func (c *Connector) BoundednessOf(opts map[string]any) Boundedness {
	if c == nil || c.Boundedness == nil {
		return Unbounded
	}
	return c.Boundedness(opts)
}

// Why says why a source is unbounded, for an error.
func (c *Connector) Why() string {
	if c.UnboundedWhy != "" {
		return c.UnboundedWhy
	}
	return c.Name + " never ends"
}

// Problems checks options across each other: an option given for
// another variant than the one chosen, and the connector's own Check.
// opts holds the options whose values are valid, given every option
// written (a valid value or not).
func (c *Connector) Problems(opts map[string]any, given map[string]bool) []Problem {
	var out []Problem
	for _, o := range c.Options {
		if !given[o.Name] || o.Only == nil {
			continue
		}
		chosen, _ := opts[o.Only.Option].(string)
		if chosen == "" || slices.Contains(o.Only.Values, chosen) {
			continue
		}
		plural := ""
		if len(o.Only.Values) > 1 {
			plural = "s"
		}
		out = append(out, Problem{Option: o.Name, Msg: fmt.Sprintf("%s is an option of the %s %s%s, not of %s (which takes %s)",
			o.Name, strings.Join(o.Only.Values, " and "), o.Only.Option, plural, chosen, c.takes(o.Only.Option, chosen))})
	}
	if c.Check != nil {
		out = append(out, c.Check(opts)...)
	}
	return out
}

// takes lists the options a connector takes when option is value: every
// option not restricted to other values, the option itself aside.
func (c *Connector) takes(option, value string) string {
	var names []string
	for _, o := range c.Options {
		if o.Name == option || (o.Only != nil && (o.Only.Option != option || !slices.Contains(o.Only.Values, value))) {
			continue
		}
		names = append(names, o.Name)
	}
	return sayList(names, "and")
}

// sayList joins words as a sentence does: "a, b and c".
func sayList(words []string, and string) string {
	switch len(words) {
	case 0:
		return "nothing"
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + and + " " + words[len(words)-1]
}
