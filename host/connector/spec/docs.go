package spec

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DocsCommand is the command that writes docs/connectors.md from the
// sets; the page's header names it.
const DocsCommand = "bin/host docs connectors > docs/connectors.md"

// Reference renders docs/connectors.md: every connector of host (the
// CLI's set) and of serve (host serve's), with its options, boundedness,
// replay, guarantee and docs. serve holds host's connectors and its own
// (marked as host serve's only); one that is not Contained is not offered
// to host serve's tenants.
func Reference(host, serve *Set) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("<!-- Generated from the connector specs (host/connector/spec, and host/server for collect) by\n")
	w("     %s\n", DocsCommand)
	w("     Do not edit it by hand: TestDocsConnectorsMatchTheSpecs fails when the page and the specs disagree. -->\n\n")
	w("# Connectors\n\n")
	w("A source or a sink is a mapping with a `type` and that type's options:\n\n")
	w("```yaml\n%s```\n\n", overviewExample)
	w("Lint checks every option against the connector's spec: its type, its range or choices, whether it is required, ")
	w("and options that only go together; a mistyped type or option gets the nearest known name. ")
	w("Options are written in the pipeline file, so the file's rules for numbers hold ")
	w("([pipelines.md](pipelines.md#numbers-in-the-pipeline-file)).\n\n")
	w("Every source also takes `watermarks:`, its watermark strategy (Flink's `fromSource(source, WatermarkStrategy, name)`), ")
	w("which is not an option of its type: see [pipelines.md](pipelines.md#watermarks).\n\n")
	w("| type | role | what | ends by itself | replayable | guarantee | `host serve` |\n|---|---|---|---|---|---|---|\n")
	all := serve // it holds host's connectors and its own
	for _, c := range all.All() {
		inServe := "yes"
		switch {
		case host.Lookup(c.Role, c.Name) == nil:
			inServe = "only there"
		case !c.Contained && c.ServedWith != "":
			inServe = c.ServedWith
		case !c.Contained:
			inServe = "no"
		}
		w("| [`%s`](#%s-%s) | %s | %s | %s | %s | %s | %s |\n", c.Name, c.Role, c.Name, c.Role, c.Summary,
			endsDoc(c), yesNo(c.Replayable), c.Guarantee, inServe)
	}
	w("\n**Ends by itself**: a job whose sources all end is bounded, and mode `automatic` runs it as `batch` ")
	w("([execution modes](pipelines.md#execution-modes)). **Replayable**: the source can read its records again from ")
	w("a position, what restoring a job from a checkpoint needs. **Guarantee**: what the connector can give once a job ")
	w("is restored from a checkpoint ([checkpoints.md](checkpoints.md)): for a source, `exactly-once` when it rewinds ")
	w("to the checkpoint's position, `none` when what it read is gone; for a sink, `at-least-once` when records ")
	w("written after the checkpoint are written again, `none` when it gives no guarantee. ")
	w("Tenants of `host serve` may use the connectors that touch neither the host's files nor its standard streams, ")
	w("and Kafka when the server names the brokers they may use ([server.md](server.md#kafka)).\n")
	for _, role := range []Role{Source, Sink} {
		w("\n## %ss\n", strings.ToUpper(role.String()[:1])+role.String()[1:])
		for _, n := range all.Names(role) {
			connectorDoc(&b, all.Lookup(role, n))
		}
	}
	w("\n## Formats\n\n%s\n", FormatsDoc)
	return b.String()
}

const overviewExample = `version: 1
name: connectors
operators:
  - id: numbers
    source: { type: generator, preset: sequence, count: 5 }
  - id: out
    sink: { type: print, prefix: n }
`

