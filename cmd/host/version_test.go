package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
)

func TestVersion(t *testing.T) {
	code, out, errs := runPluginCLI(t, "", "version")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// the test binary is built with the module's wazero as a dependency
	want := regexp.MustCompile(`^sluice  \S.*\nabi     v` + fmt.Sprint(abi.Version) + `\nwazero  v\d+\.\d+\.\d+\S*\ngo      go1\.\d+\S*\n$`)
	if !want.MatchString(out) {
		t.Errorf("version printed:\n%s", out)
	}
	code, flag, _ := runPluginCLI(t, "", "--version")
	if code != 0 || flag != out {
		t.Errorf("--version exit %d printed\n%s\nnot what version printed\n%s", code, flag, out)
	}
	if strings.Contains(out, "unknown") {
		t.Errorf("a version is unknown:\n%s", out)
	}
}

func TestVersionFromLdflags(t *testing.T) {
	old := version
	t.Cleanup(func() { version = old })
	version = "v9.8.7"
	if v := buildVersions(); v.Sluice != "v9.8.7" {
		t.Errorf("with -X main.version=v9.8.7 the version is %q", v.Sluice)
	}
}
