package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/server"
	"github.com/sluicehq/sluice/host/settings"
)

// Tokens of the test principals; the config holds their hashes.
const (
	tokenA     = "test-token-a"
	tokenB     = "test-token-b"
	tokenAdmin = "test-token-admin"
)

// testSettings: tenants a and b (4 slots, 2 running jobs, 3 plugins,
// instances of 256 pages within 1024) and an admin.
func testSettings(t *testing.T) (settings.Settings, settings.Server) {
	hs := settings.Default()
	hs.CacheDir = wasmCache(t)
	ss := settings.DefaultServer()
	ss.AdminTokenSHA256 = server.HashToken(tokenAdmin)
	ss.RateLimit, ss.RateBurst = 1000, 1000
	ss.DrainTimeout = 0 // tests cancel what runs when they end
	for _, tn := range []struct{ name, token string }{{"a", tokenA}, {"b", tokenB}} {
		tc := settings.DefaultTenant()
		tc.Name, tc.TokenSHA256 = tn.name, server.HashToken(tn.token)
		tc.Slots, tc.RunningJobs, tc.Plugins = 4, 2, 3
		tc.InstancePages, tc.MemoryPages, tc.CallTimeout = 256, 1024, 5*time.Second
		ss.Tenants = append(ss.Tenants, tc)
	}
	return hs, ss
}

// testAPI is a server behind a real HTTP listener on 127.0.0.1.
type testAPI struct {
	t    *testing.T
	srv  *server.Server
	http *httptest.Server
}

func startAPI(t *testing.T, hs settings.Settings, ss settings.Server, now func() time.Time) *testAPI {
	t.Helper()
	srv, err := server.New(server.Config{Host: hs, Server: ss, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	a := &testAPI{t: t, srv: srv, http: httptest.NewServer(New(srv, ss))}
	t.Cleanup(a.close)
	return a
}

// close stops accepting, cancels every job and waits until each ended.
func (a *testAPI) close() {
	a.http.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.srv.Shutdown(ctx); err != nil {
		a.t.Error(err)
	}
}

type reply struct {
	code   int
	body   []byte
	header http.Header
}

func (r reply) String() string { return string(r.body) }

// errorJSON decodes an error body; it fails the test when it is not one.
func (r reply) errorJSON(t *testing.T) errorBody {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error == "" || e.Where == "" {
		t.Fatalf("status %d: not a JSON error body with error and where: %s", r.code, r.body)
	}
	return e
}

func (a *testAPI) do(token, method, path string, body []byte) reply {
	a.t.Helper()
	req, err := http.NewRequest(method, a.http.URL+path, bytes.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := a.http.Client().Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return reply{res.StatusCode, b, res.Header}
}

// ok does a request that must answer want, and decodes its JSON into out.
func (a *testAPI) ok(token, method, path string, body []byte, want int, out any) reply {
	a.t.Helper()
	r := a.do(token, method, path, body)
	if r.code != want {
		a.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.code, want, r.body)
	}
	if out != nil {
		if err := json.Unmarshal(r.body, out); err != nil {
			a.t.Fatalf("%s %s: %v: %s", method, path, err, r.body)
		}
	}
	return r
}

func (a *testAPI) submit(token, pipeline string) server.JobStatus {
	a.t.Helper()
	var st server.JobStatus
	a.ok(token, "POST", "/v1/jobs", []byte(pipeline), http.StatusCreated, &st)
	return st
}

// wait blocks until the job ended (the test's deadline bounds it).
func (a *testAPI) wait(id string) server.JobStatus {
	a.t.Helper()
	st, err := a.srv.Wait(server.Principal{Admin: true}, id, a.t.Context().Done())
	if err != nil {
		a.t.Fatal(err)
	}
	return st
}

// waitFor polls every 20ms until cond holds. It gives up (and fails)
// after a minute: a bound for a hung test, not a timing assertion.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	giveUp := time.After(time.Minute)
	for !cond() {
		select {
		case <-giveUp:
			t.Fatalf("gave up waiting a minute for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// settleGoroutines waits until no more goroutines run than base, and
// fails with their stacks if that never happens.
func settleGoroutines(t *testing.T, base int) int {
	t.Helper()
	giveUp := time.After(time.Minute)
	for {
		n := runtime.NumGoroutine()
		if n <= base {
			return n
		}
		select {
		case <-giveUp:
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines still run, %d before the test:\n%s", n, base, buf[:runtime.Stack(buf, true)])
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// tempDirs are removed when every test has run.
var tempDirs []string

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range tempDirs {
		_ = os.RemoveAll(d)
	}
	os.Exit(code)
}

var (
	cacheOnce sync.Once
	cacheDir  string
)

// wasmCache is a compilation cache shared by the tests of this package.
func wasmCache(t *testing.T) string {
	cacheOnce.Do(func() {
		d, err := os.MkdirTemp("", "sluice-web-test-cache-")
		if err != nil {
			t.Fatal(err)
		}
		cacheDir = d
		tempDirs = append(tempDirs, d)
	})
	return cacheDir
}

var (
	validOnce sync.Once
	validBin  []byte
	validErr  error
)

// validWasm returns plugins/valid/valid.wasm, building it as `make
// plugins` does when it is absent.
func validWasm(t *testing.T) []byte {
	t.Helper()
	validOnce.Do(func() {
		root := moduleRoot(t)
		path := filepath.Join(root, "plugins", "valid", "valid.wasm")
		if _, err := os.Stat(path); err != nil {
			dir, derr := os.MkdirTemp("", "sluice-valid-")
			if derr != nil {
				validErr = derr
				return
			}
			tempDirs = append(tempDirs, dir)
			path = filepath.Join(dir, "valid.wasm")
			goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
			cmd := exec.Command(goCmd, "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", path, "./plugins/valid")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
			if out, err := cmd.CombinedOutput(); err != nil {
				validErr = &buildError{err: err, out: string(out)}
				return
			}
		}
		validBin, validErr = os.ReadFile(path)
	})
	if validErr != nil {
		t.Fatalf("plugins/valid/valid.wasm: %v (make plugins builds it)", validErr)
	}
	return validBin
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "building it: " + e.err.Error() + "\n" + e.out }

func moduleRoot(t *testing.T) string {
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s", dir)
	}
	return dir
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

func jsonInto(t *testing.T, r reply, out any) bool {
	t.Helper()
	if err := json.Unmarshal(r.body, out); err != nil {
		t.Errorf("decoding %s: %v", r.body, err)
		return false
	}
	return true
}
