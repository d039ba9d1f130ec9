package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/server"
	"github.com/sluicehq/sluice/host/settings"
	"github.com/sluicehq/sluice/host/web"
)

// TestRemote drives a server through host remote as a user would: submit
// a pipeline with a plugin of its own folder (uploaded under the
// pipeline's name for it), watch it to the end, read its output, list
// jobs, and cancel a running one.
func TestRemote(t *testing.T) {
	hs := settings.Default()
	hs.CacheDir = t.TempDir()
	ss := settings.DefaultServer()
	ss.DrainTimeout = 0
	tc := settings.DefaultTenant()
	tc.Name, tc.TokenSHA256 = "a", server.HashToken("token-a")
	ss.Tenants = []settings.Tenant{tc}
	srv, err := server.New(server.Config{Host: hs, Server: ss})
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(web.New(srv, ss))
	defer func() { api.Close(); _ = srv.Shutdown(t.Context()) }()
	t.Setenv("SLUICE_SERVER", api.URL)
	t.Setenv("SLUICE_TOKEN", "token-a")

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "echo.wasm"), mustRead(t, watFixture(t, "identity")), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "p.yaml")
	writeFile(t, p, "version: 1\nname: three\nplugins:\n  same: { path: echo.wasm }\noperators:\n  - id: src\n    source: { type: elements, values: [{n: 1}, {n: 2}, {n: 3}] }\n  - id: m\n    map: same\n  - id: out\n    sink: { type: collect }\n")
	code, out, errs := runPluginCLI(t, "", "remote", "submit", p)
	id := strings.TrimSpace(out)
	if code != 0 || len(id) != 32 || !strings.Contains(errs, "job "+id+" (three) RUNNING") {
		t.Fatalf("submit: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	code, out, errs = runPluginCLI(t, "", "remote", "watch", id)
	if code != 0 || !strings.HasSuffix(out, id+" FINISHED: 3 read, 3 to sinks\n") {
		t.Errorf("watch: exit %d: %s%s", code, out, errs)
	}
	code, out, errs = runPluginCLI(t, "", "remote", "output", id)
	if code != 0 || out != "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n" || errs != "" {
		t.Errorf("output: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runPluginCLI(t, "", "remote", "output", "--n", "1", id)
	if code != 0 || out != "{\"n\":3}\n" || !strings.Contains(errs, "1 of the 3 records the sinks received") {
		t.Errorf("output --n 1: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, err := srv.Plugin(server.Principal{Tenant: "a"}, "same"); err != nil {
		t.Errorf("the plugin is not stored under the pipeline's name: %v", err)
	}
	code, _, errs = runPluginCLI(t, "", "remote", "cancel", id)
	if code != 1 || !strings.Contains(errs, "409 Conflict (job "+id+"): the job already ended (FINISHED)") {
		t.Errorf("cancel of an ended job: exit %d: %s", code, errs)
	}

	writeFile(t, p, "version: 1\nname: forever\noperators:\n  - id: src\n    source: { type: generator, preset: sequence, rate: 100 }\n  - id: out\n    sink: { type: collect }\n")
	code, out, errs = runPluginCLI(t, "", "remote", "submit", p)
	running := strings.TrimSpace(out)
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errs)
	}
	code, out, _ = runPluginCLI(t, "", "remote", "list")
	if code != 0 || !strings.Contains(out, running+"  forever") || !strings.Contains(out, id+"  three") || !strings.HasPrefix(out, "ID ") {
		t.Errorf("list: exit %d:\n%s", code, out)
	}
	if code, _, errs := runPluginCLI(t, "", "remote", "cancel", running); code != 0 || !strings.Contains(errs, "job "+running+" ") {
		t.Errorf("cancel: exit %d: %s", code, errs)
	}
	if code, out, _ := runPluginCLI(t, "", "remote", "watch", running); code != 1 || !strings.Contains(out, running+" CANCELED") {
		t.Errorf("watch of a cancelled job: exit %d: %s", code, out)
	}
	// a refused pipeline shows every problem at its line
	writeFile(t, p, "version: 1\nname: bad\noperators:\n  - id: src\n    sorce: { type: generator }\n")
	if code, _, errs := runPluginCLI(t, "", "remote", "submit", p); code != 1 || !strings.Contains(errs, `5:5: unknown key "sorce"`) {
		t.Errorf("refused: exit %d: %s", code, errs)
	}
	t.Setenv("SLUICE_TOKEN", "")
	if code, _, errs := runPluginCLI(t, "", "remote", "list"); code != 1 || !strings.Contains(errs, "no token: give --token or SLUICE_TOKEN") {
		t.Errorf("no token: exit %d: %s", code, errs)
	}
}
