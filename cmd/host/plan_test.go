package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// runHost runs the CLI from the project folder, as `make` and users do.
func runHost(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Chdir("../..")
	t.Setenv("SLUICE_SLOTS", "")
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestPlanText(t *testing.T) {
	code, out, errs := runHost(t, "plan", "configs/quickstart.yaml")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"job quickstart\n",
		"Source: txns -> valid -> enriched  parallelism 2",
		"enriched -> totals  HASH [accountId]  not chained: parallelism differs (2 vs 4); ship strategy is HASH, not FORWARD",
		"0:[0-31] 1:[32-63] 2:[64-95] 3:[96-127]",
		"slots needed   4 (offered: unlimited)",
		"slot 3: totals -> Sink: out (4/4)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestPlanJSON: the document has exactly the keys of the contract.
func TestPlanJSON(t *testing.T) {
	code, out, errs := runHost(t, "plan", "--format", "json", "configs/quickstart.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	// no HTML escaping: a task's name reads as it does in the text plan
	if !strings.Contains(out, `"name": "Source: txns -> valid -> enriched"`) {
		t.Errorf("task names escaped or missing:\n%s", out)
	}
	keysOf := func(v any) []string {
		var ks []string
		for k := range v.(map[string]any) {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	for _, c := range []struct {
		v    any
		want []string
	}{
		{doc, []string{"edges", "mode", "name", "operators", "required_slots", "tasks"}},
		{doc["operators"].([]any)[0], []string{"id", "kind", "max_parallelism", "parallelism", "slot_sharing_group", "task"}},
		{doc["tasks"].([]any)[0], []string{"id", "name", "operators", "parallelism", "slot_sharing_group"}},
		{doc["edges"].([]any)[0], []string{"chained", "from", "reason", "ship_strategy", "to"}},
	} {
		if got := keysOf(c.v); !reflect.DeepEqual(got, c.want) {
			t.Errorf("keys %v, want %v", got, c.want)
		}
	}
	if doc["required_slots"] != 4.0 || doc["mode"] != "streaming" || len(doc["edges"].([]any)) != 4 {
		t.Errorf("document: %v", doc)
	}
}

func TestPlanDOT(t *testing.T) {
	code, out, _ := runHost(t, "plan", "--format", "dot", "configs/side-output.yaml")
	if code != 0 || !strings.HasPrefix(out, `digraph "side-output" {`) || !strings.Contains(out, `"hot" -> "alerts"`) ||
		!strings.Contains(out, `taillabel="alerts"`) {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// TestPlanRefused: a plan that cannot be made exits 1 with every reason.
func TestPlanRefused(t *testing.T) {
	code, out, errs := runHost(t, "plan", "--slots", "3", "configs/quickstart.yaml")
	if code != 1 || out != "" || !strings.Contains(errs, "configs/quickstart.yaml: the job needs 4 slots but the host offers 3") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	bad := filepath.Join(t.TempDir(), "fwd.yaml")
	writeFile(t, bad, `version: 1
name: fwd
operators:
  - { id: a, source: { type: generator, preset: sequence, count: 1 }, parallelism: 2 }
  - { id: b, partition: forward, sink: { type: discard } }
`)
	code, _, errs = runHost(t, "plan", bad)
	if code != 1 || !strings.Contains(errs, bad+":5:25: Forward partitioning does not allow change of parallelism.") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	code, _, errs = runHost(t, "plan", "--format", "xml", "configs/quickstart.yaml")
	if code != 1 || !strings.Contains(errs, `unknown --format "xml": use text, json or dot`) {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	code, _, errs = runHost(t, "plan", "configs/no-such.yaml")
	if code != 1 || !strings.Contains(errs, "no-such.yaml") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
