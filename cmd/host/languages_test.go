package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLanguagesPipeline runs configs/languages.yaml through `host run`
// with the Go, C, Rust and AssemblyScript plugins (LANG_SUFFIX "", "-c",
// "-rust", "-as") and requires byte-identical standard output. A missing
// Go module fails (make plugins builds it); a missing module of another
// language is skipped unless SLUICE_REQUIRE_LANGS is set, as in
// plugins/langtest.
func TestLanguagesPipeline(t *testing.T) {
	config := filepath.Join("..", "..", "configs", "languages.yaml")
	suffixes := []string{"", "-c", "-rust", "-as"}
	var want string
	for _, suffix := range suffixes {
		lang := strings.TrimPrefix(suffix, "-")
		if lang == "" {
			lang = "go"
		}
		t.Run(lang, func(t *testing.T) {
			for _, name := range []string{"valid", "double", "enrich", "country"} {
				path := filepath.Join("..", "..", "plugins", name, name+suffix+".wasm")
				if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
					msg := path + " is not built: run `make plugins`"
					if lang == "go" || os.Getenv("SLUICE_REQUIRE_LANGS") != "" {
						t.Fatal(msg)
					}
					t.Skip(msg + " (set SLUICE_REQUIRE_LANGS=1 to fail instead)")
				}
			}
			t.Setenv("LANG_SUFFIX", suffix)
			code, out, errs := runPluginCLI(t, "", "run", "--plugin-root", filepath.Join("..", ".."), config)
			if code != 0 {
				t.Fatalf("host run: exit %d\n%s", code, errs)
			}
			if n := strings.Count(out, "\n"); n < 100 || !strings.HasPrefix(out, "lang> {") {
				t.Fatalf("%d lines, want at least 100 records:\n%.500s", n, out)
			}
			if lang == "go" {
				want = out
				return
			}
			if want == "" {
				t.Fatal("no Go output to compare with")
			}
			if out != want {
				t.Errorf("output differs from the Go plugins' (%d bytes, Go %d):\n%s", len(out), len(want), firstDiff(want, out))
			}
		})
	}
}

// firstDiff shows the first line where a and b differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "line " + itoa(i+1) + ":\n  go:   " + al[i] + "\n  this: " + bl[i]
		}
	}
	return "one is a prefix of the other"
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		if i /= 10; i == 0 {
			return string(b[n:])
		}
	}
}
