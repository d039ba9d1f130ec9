package pipeline

import (
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// duration reads a duration written with its unit (10s, 500ms, 1m30s) of
// at least lo; a bare 0 is accepted.
func (d *decoder) duration(n *yaml.Node, what string, lo time.Duration) (time.Duration, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		d.errorf(n, "%s must be a duration such as 10s or 500ms, not %s", what, describe(n))
		return 0, false
	}
	if n.Value == "0" {
		if lo > 0 {
			d.errorf(n, "%s must be at least %v, not 0", what, lo)
			return 0, false
		}
		return 0, true
	}
	if tag := n.ShortTag(); tag == "!!int" || tag == "!!float" {
		d.errorf(n, "%s: %s has no unit: write it with one, as %ss or %sms", what, n.Value, n.Value, n.Value)
		return 0, false
	}
	v, err := time.ParseDuration(strings.ReplaceAll(n.Value, " ", ""))
	if err != nil {
		d.errorf(n, "%s must be a duration such as 10s, 500ms or 1m30s, not %q", what, n.Value)
		return 0, false
	}
	if v < lo {
		if lo == 0 {
			d.errorf(n, "%s %v is negative", what, v)
		} else {
			d.errorf(n, "%s %v is below the minimum of %v", what, v, lo)
		}
		return 0, false
	}
	return v, true
}
