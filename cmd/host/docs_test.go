package main

// The documents' examples, run: every YAML pipeline is linted, planned and,
// when its sources are bounded, run; every host settings block loads; every
// bin/host command line is a valid invocation, and the cheap ones run;
// every make target exists; the curl walkthrough of docs/server.md runs
// against a real server.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/server"
	"github.com/sluicehq/sluice/host/settings"
	"github.com/sluicehq/sluice/host/web"
)

// blockName is the file a YAML block stands for when its first line is a
// comment naming one ("# job.yaml"): commands of the same page refer to it
// by that name.
func blockName(b mdBlock) string {
	first, _, _ := strings.Cut(b.text, "\n")
	if m := regexp.MustCompile(`^# ([A-Za-z0-9_.-]+\.yaml)$`).FindStringSubmatch(strings.TrimSpace(first)); m != nil {
		return m[1]
	}
	return ""
}

// cli runs the CLI in-process in the working directory.
func cli(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// exampleDir is a fresh folder beside configs/ for the examples, which are
// written as files of configs/ (plugin paths start with ../plugins/).
// It is inside the working directory, as plugin paths must be; .gitignore
// keeps a folder left by a killed run out of git.
func exampleDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(".", ".doctest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestDocsPipelines: every ```yaml block of the documents is a pipeline
// or host settings. A pipeline lints and plans; one whose sources are all
// bounded runs, and one with a collect sink (host serve only) must be a
// named file that a curl line of the walkthrough submits.
func TestDocsPipelines(t *testing.T) {
	atRoot(t)
	dir := exampleDir(t)
	for _, d := range docs(t) {
		for _, b := range d.blocks {
			if b.lang != "yaml" {
				continue
			}
			where := d.where(b.line)
			var top map[string]any
			if err := yaml.Unmarshal([]byte(b.text), &top); err != nil {
				t.Errorf("%s: not YAML: %v", where, err)
				continue
			}
			file := filepath.Join(dir, strings.NewReplacer("/", "-", ".md", "").Replace(d.path)+"-"+fmt.Sprint(b.line)+".yaml")
			if err := os.WriteFile(file, []byte(b.text), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, ok := top["operators"]; !ok {
				if _, _, err := settings.LoadServer(file, nil, nil); err != nil {
					t.Errorf("%s: a YAML block that is not a pipeline must be host settings: %v", where, err)
				}
				continue
			}
			if usesSink(top, "collect") {
				if blockName(b) == "" {
					t.Errorf("%s: a pipeline with a collect sink runs only in host serve: name it (# job.yaml) and submit it in the page's curl walkthrough", where)
				}
				continue
			}
			t.Run(where, func(t *testing.T) {
				for _, cmd := range [][]string{{"lint", file}, {"plan", file}} {
					if code, out, errs := cli("", cmd...); code != 0 {
						t.Fatalf("host %s: exit %d\n%s%s", cmd[0], code, out, errs)
					}
				}
				if bounded(top) {
					if code, _, errs := cli("", "run", "--progress=none", file); code != 0 {
						t.Fatalf("host run: exit %d\n%s", code, errs)
					}
				}
			})
		}
	}
}

// sources returns the source mappings of a pipeline read as plain YAML.
func connectors(top map[string]any, kind string) []map[string]any {
	var out []map[string]any
	ops, _ := top["operators"].([]any)
	for _, op := range ops {
		m, _ := op.(map[string]any)
		if c, ok := m[kind].(map[string]any); ok {
			out = append(out, c)
		}
	}
	return out
}

func usesSink(top map[string]any, typ string) bool {
	for _, c := range connectors(top, "sink") {
		if c["type"] == typ {
			return true
		}
	}
	return false
}

// bounded: every source ends by itself, as its connector's spec says (a
// generator with a count, elements, a file).
func bounded(top map[string]any) bool {
	for _, c := range connectors(top, "source") {
		typ, _ := c["type"].(string)
		opts := map[string]any{}
		for k, v := range c {
			opts[k] = v
		}
		if s := connector.Set().Lookup(spec.Source, typ); s == nil || s.BoundednessOf(opts) != spec.Bounded {
			return false
		}
	}
	return true
}

// shCommand is one command line of a ```sh block.
type shCommand struct {
	doc   *mdDoc
	line  int
	call  *syntax.CallExpr
	dir   string // the folder a cd before it in the block went to
	block int
}

// shCommands parses every ```sh block of d as shell; each top-level
// statement must be a simple command (no pipes, lists or redirections, so
// a reader can copy any one line).
func shCommands(t *testing.T, d *mdDoc) []shCommand {
	t.Helper()
	var out []shCommand
	for bi, b := range d.blocks {
		if b.lang != "sh" {
			continue
		}
		f, err := syntax.NewParser().Parse(strings.NewReader(b.text), d.path)
		if err != nil {
			t.Errorf("%s: not shell: %v", d.where(b.line), err)
			continue
		}
		dir := "."
		for _, st := range f.Stmts {
			line := b.line + int(st.Pos().Line()) - 1
			call, ok := st.Cmd.(*syntax.CallExpr)
			if !ok || len(st.Redirs) > 0 || st.Background || st.Negated {
				t.Errorf("%s: keep each documented command a simple one", d.where(line))
				continue
			}
			if len(call.Args) > 0 && call.Args[0].Lit() == "cd" && len(call.Args) == 2 {
				dir = filepath.Join(dir, call.Args[1].Lit())
				continue
			}
			out = append(out, shCommand{doc: d, line: line, call: call, dir: dir, block: bi})
		}
	}
	return out
}

// shownOnly are commands the documents show but this test does not run,
// each with why.
var shownOnly = map[string]string{
	"go":       "builds a plugin or runs Go's own tests; make and the package tests cover both",
	"curl":     "run by TestDocsServeWalkthrough",
	"npm":      "the AssemblyScript SDK's own tooling, run by make plugins",
	"cargo":    "the Rust SDK's own tooling, run by make plugins",
	"kill":     "signals a running host; cmd/host's signal tests cover it",
	"open":     "opens the dashboard in a browser; host/web's browser test covers it",
	"jq":       "formats an API answer",
	"wat2wasm": "assembles a WAT module, as make plugins-wat does",
}

// staticEnv expands a word for checking: variables the block assigned
// keep their values, others expand to their name, $(...) to a
// placeholder, and globs match in dir.
func staticEnv(vars map[string]string, dir string) *expand.Config {
	return &expand.Config{
		Env: expand.FuncEnviron(func(name string) string {
			if v, ok := vars[name]; ok {
				return v
			}
			if name == "PWD" {
				return dir
			}
			return name
		}),
		CmdSubst: func(w io.Writer, _ *syntax.CmdSubst) error { _, err := io.WriteString(w, "SUBST"); return err },
		ReadDir2: os.ReadDir,
	}
}

// cheap are the bin/host commands run for real: they read files and
// print, in well under a second. The plugin commands run only on Go
// plugins, which make go-plugins builds for every test; the other
// languages' modules need their toolchains.
var cheap = map[string]bool{"host lint": true, "host plan": true, "host plugin inspect": true,
	"host plugin check": true, "host plugin run": true, "host serve token": true}

// onlyGoPlugins reports whether every .wasm argument is a Go example
// plugin's module (plugins/NAME/NAME.wasm beside a main.go).
func onlyGoPlugins(args []string) bool {
	for _, a := range args {
		if !strings.HasSuffix(a, ".wasm") {
			continue
		}
		dir := filepath.Dir(a)
		if filepath.Base(a) != filepath.Base(dir)+".wasm" {
			return false
		}
		if _, err := os.Stat(filepath.Join(dir, "main.go")); err != nil {
			return false
		}
	}
	return true
}

// TestDocsCommands: every bin/host line of a ```sh block names a command
// and flags the CLI has, with as many arguments as it takes, and the
// cheap ones (lint, plan, plugin inspect, serve token) succeed when run;
// every make line names targets of the Makefile; nothing else is shown
// unless shownOnly says why.
func TestDocsCommands(t *testing.T) {
	atRoot(t)
	targets := makeTargets(t)
	tr := tracked(t)
	top := map[string]bool{"bin": true}
	for f := range tr {
		if !strings.Contains(f, "/") {
			top[f] = true
		}
	}
	for _, d := range docs(t) {
		if d.path == "docs/benchmarks.md" {
			continue // the record of what make bench ran, written by make bench
		}
		vars := map[string]string{}
		for _, c := range shCommands(t, d) {
			where := d.where(c.line)
			cfg := staticEnv(vars, c.dir)
			if len(c.call.Args) == 0 {
				for _, a := range c.call.Assigns {
					v, _ := expand.Literal(cfg, a.Value)
					vars[a.Name.Value] = v
				}
				continue
			}
			args, err := expand.Fields(cfg, c.call.Args...)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			for _, a := range args[1:] {
				p := strings.TrimPrefix(a, "@")
				if first, _, ok := strings.Cut(p, "/"); ok && top[first] && !exists(filepath.ToSlash(filepath.Join(c.dir, p)), tr) {
					t.Errorf("%s: %s is not in the repository", where, p)
				}
			}
			switch name := args[0]; {
			case name == "bin/host" || filepath.ToSlash(filepath.Join(c.dir, name)) == "bin/host": // ../bin/host after a cd
				checkHostLine(t, where, c, args[1:])
			case name == "make":
				for _, a := range args[1:] {
					if !strings.Contains(a, "=") && !targets[a] {
						t.Errorf("%s: make has no target %q", where, a)
					}
				}
			case shownOnly[name] != "":
			default:
				t.Errorf("%s: the docs test does not know the command %q: run it here or add it to shownOnly with why", where, name)
			}
		}
	}
}

// checkHostLine resolves args through the CLI's commands and flags, and
// runs the cheap commands.
func checkHostLine(t *testing.T, where string, c shCommand, args []string) {
	t.Helper()
	root := newRootCmd()
	cmd, rest, err := root.Find(args)
	if err != nil {
		t.Errorf("%s: host %s: %v", where, strings.Join(args, " "), err)
		return
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("%s: %s: %v", where, cmd.CommandPath(), err)
		return
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		t.Errorf("%s: %s: %v", where, cmd.CommandPath(), err)
		return
	}
	if cmd.Runnable() == false {
		t.Errorf("%s: %s is not a command that runs", where, cmd.CommandPath())
		return
	}
	if !cheap[cmd.CommandPath()] || !onlyGoPlugins(args) {
		return
	}
	t.Run(where, func(t *testing.T) {
		t.Chdir(c.dir)
		for _, a := range c.call.Assigns {
			v, _ := expand.Literal(staticEnv(nil, c.dir), a.Value)
			t.Setenv(a.Name.Value, v)
		}
		if code, out, errs := cli("", args...); code != 0 {
			t.Fatalf("host %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
	})
}

// makeTargets reads the targets of the Makefile and what it includes.
func makeTargets(t *testing.T) map[string]bool {
	t.Helper()
	targets := map[string]bool{}
	rule := regexp.MustCompile(`(?m)^([A-Za-z0-9_.%/ -]+):(?:[^=]|$)`)
	for _, f := range []string{"Makefile", "plugins.mk"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range rule.FindAllStringSubmatch(string(src), -1) {
			for _, name := range strings.Fields(m[1]) {
				targets[name] = true
			}
		}
	}
	return targets
}

// TestDocsServeWalkthrough runs the curl lines of docs/server.md, in
// order, against a server built from the host config its `bin/host
// serve --config` line names: each must answer 2xx. A variable set from
// $(curl ... | jq -r .field) takes that field of the answer; a job's
// output is read once the job has ended; @file bodies are the page's
// named YAML blocks or files of the repository.
func TestDocsServeWalkthrough(t *testing.T) {
	atRoot(t)
	d := doc(t, "docs/server.md")
	cmds := shCommands(t, d)
	config := ""
	for _, c := range cmds {
		args, _ := expand.Fields(staticEnv(nil, "."), c.call.Args...)
		if len(args) >= 4 && args[0] == "bin/host" && args[1] == "serve" && args[2] == "--config" {
			config = args[3]
		}
	}
	if config == "" {
		t.Fatal("docs/server.md has no `bin/host serve --config FILE` line")
	}
	hs, ss, err := settings.LoadServer(config, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs.CacheDir = t.TempDir()
	ss.DrainTimeout = 0
	srv, err := server.New(server.Config{Host: hs, Server: ss})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(web.New(srv, ss))
	t.Cleanup(func() {
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	files := map[string]string{}
	for _, b := range d.blocks {
		if name := blockName(b); name != "" {
			files[name] = b.text
		}
	}
	w := &walkthrough{t: t, base: "http://" + ss.Listen, url: ts.URL, files: files, vars: map[string]string{}}
	ran := 0
	for _, c := range cmds {
		w.where = d.where(c.line)
		if len(c.call.Args) == 0 {
			for _, a := range c.call.Assigns {
				v, err := expand.Literal(w.env(), a.Value)
				if err != nil {
					t.Fatalf("%s: %v", w.where, err)
				}
				w.vars[a.Name.Value] = v
			}
			continue
		}
		if c.call.Args[0].Lit() != "curl" {
			continue
		}
		args, err := expand.Fields(w.env(), c.call.Args...)
		if err != nil {
			t.Fatalf("%s: %v", w.where, err)
		}
		w.curl(args[1:], io.Discard)
		ran++
	}
	if ran < 3 {
		t.Fatalf("the walkthrough ran %d curl lines: it should upload, submit and read output", ran)
	}
}

// walkthrough holds the shell state of docs/server.md's commands.
type walkthrough struct {
	t           *testing.T
	where       string
	base, url   string // the documented address and the test server's
	files, vars map[string]string
}

func (w *walkthrough) env() *expand.Config {
	return &expand.Config{
		Env: expand.FuncEnviron(func(name string) string { return w.vars[name] }),
		CmdSubst: func(out io.Writer, cs *syntax.CmdSubst) error {
			// curl ... | jq -r .field
			if len(cs.Stmts) != 1 {
				return fmt.Errorf("$(...) holds one curl piped into jq -r .field")
			}
			pipe, ok := cs.Stmts[0].Cmd.(*syntax.BinaryCmd)
			if !ok || pipe.Op != syntax.Pipe {
				return fmt.Errorf("$(...) holds one curl piped into jq -r .field")
			}
			left, _ := pipe.X.Cmd.(*syntax.CallExpr)
			right, _ := pipe.Y.Cmd.(*syntax.CallExpr)
			if left == nil || right == nil {
				return fmt.Errorf("$(...) holds one curl piped into jq -r .field")
			}
			curl, err := expand.Fields(w.env(), left.Args...)
			if err != nil {
				return err
			}
			jq, err := expand.Fields(w.env(), right.Args...)
			if err != nil {
				return err
			}
			if len(jq) != 3 || jq[0] != "jq" || jq[1] != "-r" || !strings.HasPrefix(jq[2], ".") || curl[0] != "curl" {
				return fmt.Errorf("$(...) holds one curl piped into jq -r .field, not %q | %q", curl, jq)
			}
			var body bytes.Buffer
			w.curl(curl[1:], &body)
			var v map[string]any
			if err := json.Unmarshal(body.Bytes(), &v); err != nil {
				return fmt.Errorf("the answer is not a JSON object: %s", body.Bytes())
			}
			_, err = fmt.Fprint(out, v[strings.TrimPrefix(jq[2], ".")])
			return err
		},
	}
}

// curl makes the request curl would for the flags the page uses (-H,
// --data-binary, -X, -s) and requires a 2xx answer.
func (w *walkthrough) curl(args []string, out io.Writer) {
	t := w.t
	t.Helper()
	method, url := "GET", ""
	header := http.Header{}
	var body []byte
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-s":
		case (a == "-H" || a == "-X" || a == "--data-binary") && i+1 < len(args):
			i++
			switch a {
			case "-H":
				k, v, _ := strings.Cut(args[i], ":")
				header.Add(k, strings.TrimSpace(v))
			case "-X":
				method = args[i]
			default:
				body = w.data(args[i])
				if method == "GET" {
					method = "POST"
				}
			}
		case strings.HasPrefix(a, "http://"):
			url = a
		default:
			t.Fatalf("%s: curl %s: the walkthrough knows -H, -X, --data-binary and -s", w.where, a)
		}
	}
	if !strings.HasPrefix(url, w.base) {
		t.Fatalf("%s: curl %s: not the documented server %s", w.where, url, w.base)
	}
	url = w.url + strings.TrimPrefix(url, w.base)
	if method == "GET" && strings.HasSuffix(strings.SplitN(url, "?", 2)[0], "/output") {
		w.waitEnded(strings.TrimSuffix(strings.SplitN(url, "?", 2)[0], "/output"), header)
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: %v", w.where, err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", w.where, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s: %s %s: %s\n%s", w.where, method, url, resp.Status, b)
	}
	if strings.HasSuffix(strings.SplitN(url, "?", 2)[0], "/output") {
		var o server.Output
		if err := json.Unmarshal(b, &o); err != nil || o.Total == 0 || len(o.Records) == 0 {
			t.Fatalf("%s: the job's output holds no record (%v): %s", w.where, err, b)
		}
	}
	_, _ = out.Write(b)
}

// data is a --data-binary argument's bytes: @file reads the page's named
// block or the repository's file.
func (w *walkthrough) data(arg string) []byte {
	name, ok := strings.CutPrefix(arg, "@")
	if !ok {
		return []byte(arg)
	}
	if text, ok := w.files[name]; ok {
		return []byte(text)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		w.t.Fatalf("%s: %v", w.where, err)
	}
	return b
}

// waitEnded polls a job until it is no longer running.
func (w *walkthrough) waitEnded(job string, header http.Header) {
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		req, _ := http.NewRequest("GET", job, nil)
		req.Header = header
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			w.t.Fatalf("%s: %v", w.where, err)
		}
		var st server.JobStatus
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil {
			w.t.Fatalf("%s: GET %s: %v", w.where, job, err)
		}
		if st.State != server.Running {
			if st.State != server.Finished {
				w.t.Fatalf("%s: the job ended %s: %s", w.where, st.State, st.Error)
			}
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("%s: the job still runs after 2 minutes", w.where)
		}
	}
}

// TestDocsListEverySetting: docs/settings.md has a table row for every
// setting of the host and of host serve.
func TestDocsListEverySetting(t *testing.T) {
	atRoot(t)
	rows := firstCells(doc(t, "docs/settings.md"))
	for _, k := range slices.Concat(settings.Keys, settings.ServerKeys) {
		if !rows[k] {
			t.Errorf("docs/settings.md has no row for the setting %s", k)
		}
	}
}

// TestDocsListEveryOperatorKind: docs/pipelines.md's table of kinds has
// a row for every kind the parser knows.
func TestDocsListEveryOperatorKind(t *testing.T) {
	atRoot(t)
	rows := firstCells(doc(t, "docs/pipelines.md"))
	for _, k := range pipeline.Kinds {
		if !rows[string(k)] {
			t.Errorf("docs/pipelines.md has no row for the operator kind %s", k)
		}
	}
}

// TestDocsListEveryRoute: docs/server.md's route table and host/web's
// routes are the same set. The routes are read from web.go's source, where
// routes() registers each with its pattern: the mux does not list them.
func TestDocsListEveryRoute(t *testing.T) {
	atRoot(t)
	src, err := os.ReadFile("host/web/web.go")
	if err != nil {
		t.Fatal(err)
	}
	code := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?:api|Handle|HandleFunc)\("((?:GET|POST|DELETE|PUT) [^"]+)"`).FindAllStringSubmatch(string(src), -1) {
		code[strings.ReplaceAll(m[1], "{$}", "")] = true
	}
	if len(code) < 10 {
		t.Fatalf("found %d routes in host/web/web.go: has routes() changed shape?", len(code))
	}
	documented := map[string]bool{}
	for _, tb := range doc(t, "docs/server.md").tables {
		for _, row := range tb.rows {
			if len(row) > 0 && len(row[0]) > 0 && regexp.MustCompile(`^(GET|POST|DELETE|PUT) /`).MatchString(row[0][0]) {
				documented[row[0][0]] = true
			}
		}
	}
	for _, r := range sortedKeys(code) {
		if !documented[r] {
			t.Errorf("docs/server.md does not list the route %s", r)
		}
	}
	for _, r := range sortedKeys(documented) {
		if !code[r] {
			t.Errorf("docs/server.md lists %s, which host/web does not serve", r)
		}
	}
}

// firstCells is the set of code spans in the first cell of every table
// row of d.
func firstCells(d *mdDoc) map[string]bool {
	rows := map[string]bool{}
	for _, tb := range d.tables {
		for _, row := range tb.rows {
			if len(row) > 0 {
				for _, s := range row[0] {
					rows[s] = true
				}
			}
		}
	}
	return rows
}
