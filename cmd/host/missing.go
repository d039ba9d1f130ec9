package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/host/plugin"
)

// buildHint says what builds a plugin file that does not exist: the make
// target of an example plugin of a sluice checkout (plugins/NAME/NAME.wasm
// and its -c, -rust and -as siblings, plugins/wat/*.wasm), else that the
// plugin must be built first.
func buildHint(path string) string {
	full, err := filepath.Abs(path)
	if err != nil {
		return "build the plugin first"
	}
	dir, base := filepath.Dir(full), strings.TrimSuffix(filepath.Base(full), ".wasm")
	checkout := filepath.Dir(filepath.Dir(dir))
	if filepath.Base(filepath.Dir(dir)) != "plugins" {
		return "build the plugin first"
	}
	if _, err := os.Stat(filepath.Join(checkout, "plugins.mk")); err != nil {
		return "build the plugin first"
	}
	target := "plugins"
	name := filepath.Base(dir)
	switch {
	case name == "wat":
		target = "plugins-wat"
	case base == name:
		target = "go-plugins"
	case base == name+"-c":
		target = "plugins-c"
	case base == name+"-rust":
		target = "plugins-rust"
	case base == name+"-as":
		target = "plugins-as"
	}
	if target == "plugins" {
		return "build it first: make plugins in " + checkout + " builds the example plugins"
	}
	return "build it first: make " + target + " in " + checkout + " builds it (make plugins builds every example)"
}

// withBuildHint is err's text, followed by what builds the plugin file
// when err is a plugin file that does not exist.
func withBuildHint(err error, text string) string {
	var le *plugin.LoadError
	if errors.As(err, &le) && errors.Is(le.Err, fs.ErrNotExist) && le.Path != "" {
		return text + "; " + buildHint(le.Path)
	}
	return text
}
