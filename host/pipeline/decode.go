package pipeline

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/suggest"
	"go.yaml.in/yaml/v3"
)

// decoder turns yaml.Nodes into typed values, recording every problem
// instead of stopping at the first.
type decoder struct {
	file string
	errs Errors
	// quiet holds scalars already reported (a failed ${VAR}): no second
	// problem is reported about them.
	quiet map[*yaml.Node]bool
	// skipShape holds operators whose inputs are already reported as
	// malformed: validate does not count them again.
	skipShape map[*Operator]bool
	// ordered makes value return mappings as Map, keeping key order.
	ordered bool
	// set is the connectors sources and sinks are decoded against.
	set *spec.Set
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	if d.quiet[deref(n)] {
		return
	}
	d.errs.errorf(d.file, nodePos(n), format, args...)
}

// deref follows aliases to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// pair is one key: value of a mapping. Key is never an alias.
type pair struct{ Key, Val *yaml.Node }

// mapping returns the pairs of a mapping in file order, merge keys (<<)
// flattened: keys written in the mapping win over merged ones. It reports a
// node that is not a mapping, keys that are not strings and duplicate keys.
func (d *decoder) mapping(n *yaml.Node, what string) ([]pair, bool) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping, not %s", what, describe(n))
		return nil, false
	}
	var own, merged []pair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merged = append(merged, d.merge(v, what)...)
			continue
		}
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" {
			d.errorf(k, "a key in %s must be a string, not %s", what, describe(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.errorf(k, "duplicate key %q in %s (first at line %d)", k.Value, what, first.Line)
			continue
		}
		seen[k.Value] = k
		own = append(own, pair{k, v})
	}
	for _, p := range merged {
		if _, ok := seen[p.Key.Value]; !ok {
			seen[p.Key.Value] = p.Key
			own = append(own, p)
		}
	}
	return own, true
}

// merge returns the pairs a merge key brings in: one mapping or a list of
// mappings, earlier ones winning.
func (d *decoder) merge(v *yaml.Node, what string) []pair {
	v = deref(v)
	if v.Kind == yaml.SequenceNode {
		var out []pair
		seen := map[string]bool{}
		for _, m := range v.Content {
			ps, _ := d.mapping(m, "a merged value")
			for _, p := range ps {
				if !seen[p.Key.Value] {
					seen[p.Key.Value] = true
					out = append(out, p)
				}
			}
		}
		return out
	}
	ps, _ := d.mapping(v, "a merged value in "+what)
	return ps
}

// describe names a node's type for an error message.
func describe(n *yaml.Node) string {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			if n.Value == "" {
				return "empty"
			}
			// null, Null, NULL or ~ written out: maybe meant as text
			return fmt.Sprintf("null (YAML reads %s as null; write \"%s\" for the text)", n.Value, n.Value)
		case "!!int":
			return "an integer (" + n.Value + ")"
		case "!!float":
			return "a number (" + n.Value + ")"
		case "!!bool":
			return "a boolean (" + n.Value + ")"
		default:
			return fmt.Sprintf("a string (%q)", short(n.Value))
		}
	}
	return "unknown"
}

func short(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// str reads a string. Any scalar but null is accepted as written (an id
// may look like a number).
func (d *decoder) str(n *yaml.Node, what string) (string, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		d.errorf(n, "%s must be a string, not %s", what, describe(n))
		return "", false
	}
	if n.Value == "" {
		d.errorf(n, "%s must not be empty", what)
		return "", false
	}
	return n.Value, true
}

// integer reads an integer in [lo, hi].
func (d *decoder) integer(n *yaml.Node, what string, lo, hi int) (int, bool) {
	n = deref(n)
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		d.errorf(n, "%s must be an integer, not %s", what, describe(n))
		return 0, false
	}
	if !d.decimal(n, what, false) {
		return 0, false
	}
	if v < int64(lo) || v > int64(hi) {
		d.errorf(n, "%s must be between %d and %d, not %d", what, lo, hi, v)
		return 0, false
	}
	return int(v), true
}

// number reads an integer or a decimal number in [lo, hi].
func (d *decoder) number(n *yaml.Node, what string, lo, hi float64) (float64, bool) {
	n = deref(n)
	var v float64
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") || n.Decode(&v) != nil || math.IsNaN(v) {
		d.errorf(n, "%s must be a number, not %s", what, describe(n))
		return 0, false
	}
	if !d.decimal(n, what, false) {
		return 0, false
	}
	if v < lo || v > hi {
		d.errorf(n, "%s must be between %g and %g, not %g", what, lo, hi, v)
		return 0, false
	}
	return v, true
}

// boolean reads true or false.
func (d *decoder) boolean(n *yaml.Node, what string) (bool, bool) {
	n = deref(n)
	var v bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		d.errorf(n, "%s must be true or false, not %s", what, describe(n))
		return false, false
	}
	return v, true
}

