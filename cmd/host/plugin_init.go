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
	SDK   string // absolute path of the sluice checkout
}

var pluginNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)

const sluiceModule = "github.com/sluicehq/sluice"

func newPluginInitCmd() *cobra.Command {
	var lang, dir, sdk string
	cmd := &cobra.Command{
		Use:   "init --lang go|rust|c|assemblyscript NAME",
		Short: "Scaffold a plugin project: source, build, a test with sample records, README",
		Long: `Init writes a new plugin project NAME into --dir (default ./NAME): the
source of a filter (it keeps the records whose amount is greater than zero),
a build command, a test with sample records and a README. It builds and
passes its own test unchanged:

  go              make (GOOS=wasip1) / make test (go test); go.mod replaces
                  the sluice module with the checkout --sdk names
  rust            make (/usr/bin/cargo --offline) / make test (cargo test)
  c               make (clang --target=wasm32-wasi) / make test (native)
  assemblyscript  once per checkout, npm ci in its sdk/assemblyscript (the
                  compiler the SDK pins; npm ci --offline works from npm's
                  cache); then npm install && npm test (asc, then node)

--sdk is the sluice checkout whose SDK the project uses; by default the one
this command runs from, when it can tell.`,
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
			root, err := sdkRoot(sdk)
			if err != nil {
				return err
			}
			if fi, err := os.Stat(filepath.Join(root, l.sdk)); err != nil || !fi.IsDir() {
				return fmt.Errorf("--sdk %s: no %s folder", root, l.sdk)
			}
			if dir == "" {
				dir = name
			}
			if err := scaffold(dir, l.dir, initData{Name: name, Ident: strings.ReplaceAll(name, "-", "_"), SDK: root}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created %s plugin %q in %s (sdk %s); see %s\n",
				lang, name, dir, root, filepath.Join(dir, "README.md"))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&lang, "lang", "", "the plugin's language: go, rust, c or assemblyscript")
	f.StringVar(&dir, "dir", "", "the project folder to create (default ./NAME)")
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
// be empty. A file named plugin.* is named after the plugin.
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
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, out.Bytes(), 0o644)
	})
}
