package langtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/plugin/conformance"
	"github.com/sluicehq/sluice/host/plugin/conformance/conformancetest"
	"github.com/sluicehq/sluice/host/settings"
)

// pluginModules lists every plugin module under plugins/: the ones the
// sources say must be built (plugins/<name>/main.go -> <name>.wasm,
// plugins/<name>/{c,rust,as}/ -> <name>-<lang>.wasm, plugins/wat/*.wat ->
// *.wasm) and any other .wasm found there. The value is the language.
func pluginModules(t *testing.T, root string) map[string]string {
	t.Helper()
	mods := map[string]string{}
	glob := func(pattern string) []string {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, src := range glob("plugins/*/main.go") {
		name := filepath.Base(filepath.Dir(src))
		mods[modulePath(root, name, "go")] = "go"
	}
	for _, lang := range languages {
		for _, dir := range glob("plugins/*/" + lang) {
			if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
				name := filepath.Base(filepath.Dir(dir))
				mods[modulePath(root, name, lang)] = lang
			}
		}
	}
	for _, src := range glob("plugins/wat/*.wat") {
		mods[strings.TrimSuffix(src, ".wat")+".wasm"] = "wat"
	}
	for _, f := range glob("plugins/*/*.wasm") {
		if _, ok := mods[f]; !ok {
			lang := "go"
			for _, l := range append([]string{"wat"}, languages...) {
				if strings.HasSuffix(f, "-"+l+".wasm") || filepath.Base(filepath.Dir(f)) == l {
					lang = l
				}
			}
			mods[f] = lang
		}
	}
	return mods
}

// TestConformanceEveryPlugin runs the conformance kit over every plugin
// module under plugins/, in every language. A missing Go module fails
// (make plugins builds it before go test); a missing module of another
// language is skipped unless SLUICE_REQUIRE_LANGS is set, as readModule
// decides for the other tests of this package.
// The host has the library's defaults with the CLI's memory (16 MiB, below
// the library's 64): every plugin must pass the kit's 10,000-record batch
// within the CPU budget and the memory a user's host gives it.
func TestConformanceEveryPlugin(t *testing.T) {
	root := repoRoot(t)
	mods := pluginModules(t, root)
	if len(mods) == 0 {
		t.Fatal("no plugins found under plugins/")
	}
	paths := make([]string, 0, len(mods))
	for p := range mods {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	cfg := plugin.DefaultConfig()
	cfg.CheckOutput = true
	// the memory `host plugin check` and `host run` give an instance by
	// default, not the library's larger default: a Go process plugin once
	// passed here and failed the CLI's check out of memory
	cfg.MemoryLimitPages = settings.Default().MemoryPages
	h, err := plugin.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	for _, path := range paths {
		lang := mods[path]
		rel, _ := filepath.Rel(root, path)
		t.Run(rel, func(t *testing.T) {
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				msg := rel + " is not built: run `make plugins`"
				if lang == "go" || os.Getenv("SLUICE_REQUIRE_LANGS") != "" {
					t.Fatal(msg)
				}
				t.Skip(msg + " (set SLUICE_REQUIRE_LANGS=1 to fail instead)")
			}
			rep := conformancetest.Check(t, path, conformance.Options{Host: h})
			if len(rep) < 8 {
				t.Errorf("only %d checks ran", len(rep))
			}
		})
	}
}