// oneOf reads a string that must be one of choices.
func (d *decoder) oneOf(n *yaml.Node, what string, choices ...string) (string, bool) {
	s, ok := d.str(n, what)
	if !ok {
		return "", false
	}
	for _, c := range choices {
		if s == c {
			return s, true
		}
	}
	d.errorf(n, "%s must be one of %s, not %q", what, strings.Join(choices, ", "), s)
	return "", false
}

// decimal refuses an integer written with a leading zero (0755), saying to
// quote it for a string only where a string may stand (str): the YAML
// parser reads it as octal (493), as YAML 1.1 did, where YAML 1.2 reads
// 755 and a person may mean the string "0755" (and 08, no octal, becomes
// the float 8). 0o755 is octal to both.
func (d *decoder) decimal(n *yaml.Node, what string, str bool) bool {
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		return true
	}
	digits := strings.TrimLeft(n.Value, "+-")
	if len(digits) < 2 || digits[0] != '0' || strings.Trim(digits, "0123456789_") != "" {
		return true
	}
	sign := n.Value[:len(n.Value)-len(digits)]
	if sign != "-" {
		sign = "" // a "+" is dropped from the suggestions
	}
	dec := strings.TrimLeft(strings.ReplaceAll(digits, "_", ""), "0")
	if dec == "" {
		dec = "0"
	}
	// the ways out, the last after "or"; quoting keeps the zeros where a
	// string may stand
	ways := []string{sign + dec}
	if v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 8, 64); err == nil {
		ways = append(ways, fmt.Sprintf("%s0o%s for octal (YAML reads it as %d)", sign, dec, v))
	}
	if str {
		ways = append(ways, fmt.Sprintf("quote it (%q) for a string", n.Value))
	}
	say := ways[0]
	if k := len(ways); k > 1 {
		say = strings.Join(ways[:k-1], ", ") + " or " + ways[k-1]
	}
	d.errorf(n, "%s: %s has a leading zero: write %s", what, n.Value, say)
	return false
}

// fits refuses an integer past int64 and uint64, which the YAML parser
// makes a float with lost digits (99999999999999999999 became 1e20), as a
// JSON file's reader refuses it.
func (d *decoder) fits(n *yaml.Node, what string) bool {
	digits := strings.TrimLeft(n.Value, "+-")
	if n.ShortTag() != "!!float" || digits == "" || strings.Trim(digits, "0123456789_") != "" {
		return true
	}
	f, _ := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
	d.errorf(n, "%s: integer %s does not fit in 64 bits: quote it to keep its digits as a string, or write it with an exponent (%s) for a float",
		what, n.Value, strconv.FormatFloat(f, 'g', 3, 64))
	return false
}

// value converts a node to plain Go values: map[string]any, []any, string,
// int, float64, bool or nil (the types yaml gives an `any`).
func (d *decoder) value(n *yaml.Node, what string) (any, bool) {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		ps, ok := d.mapping(n, what)
		if !ok {
			return nil, false
		}
		m := make(map[string]any, len(ps))
		var keys []string
		for _, p := range ps {
			v, vok := d.value(p.Val, what)
			ok = ok && vok
			if _, dup := m[p.Key.Value]; !dup {
				keys = append(keys, p.Key.Value)
			}
			m[p.Key.Value] = v
		}
		if d.ordered {
			return Map{Keys: keys, Values: m}, ok
		}
		return m, ok
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		ok := true
		for _, c := range n.Content {
			v, vok := d.value(c, what)
			ok = ok && vok
			l = append(l, v)
		}
		return l, ok
	case yaml.ScalarNode:
		var v any
		switch n.ShortTag() {
		case "!!null":
			return nil, true
		case "!!str", "!!timestamp":
			return n.Value, true
		case "!!int", "!!float", "!!bool":
			if !d.decimal(n, what, true) || !d.fits(n, what) {
				return nil, false
			}
			if err := n.Decode(&v); err != nil {
				d.errorf(n, "%s: %v", what, err)
				return nil, false
			}
			return v, true
		}
		d.errorf(n, "%s: unsupported YAML tag %s", what, n.Tag)
		return nil, false
	}
	d.errorf(n, "%s: unsupported YAML node", what)
	return nil, false
}

// unknownKey reports a key that is not one of known, suggesting the
// nearest known key when one is close.
func (d *decoder) unknownKey(k *yaml.Node, where string, known []string) {
	if s := suggest.Closest(k.Value, known); s != "" {
		d.errorf(k, "unknown key %q in %s (did you mean %q?)", k.Value, where, s)
		return
	}
	if len(known) <= 16 {
		sorted := append([]string(nil), known...)
		sort.Strings(sorted)
		d.errorf(k, "unknown key %q in %s (known: %s)", k.Value, where, strings.Join(sorted, ", "))
		return
	}
	d.errorf(k, "unknown key %q in %s", k.Value, where)
}
