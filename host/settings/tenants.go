package settings

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

var tenantName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// tenantKeys are the keys of one tenants: entry.
var tenantKeys = []string{"name", "token-sha256", "slots", "memory-pages", "running-jobs",
	"plugin-bytes", "plugins", "instance-pages", "call-timeout", "fuel-rate"}

// decodeTenants decodes the tenants: list strictly: an unknown key or a
// value of the wrong type is an error naming the entry and the key, since
// a mistyped quota that fell back to a default would be a security bug.
func decodeTenants(raw any, where string, s Settings) ([]Tenant, error) {
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: tenants must be a list of {name, token-sha256, quotas...}, not %T", where, raw)
	}
	var out []Tenant
	var errs []error
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: tenants[%d] must be a mapping, not %T", where, i, item))
			continue
		}
		t, err := decodeTenant(m, s)
		if err != nil {
			name, _ := m["name"].(string)
			errs = append(errs, fmt.Errorf("%s: tenants[%d] %s: %w", where, i, name, err))
			continue
		}
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}

func decodeTenant(m map[string]any, s Settings) (Tenant, error) {
	t := DefaultTenant()
	var errs []error
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		var err error
		switch strings.ToLower(k) {
		case "name":
			t.Name, err = str(v)
			if err == nil && !tenantName.MatchString(t.Name) {
				err = fmt.Errorf("%q: use 1 to 63 lower-case letters, digits, _ and -", t.Name)
			}
		case "token-sha256":
			t.TokenSHA256, err = str(v)
			if err == nil && !isSHA256Hex(t.TokenSHA256) {
				err = errors.New("must be 64 hex digits (the SHA-256 of the token; `host serve token` makes one)")
			}
		case "slots":
			t.Slots, err = positive(v)
		case "memory-pages":
			var n int
			n, err = positive(v)
			t.MemoryPages = int64(n)
		case "running-jobs":
			t.RunningJobs, err = positive(v)
		case "plugin-bytes":
			t.PluginBytes, err = positive(v)
		case "plugins":
			t.Plugins, err = positive(v)
		case "instance-pages":
			var n int
			n, err = positive(v)
			if err == nil && n > 65535 {
				err = fmt.Errorf("must be at most 65535 pages, got %d", n)
			}
			t.InstancePages = uint32(n)
		case "call-timeout":
			t.CallTimeout, err = duration(v)
		case "fuel-rate":
			var n int
			n, err = positive(v)
			t.FuelRate = int64(n)
		default:
			err = fmt.Errorf("unknown key (known: %s)", strings.Join(tenantKeys, ", "))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
		}
	}
	if t.Name == "" {
		errs = append(errs, errors.New("needs a name"))
	}
	if t.TokenSHA256 == "" {
		errs = append(errs, errors.New("needs token-sha256"))
	}
	if t.InstancePages == 0 {
		t.InstancePages = s.MemoryPages
	}
	if t.CallTimeout == 0 {
		t.CallTimeout = s.CallTimeout
	}
	if t.FuelRate == 0 {
		t.FuelRate = s.FuelRate
	}
	if t.MemoryPages < int64(t.InstancePages) {
		errs = append(errs, fmt.Errorf("memory-pages %d is less than one instance (instance-pages %d)", t.MemoryPages, t.InstancePages))
	}
	return t, errors.Join(errs...)
}

func str(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("must be a string, not %T", v)
	}
	return s, nil
}

// positive accepts an integer ≥ 1, as YAML or the environment gives it.
func positive(v any) (int, error) {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int64:
		n = x
	case uint64:
		n = int64(x)
	case float64:
		if x != float64(int64(x)) {
			return 0, fmt.Errorf("must be a whole number, got %g", x)
		}
		n = int64(x)
	case string:
		var err error
		if n, err = strconv.ParseInt(x, 10, 64); err != nil {
			return 0, fmt.Errorf("must be a whole number, got %q", x)
		}
	default:
		return 0, fmt.Errorf("must be a whole number, not %T", v)
	}
	if n < 1 || n > 1<<40 {
		return 0, fmt.Errorf("must be in 1..%d, got %d", int64(1)<<40, n)
	}
	return int(n), nil
}

func duration(v any) (time.Duration, error) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("must be a duration such as 2s, not %T", v)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("must be a positive duration such as 2s, got %q", s)
	}
	return d, nil
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