func connectorDoc(b *strings.Builder, c *Connector) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("\n### %s `%s`\n\n", strings.ToUpper(c.Role.String()[:1])+c.Role.String()[1:], c.Name)
	w("%s%s.\n\n%s\n\n", strings.ToUpper(c.Summary[:1]), c.Summary[1:], c.Doc)
	if c.Role == Source {
		w("Ends by itself: %s. Replayable: %s. Guarantee: %s.\n\n", endsDoc(c), yesNo(c.Replayable), c.Guarantee)
	} else {
		w("Guarantee: %s.\n\n", c.Guarantee)
	}
	if len(c.Options) == 0 {
		w("It takes no option.\n")
	} else {
		w("| option | type | default | what |\n|---|---|---|---|\n")
		for _, o := range flatOptions(c.Options, "") {
			def := defaultDoc(c, o)
			what := o.Doc
			if o.Only != nil {
				vals := make([]string, len(o.Only.Values))
				for i, v := range o.Only.Values {
					vals[i] = "`" + v + "`"
				}
				what += fmt.Sprintf(" (%s %s only)", o.Only.Option, sayList(vals, "and"))
			}
			w("| `%s` | %s | %s | %s |\n", o.Name, typeDoc(o), def, what)
		}
	}
	if len(c.Variants) > 0 {
		w("\n#### %s %ss\n\n", strings.ToUpper(c.Name[:1])+c.Name[1:], c.VariantOption)
		for i, v := range c.Variants {
			w("`%s: %s`: %s.\n\n| field | type | values |\n|---|---|---|\n", c.VariantOption, v.Name, v.Doc)
			for _, f := range v.Fields {
				w("| `%s` | %s | %s |\n", f.Name, f.Type, fieldDoc(f))
			}
			if i < len(c.Variants)-1 {
				w("\n")
			}
		}
	}
	if c.Example != "" {
		w("\n```yaml\n%s```\n", c.Example)
	}
}

func endsDoc(c *Connector) string {
	if c.Role != Source {
		return "—"
	}
	switch {
	case c.BoundedDoc != "":
		return c.BoundedDoc
	case c.BoundednessOf(nil) == Bounded:
		return "yes"
	case c.BoundednessOf(nil) == EndsWithInput:
		return "at the end of its input"
	}
	return "no"
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

func typeDoc(o Option) string {
	switch o.Type {
	case Enum:
		return "`" + strings.Join(o.Choices, "`, `") + "`"
	case Int, Number:
		return fmt.Sprintf("%s, %s to %s", o.Type, num(o.Min), num(o.Max))
	case String:
		if o.Empty {
			return "string (may be empty)"
		}
	case Duration:
		if o.MinDuration > 0 {
			return "duration, at least " + DurationText(o.MinDuration)
		}
	}
	return o.Type.String()
}

func fieldDoc(f Field) string {
	if f.Type == "string" {
		return f.Doc
	}
	r := fmt.Sprintf("%s to %s", num(f.Min), num(f.Max))
	if f.Max >= 1<<53 {
		r = "from " + num(f.Min)
	}
	if f.Doc == "" {
		return r
	}
	return r + "; " + f.Doc
}

// num writes a bound as a person reads it: 2^53 rather than 9.007e15.
func num(v float64) string {
	switch {
	case v == 1<<53:
		return "2^53"
	case v == -(1 << 53):
		return "-2^53"
	case v >= 1e12 && v == float64(int64(v)) && strings.Trim(strconv.FormatInt(int64(v), 10), "0") == "1":
		return fmt.Sprintf("10^%d", len(strconv.FormatInt(int64(v), 10))-1)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// defaultDoc writes an option's default: required, its DefaultDoc, each
// variant's own, or the value.
func defaultDoc(c *Connector, o Option) string {
	switch {
	case o.Required:
		return "required"
	case o.DefaultDoc != "":
		return o.DefaultDoc
	}
	var per []string
	for _, v := range c.Variants {
		if d, ok := v.Defaults[o.Name]; ok {
			per = append(per, fmt.Sprintf("%s (%s)", valueDoc(d), v.Name))
		}
	}
	if len(per) > 0 {
		return strings.Join(per, ", ")
	}
	if o.Default == nil {
		return "none"
	}
	return valueDoc(o.Default)
}

func valueDoc(v any) string {
	switch x := v.(type) {
	case string:
		return "`" + x + "`"
	case float64:
		return num(x)
	case time.Duration:
		return "`" + DurationText(x) + "`"
	}
	return fmt.Sprint(v)
}

// DurationText writes a duration as a pipeline file does: 5m rather than
// Go's 5m0s.
func DurationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// flatOptions lists options with the fields of a Map after it, named
// map.field, for the options table.
func flatOptions(opts []Option, prefix string) []Option {
	var out []Option
	for _, o := range opts {
		o.Name = prefix + o.Name
		out = append(out, o)
		if o.Type == Map {
			out = append(out, flatOptions(o.Fields, o.Name+".")...)
		}
	}
	return out
}
