package main

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/internal/wasmbin"
	sdkgo "github.com/sluicehq/sluice/sdk/go"
)

func init() { pluginCommands = append(pluginCommands, newPluginInitCmd) }

// templates holds the plugin projects of host plugin init, one folder per
// language; every file ends in .tmpl (text/template over initData).
//
//go:embed all:templates
var templates embed.FS

// initLangs maps --lang to the template folder and the SDK folder it needs.
var initLangs = map[string]struct{ dir, sdk string }{
	"go":             {"go", "sdk/go"},
	"rust":           {"rust", "sdk/rust"},
	"c":              {"c", "sdk/c"},
	"assemblyscript": {"assemblyscript", "sdk/assemblyscript"},
}

// initData is what the templates see.
type initData struct {
	Name  string // the plugin's name: file names, the Go module, the describe name
	Ident string // Name with - as _ (the Rust crate's library file)
	SDK   string // absolute path of the sluice checkout; "" when Vendored
	// Vendored: made outside a checkout, the project holds a copy of the
	// Go SDK (sdk.Source, abi.Source, and wasmbin.Source for its test kit) in sluice-sdk/.
	Vendored bool
	Version  string // sluice's version (host version)
	Host     string // how the README runs the host: the checkout's bin/host, else host
	Kind     string // --kind: what the operator is
	Does     string // what it does, a phrase (initKinds)
	Keyed    bool   // the kind keeps keyed state (needs a key-by)
}

// initKinds are the kinds --kind scaffolds (in every language), with what
// each does.
var initKinds = map[string]string{
	"filter":      "it keeps the records whose field \"amount\" is greater than zero",
	"map":         "it adds the field \"positive\", whether the record's \"amount\" is greater than zero",
	"flat-map":    "it emits each record as many times as its field \"count\" says (at most 10)",
	"process":     "it sends the records whose \"amount\" is over 1000 to the side output \"large\" and the others on",
	"reduce":      "per key it sums the field \"amount\" into the key's first record and emits the running result",
	"partitioner": "it sends each key to the channel its hash gives, as a key-by would",
}

// vendoredSDK is the folder of a project that holds the Go SDK's copy.
const vendoredSDK = "sluice-sdk"

var pluginNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)

const sluiceModule = "github.com/sluicehq/sluice"

