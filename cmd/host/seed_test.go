package main

import (
	"bytes"
	"context"
	"maps"
	"regexp"
	"strings"
	"testing"
)

// TestSeedVariesRebalance: REBALANCE's start channels are the same on
// every run of one seed (the default 0 included), and --seed picks others.
func TestSeedVariesRebalance(t *testing.T) {
	t.Chdir("../..")
	channels := func(seed string) map[string]string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"run", "--progress=none", "--seed", seed, "configs/rebalance.yaml"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("seed %s: exit %d: %s", seed, code, &stderr)
		}
		out := stdout.String()
		re := regexp.MustCompile(`^rr:(\d)> \{"n":(\d+)\}$`)
		got := map[string]string{} // n -> the subtask it reached
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			m := re.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("seed %s: not a print line: %q", seed, l)
			}
			got[m[2]] = m[1]
		}
		if len(got) != 20 {
			t.Fatalf("seed %s: %d records, want 20", seed, len(got))
		}
		return got
	}
	zero := channels("0")
	if again := channels("0"); !maps.Equal(zero, again) {
		t.Fatalf("seed 0 picked other channels on a second run:\n%v\n%v", zero, again)
	}
	if one := channels("1"); maps.Equal(zero, one) {
		t.Fatalf("seeds 0 and 1 picked the same channels: %v", zero)
	}
}
