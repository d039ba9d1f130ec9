package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/settings"
)

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestServeToken(t *testing.T) {
	code, out, errs := runHost(t, "serve", "token", "my-token")
	if code != 0 || out != "token:        my-token\ntoken-sha256: "+sha("my-token")+"\n" {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runHost(t, "serve", "token")
	m := regexp.MustCompile(`^token: +(sluice_[0-9a-f]{48})\ntoken-sha256: ([0-9a-f]{64})\n$`).FindStringSubmatch(out)
	if code != 0 || m == nil || m[2] != sha(m[1]) {
		t.Fatalf("a new token: exit %d, %q", code, out)
	}
	var stdout bytes.Buffer
	if c := run(t.Context(), []string{"serve", "token", "--stdin"}, strings.NewReader("from-stdin\n"), &stdout, io.Discard); c != 0 ||
		!strings.Contains(stdout.String(), sha("from-stdin")) {
		t.Fatalf("--stdin: exit %d, %q", c, stdout.String())
	}
}

// TestServeExampleConfig: configs/serve/host.yaml loads, and the tokens its
// comments give hash to the hashes it holds.
func TestServeExampleConfig(t *testing.T) {
	const file = "../../configs/serve/host.yaml"
	_, ss, err := settings.LoadServer(file, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss.Tenants) != 2 || ss.AdminTokenSHA256 == "" {
		t.Fatalf("%d tenants, admin %q", len(ss.Tenants), ss.AdminTokenSHA256)
	}
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	hashes := map[string]string{"admin": ss.AdminTokenSHA256}
	for _, tn := range ss.Tenants {
		hashes[tn.Name] = tn.TokenSHA256
	}
	found := 0
	for _, m := range regexp.MustCompile(`(?m)^#   (?:tenant (\w+)|(admin)) +(example-token-\w+)$`).FindAllStringSubmatch(string(src), -1) {
		who := m[1] + m[2]
		if hashes[who] != sha(m[3]) {
			t.Errorf("the comment gives %s the token %s, whose hash is not the configured one", who, m[3])
		}
		found++
	}
	if found != 3 {
		t.Errorf("found %d example tokens in the comments, want 3", found)
	}
}

// TestServeStopsOnSIGTERM runs the real binary: it serves a tenant's job,
// and on SIGTERM cancels it, closes everything and exits 0.
func TestServeStopsOnSIGTERM(t *testing.T) {
	cmd, lines, base := startServe(t, buildHost(t), "3s", "SLUICE_RATE_LIMIT=50")
	var log strings.Builder
	logged, draining := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(logged)
		for l := range lines {
			if strings.Contains(l, "shutdown: draining jobs") {
				close(draining)
			}
			log.WriteString(l + "\n")
		}
	}()

	req, _ := http.NewRequest("POST", base+"/v1/jobs", strings.NewReader(
		"version: 1\nname: forever\noperators:\n  - id: src\n    source: {type: generator, preset: sequence, rate: 100}\n  - id: out\n    sink: {type: collect}\n"))
	req.Header.Set("Authorization", "Bearer token-a")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var job struct{ ID, State string }
	_ = json.NewDecoder(res.Body).Decode(&job)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || job.State != "RUNNING" {
		t.Fatalf("submit: %d %+v", res.StatusCode, job)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// during the drain (3 s: the job is unbounded): not ready, no new
	// job, but the job's status and output are still served
	<-draining
	get := func(method, path, token string) int {
		req, _ := http.NewRequest(method, base+path, strings.NewReader("version: 1\n"))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("%s %s during the drain: %v", method, path, err)
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}
	for _, c := range []struct {
		method, path, token string
		want                int
	}{
		{"GET", "/readyz", "", http.StatusServiceUnavailable},
		{"GET", "/v1/jobs/" + job.ID, "token-a", http.StatusOK},
		{"GET", "/v1/jobs/" + job.ID + "/output", "token-a", http.StatusOK},
		{"POST", "/v1/jobs", "token-a", http.StatusServiceUnavailable},
	} {
		if got := get(c.method, c.path, c.token); got != c.want {
			t.Errorf("%s %s during the drain: %d, want %d", c.method, c.path, got, c.want)
		}
	}
	<-logged
	err = cmd.Wait()
	if err != nil {
		t.Errorf("exit after SIGTERM: %v, want 0\n%s", err, log.String())
	}
	for _, want := range []string{"shutting down: no new connections", "cancelling job", "job=" + job.ID,
		"state=CANCELED", "stopped: every job ended and every plugin instance is closed"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, log.String())
		}
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the server still answers after exiting")
	}
}