func newPluginInitCmd() *cobra.Command {
	var lang, dir, sdk, kind string
	cmd := &cobra.Command{
		Use:   "init --lang go|rust|c|assemblyscript NAME",
		Short: "Scaffold a plugin project: source, build, a test with sample records, README",
		Long: `Init writes a new plugin project NAME into --dir (default ./NAME): the
source of an operator, a build command, a test, sample records (records.jsonl)
and a README that says what the operator does and how to run it. --kind
chooses the operator, in every language:

  filter       (default) keeps the records whose amount is greater than zero
  map          adds "positive": whether the record's amount is greater than zero
  flat-map     emits each record as many times as its "count" (at most 10)
  process      sends the records whose amount is over 1000 to the side
               output "large", the others on
  reduce       keyed: per key, sums amount into the key's first record and
               emits the running result (plugin run --key accountId)
  partitioner  sends each key to the channel its hash gives, as a key-by
               would; pipeline.yaml runs it behind a partitionCustom

The project builds and passes its own test unchanged:

  go              make (GOOS=wasip1) / make test (go test); go.mod replaces
                  the sluice module with the checkout --sdk names
  rust            make (/usr/bin/cargo --offline) / make test (cargo test)
  c               make (clang --target=wasm32-wasi) / make test (native)
  assemblyscript  once per checkout, npm ci in its sdk/assemblyscript (the
                  compiler the SDK pins; npm ci --offline works from npm's
                  cache); then npm install && npm test (asc, then node)

--sdk is the sluice checkout whose SDK the project uses; by default the one
this command runs from, when it can tell. Outside a checkout (a host
installed on its own), a Go project gets a copy of the Go SDK in sluice-sdk/,
which its go.mod replaces the sluice module with (the module is not on the
module proxy): it builds with no checkout and no network. The other
languages need a checkout (--sdk).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			l, ok := initLangs[lang]
			if !ok {
				return fmt.Errorf("--lang %q: want go, rust, c or assemblyscript", lang)
			}
			if !pluginNameRE.MatchString(name) {
				return fmt.Errorf("plugin name %q: use lower-case letters, digits and -, starting with a letter", name)
			}
			does, ok := initKinds[kind]
			if !ok {
				return fmt.Errorf("--kind %q: want map, filter, flat-map, process, reduce or partitioner", kind)
			}
			data := initData{Name: name, Ident: strings.ReplaceAll(name, "-", "_"), Version: buildVersions().Sluice, Host: "host",
				Kind: kind, Does: does, Keyed: kind == "reduce"}
			root, err := sdkRoot(sdk)
			switch {
			case err != nil && sdk == "" && lang == "go":
				data.Vendored = true // no checkout: the SDK goes into the project
			case err != nil && sdk == "":
				return fmt.Errorf("%v: a %s plugin builds against the SDK of a sluice checkout (only --lang go copies its SDK into the project)", err, lang)
			case err != nil:
				return err
			default:
				if fi, err := os.Stat(filepath.Join(root, l.sdk)); err != nil || !fi.IsDir() {
					return fmt.Errorf("--sdk %s: no %s folder", root, l.sdk)
				}
				data.SDK, data.Host = root, filepath.Join(root, "bin", "host")
			}
			if dir == "" {
				dir = name
			}
			if err := scaffold(dir, l.dir, data); err != nil {
				return err
			}
			from := "sdk " + root
			if data.Vendored {
				if err := writeGoSDK(filepath.Join(dir, vendoredSDK)); err != nil {
					return err
				}
				from = "the Go SDK of sluice " + data.Version + " copied into " + filepath.Join(dir, vendoredSDK) + ": no sluice checkout here, and the module is not on the module proxy"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created %s plugin %q in %s (%s); see %s\n",
				lang, name, dir, from, filepath.Join(dir, "README.md"))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&lang, "lang", "", "the plugin's language: go, rust, c or assemblyscript")
	f.StringVar(&dir, "dir", "", "the project folder to create (default ./NAME)")
	f.StringVar(&kind, "kind", "filter", "the operator the project makes: map, filter, flat-map, process, reduce or partitioner")
	f.StringVar(&sdk, "sdk", "", "the sluice checkout whose SDK to use (default: the one this host runs from)")
	cmd.MarkFlagRequired("lang")
	// init writes files and runs no plugin: the host settings and the
	// plugin limits it inherits mean nothing to it, and listing them read
	// as options of the project
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) { f.Hidden = true })
		c.Parent().HelpFunc()(c, args)
	})
	return cmd
}

// writeGoSDK writes the Go SDK and the abi package it imports (their
// sources, tests left out) into dir as the module github.com/sluicehq/sluice,
// which needs nothing but the standard library.
func writeGoSDK(dir string) error {
	mod := "// The Go SDK of sluice, copied by host plugin init: sdk/go and the abi package it imports.\nmodule " + sluiceModule + "\n\ngo 1.26\n"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		return err
	}
	for _, src := range []struct {
		fsys fs.FS
		dir  string
	}{{abi.Source, "abi"}, {sdkgo.Source, "sdk/go"}, {wasmbin.Source, "internal/wasmbin"}} {
		err := fs.WalkDir(src.fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(p, "_test.go") {
				return err
			}
			b, err := fs.ReadFile(src.fsys, p)
			if err != nil {
				return err
			}
			out := filepath.Join(dir, filepath.FromSlash(src.dir), filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			return os.WriteFile(out, b, 0o644)
		})
		if err != nil {
			return fmt.Errorf("writing the Go SDK into %s: %w", dir, err)
		}
	}
	return nil
}

// sdkRoot returns the sluice checkout: given, or found above the running
// executable or the working folder.
func sdkRoot(given string) (string, error) {
	if given != "" {
		abs, err := filepath.Abs(given)
		if err != nil {
			return "", err
		}
		if !isSluiceRoot(abs) {
			return "", fmt.Errorf("--sdk %s: not a sluice checkout (no go.mod of module %s)", given, sluiceModule)
		}
		return abs, nil
	}
	var starts []string
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, d := range starts {
		for {
			if isSluiceRoot(d) {
				return d, nil
			}
			up := filepath.Dir(d)
			if up == d {
				break
			}
			d = up
		}
	}
	return "", errors.New("cannot tell where the sluice checkout is: pass --sdk PATH")
}

// isSluiceRoot reports whether dir holds the go.mod of the sluice module.
func isSluiceRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module ")) == sluiceModule
		}
	}
	return false
}

// scaffold renders the templates of lang into dir, which must not exist or
// be empty. A file named plugin.* is named after the plugin; a template
// that renders to nothing but space is not written.
func scaffold(dir, lang string, data initData) error {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("%s exists and is not empty", dir)
	}
	base := path.Join("templates", lang)
	return fs.WalkDir(templates, base, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(p, base+"/"), ".tmpl")
		if b := path.Base(rel); strings.HasPrefix(b, "plugin.") {
			rel = path.Join(path.Dir(rel), data.Name+strings.TrimPrefix(b, "plugin"))
		}
		src, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		t, err := template.New(rel).Option("missingkey=error").Parse(string(src))
		if err != nil {
			return fmt.Errorf("template %s: %w", p, err)
		}
		var out bytes.Buffer
		if err := t.Execute(&out, data); err != nil {
			return fmt.Errorf("template %s: %w", p, err)
		}
		if len(bytes.TrimSpace(out.Bytes())) == 0 {
			return nil // a file of other kinds (pipeline.yaml is a partitioner's)
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, out.Bytes(), 0o644)
	})
}
