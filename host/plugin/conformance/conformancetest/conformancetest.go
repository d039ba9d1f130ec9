// Package conformancetest runs the plugin conformance kit
// (host/plugin/conformance) from Go tests.
package conformancetest

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/host/plugin/conformance"
)

// Check runs the module at path through the conformance kit, logs the
// PASS/FAIL table and fails t with each failed check. It returns the
// report.
func Check(t testing.TB, path string, o conformance.Options) conformance.Report {
	t.Helper()
	rep, err := conformance.CheckFile(context.Background(), path, o)
	if err != nil {
		t.Fatalf("conformance %s: %v", path, err)
	}
	t.Logf("conformance %s:\n%s", path, rep)
	for _, f := range rep.Failures() {
		t.Errorf("%s: %s: %s", path, f.Check, f.Detail)
	}
	return rep
}
