package main

import (
	"os"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/connector/spec"
)

// TestDocsConnectorsMatchTheSpecs: docs/connectors.md is what `host docs
// connectors` prints from the connector specs, so a connector's docs
// cannot disagree with the spec that parsing, lint and plan read.
func TestDocsConnectorsMatchTheSpecs(t *testing.T) {
	atRoot(t)
	got, err := os.ReadFile("docs/connectors.md")
	if err != nil {
		t.Fatal(err)
	}
	want := connectorsPage()
	if string(got) == want {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(gl), len(wl)); i++ {
		g, w := "", ""
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("docs/connectors.md and the connector specs disagree from line %d:\n file: %s\n spec: %s\nrun: %s", i+1, g, w, spec.DocsCommand)
		}
	}
}

// TestDocsConnectorsCommand: the generator named in the page's header
// prints the page.
func TestDocsConnectorsCommand(t *testing.T) {
	code, out, errs := cli("", "docs", "connectors")
	if code != 0 || out != connectorsPage() {
		t.Fatalf("host docs connectors: exit %d, %d bytes (want %d)\n%s", code, len(out), len(connectorsPage()), errs)
	}
}