// TestServeSecondSignalQuitsAtOnce: the first SIGTERM starts the drain (a
// long one here: the job is unbounded), and a second ends the process at
// once.
func TestServeSecondSignalQuitsAtOnce(t *testing.T) {
	cmd, lines, base := startServe(t, buildHost(t), "60s")
	req, _ := http.NewRequest("POST", base+"/v1/jobs", strings.NewReader(
		"version: 1\nname: forever\noperators:\n  - id: src\n    source: {type: generator, preset: sequence, rate: 100}\n  - id: out\n    sink: {type: collect}\n"))
	req.Header.Set("Authorization", "Bearer token-a")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("submit: %d", res.StatusCode)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitLine(t, lines, "shutting down: draining jobs, still serving reads (send SIGTERM again to quit at once)")
	go func() {
		for range lines {
		}
	}()
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	select {
	case <-exited:
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			t.Fatalf("ended by %v, want killed by SIGTERM", cmd.ProcessState)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("still draining %v after the second SIGTERM", time.Since(start))
	}
}

// startServe starts bin serving tenant a (token "token-a") on a free port
// with the given drain-timeout and extra environment, and waits for its
// "serving on" line: it returns the process, its further stderr lines
// and the server's base URL. The process is killed when the test ends.
func startServe(t *testing.T, bin, drain string, env ...string) (*exec.Cmd, <-chan string, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "host.yaml")
	writeFile(t, cfg, "listen: 127.0.0.1:0\ndrain-timeout: "+drain+"\ncache-dir: \"\"\ntenants-file: tenants.yaml\n")
	writeFile(t, filepath.Join(dir, "tenants.yaml"), "tenants:\n  - name: a\n    token-sha256: "+sha("token-a")+"\n    slots: 2\n")
	cmd := exec.Command(bin, "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := stderrLines(stderr)
	serving := regexp.MustCompile(`serving on (http://[0-9.:]+) `)
	for l := range lines {
		if m := serving.FindStringSubmatch(l); m != nil {
			return cmd, lines, m[1]
		}
	}
	t.Fatal("no serving line on stderr")
	return nil, nil, ""
}

// TestServeDev: serve --dev makes one tenant and prints its token, which
// submits a job; it refuses to listen beyond loopback, and beside
// configured tenants.
func TestServeDev(t *testing.T) {
	t.Setenv("SLUICE_CACHE_DIR", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"serve", "--dev", "--listen", "127.0.0.1:0", "--drain-timeout", "1s"}, strings.NewReader(""), io.Discard, pw)
		pw.Close()
		done <- code
	}()
	lines := stderrLines(pr)
	var token, base string
	tokenRE, servingRE := regexp.MustCompile(`--dev: one tenant, dev, for this run only; its token: (sluice_[0-9a-f]+)$`), regexp.MustCompile(`serving on (http://[0-9.:]+) .*, 1 tenants$`)
	for l := range lines {
		if m := tokenRE.FindStringSubmatch(l); m != nil {
			token = m[1]
		}
		if m := servingRE.FindStringSubmatch(l); m != nil {
			base = m[1]
			break
		}
	}
	if token == "" || base == "" {
		t.Fatalf("token %q, base %q", token, base)
	}
	go func() {
		for range lines { // drain the log
		}
	}()
	req, _ := http.NewRequest("POST", base+"/v1/jobs", strings.NewReader(
		"version: 1\nname: try\noperators:\n  - id: src\n    source: {type: elements, values: [{n: 1}]}\n  - id: out\n    sink: {type: collect}\n"))
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var job struct{ ID, Tenant string }
	_ = json.NewDecoder(res.Body).Decode(&job)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || job.Tenant != "dev" {
		t.Errorf("submit with the dev token: %d %+v", res.StatusCode, job)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve --dev exit %d after cancel", code)
	}

	for _, c := range []struct{ args, want []string }{
		{[]string{"serve", "--dev", "--listen", "0.0.0.0:8080"}, []string{"--dev listens on loopback only (127.0.0.1, ::1 or localhost), not 0.0.0.0:8080"}},
		{[]string{"serve", "--listen", "127.0.0.1:0"}, []string{"no tenants", "serve --dev makes one tenant"}},
	} {
		code, _, errs := runPluginCLI(t, "", c.args...)
		for _, w := range c.want {
			if code != 1 || !strings.Contains(errs, w) {
				t.Errorf("%v: exit %d: %s", c.args, code, errs)
			}
		}
	}
	cfg := filepath.Join(t.TempDir(), "host.yaml")
	writeFile(t, cfg, "tenants:\n  - name: a\n    token-sha256: "+sha("token-a")+"\n")
	if code, _, errs := runPluginCLI(t, "", "serve", "--dev", "--config", cfg); code != 1 || !strings.Contains(errs, "--dev makes a tenant of its own, and the host config lists 1: drop --dev or the tenants") {
		t.Errorf("--dev with tenants: exit %d: %s", code, errs)
	}
}
