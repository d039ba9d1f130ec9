package pipeline

import (
	"fmt"
	"strings"
)

// Interpolate replaces ${VAR} and ${VAR:default} in s with the value
// lookup gives VAR. The default is used only when VAR is unset (an empty
// value is a value). "$${" writes a literal "${". A ${VAR} whose VAR is
// unset and has no default is an error, as is a malformed reference. A nil
// lookup knows no variable.
//
// The parser calls it on every scalar value after the YAML is parsed, so a
// variable can never inject YAML structure.
func Interpolate(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if i > 0 && s[i-1] == '$' {
			// "$${": an escaped "${".
			b.WriteString(s[:i-1])
			b.WriteString("${")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ in %q: write $${ for a literal ${", s[i:])
		}
		ref := rest[:end]
		name, def, hasDef := strings.Cut(ref, ":")
		if !validVarName(name) {
			return "", fmt.Errorf("invalid variable name %q in ${%s}: use letters, digits and _", name, ref)
		}
		val, ok := "", false
		if lookup != nil {
			val, ok = lookup(name)
		}
		switch {
		case ok:
			b.WriteString(val)
		case hasDef:
			b.WriteString(def)
		default:
			return "", fmt.Errorf("variable %s is not set (write ${%s:default} to give a default)", name, name)
		}
		s = rest[end+1:]
	}
}

func validVarName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
