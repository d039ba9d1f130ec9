package conformance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
)

// fixture compiles host/plugin/testdata/name.wat, with its sluice_open
// returning status instead of 0 when status is not 0.
func fixture(t *testing.T, name string, status int) string {
	t.Helper()
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Fatalf("wat2wasm not found: install wabt (Debian/Ubuntu: apt-get install -y wabt)")
	}
	src, err := os.ReadFile(filepath.Join("..", "testdata", name+".wat"))
	if err != nil {
		t.Fatal(err)
	}
	open := `(func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))`
	if !strings.Contains(string(src), open) {
		t.Fatalf("%s.wat has no one-line sluice_open returning 0", name)
	}
	if status != 0 {
		src = []byte(strings.Replace(string(src), open, strings.Replace(open, "(i32.const 0)", "(i32.const "+strconv.Itoa(status)+")", 1), 1))
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, name+".wat"), filepath.Join(dir, name+".wasm")
	if err := os.WriteFile(in, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(tool, in, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm %s: %v\n%s", name, err, msg)
	}
	return out
}

// TestSkippedRowsAreTheRunsRows: when open fails, every check a run would
// have made after it shows as a SKIP row (they vanished from the table
// and the total), and the lists of them name the rows of a run whose open
// succeeded, for an operator, a partitioner and a key selector.
func TestSkippedRowsAreTheRunsRows(t *testing.T) {
	for _, c := range []struct {
		fixture string
		kind    abi.Kind
		after   []string
	}{
		{"filter", "", operatorChecks()},
		{"partition", "", partitionerChecks()},
		{"keysel", abi.KindKeySelector, keySelectorChecks()},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			ctx := context.Background()
			o := Options{Kind: c.kind, Records: 100}
			rep, err := CheckFile(ctx, fixture(t, c.fixture, 0), o)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, x := range rep[3:] { // marker and exports, describe, open
				names = append(names, x.Check)
			}
			if !slices.Equal(names, c.after) || len(rep.Skipped()) != 0 {
				t.Fatalf("rows after open %v, the list %v:\n%s", names, c.after, rep)
			}
			rep, err = CheckFile(ctx, fixture(t, c.fixture, -6), o)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep) != 3+len(c.after) || rep[2].OK || rep[2].Skipped || len(rep.Failures()) != 1 || len(rep.Skipped()) != len(c.after) {
				t.Fatalf("open failing:\n%s", rep)
			}
			for i, x := range rep[3:] {
				if x.Check != c.after[i] || x.Detail != "not run: open failed" {
					t.Errorf("row %d: %+v", 3+i, x)
				}
			}
		})
	}
}

// TestUndeclaredKeyedState: a plugin whose describe does not say keyed
// runs without keyed state, and one that uses it anyway fails the large
// batch with what to declare (it passed: the kit gave every plugin keyed
// state, and the pipeline without a key-by then failed record by record).
func TestUndeclaredKeyedState(t *testing.T) {
	rep, err := CheckFile(context.Background(), fixture(t, "undeclaredstate", 0), Options{Records: 10})
	if err != nil {
		t.Fatal(err)
	}
	var open, large Result
	for _, x := range rep {
		switch x.Check {
		case "open (empty config)":
			open = x
		case "large batch":
			large = x
		}
	}
	if !open.OK || open.Detail != "subtask 1/1, no keyed state (its describe does not say keyed)" {
		t.Errorf("open row %+v", open)
	}
	if large.OK || !strings.Contains(large.Detail, "the plugin uses keyed state but its describe does not say keyed (Go: sdk.KeyedProcess; Rust: const KEYED: bool = true; C: .keyed = true; AssemblyScript: .keyed())") {
		t.Errorf("large batch row %+v\n%s", large, rep)
	}
}

// TestMapCountRule: the kit holds a plugin to its kind's output count as a
// job does. The filter fixture (keeps a third of its input) checked as a
// map fails the large batch with the rule; checked as a filter it passes
// it.
func TestMapCountRule(t *testing.T) {
	wasm := fixture(t, "filter", 0)
	for _, c := range []struct {
		kind abi.Kind
		fail string
	}{
		{abi.KindMap, "a map emits one record for each input record, and this call emitted"},
		{abi.KindFilter, ""},
	} {
		rep, err := CheckFile(context.Background(), wasm, Options{Kind: c.kind, Records: 30})
		if err != nil {
			t.Fatal(err)
		}
		var large Result
		for _, x := range rep {
			if x.Check == "large batch" {
				large = x
			}
		}
		if c.fail == "" && !large.OK { // (the fixture does not check malformed input)
			t.Errorf("as a %s:\n%s", c.kind, rep)
		}
		if c.fail != "" && (large.OK || !strings.Contains(large.Detail, c.fail)) {
			t.Errorf("as a %s, large batch row %+v:\n%s", c.kind, large, rep)
		}
	}
}
