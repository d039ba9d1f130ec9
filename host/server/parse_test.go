package server

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParsesAreBounded: pipelines are parsed at most Config.Parses at a
// time over the server and one at a time per tenant, so a tenant's burst
// of large pipelines cannot take the server's memory; a submission
// waiting for its turn gives up when its context ends, with a 503's code.
func TestParsesAreBounded(t *testing.T) {
	cfg := testConfig(t)
	cfg.Parses = 2
	s := newTestServer(t, cfg)
	entered := make(chan string, 10)
	proceed := make(chan struct{})
	s.parsing = func(tenant string) {
		entered <- tenant
		<-proceed
	}
	type result struct {
		who string
		err error
	}
	results := make(chan result, 10)
	submit := func(ctx context.Context, p Principal) {
		go func() {
			_, err := s.Submit(ctx, p, []byte(sumPipeline))
			results <- result{p.Tenant, err}
		}()
	}
	// a's first parse holds a's token and one of the server's two
	submit(t.Context(), tenantA)
	if who := <-entered; who != "a" {
		t.Fatalf("%s entered, want a", who)
	}
	// a's second waits for a's token although the server has room;
	// cancelled while waiting, it gives up without parsing
	ctx, cancel := context.WithCancel(t.Context())
	submit(ctx, tenantA)
	// b takes the server's second token
	submit(t.Context(), tenantB)
	if who := <-entered; who != "b" {
		t.Fatalf("%s entered, want b (a parses one pipeline at a time)", who)
	}
	// the server's two tokens are taken: a third tenant would wait
	select {
	case s.parses <- struct{}{}:
		t.Fatal("a third parse token was free while a and b parsed")
	default:
	}
	cancel()
	r := <-results
	if r.who != "a" || CodeOf(r.err) != Unavailable || !strings.Contains(r.err.Error(), "gave up waiting while the server parsed or compiled one of tenant a's pipelines") {
		t.Fatalf("the cancelled submission of %s: %v, want Unavailable naming tenant a's parse", r.who, r.err)
	}
	select {
	case who := <-entered:
		t.Fatalf("%s parsed a third pipeline while two were held", who)
	default:
	}
	close(proceed)
	for range 2 {
		if r := <-results; r.err != nil {
			t.Errorf("%s: %v", r.who, r.err)
		}
	}
	if len(s.parses) != 0 || len(s.tenants["a"].parse) != 0 || len(s.tenants["b"].parse) != 0 {
		t.Errorf("tokens still held: server %d, a %d, b %d", len(s.parses), len(s.tenants["a"].parse), len(s.tenants["b"].parse))
	}
}

// TestParseWaitIsBounded: a request waiting for a parse token gives up
// after QueueWait with a 503 that says to retry (it waited until the HTTP
// server's write timeout dropped the connection with no reply).
func TestParseWaitIsBounded(t *testing.T) {
	defer func(w time.Duration) { QueueWait = w }(QueueWait)
	QueueWait = 50 * time.Millisecond
	s := newTestServer(t, testConfig(t))
	entered, proceed := make(chan string, 2), make(chan struct{})
	s.parsing = func(tenant string) { entered <- tenant; <-proceed }
	done := make(chan error, 1)
	go func() { _, err := s.Submit(t.Context(), tenantA, []byte(sumPipeline)); done <- err }()
	<-entered
	_, err := s.Submit(t.Context(), tenantA, []byte(sumPipeline))
	var e *Error
	if !errors.As(err, &e) || e.Code != Unavailable || e.Where != Busy || !strings.Contains(e.Msg, "waited 50ms while the server parsed or compiled one of tenant a's pipelines: retry later") {
		t.Fatalf("the waiting submission: %v", err)
	}
	close(proceed)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestUploadStopsASpinningDescribe: an upload's calls run under
// UploadCallTimeout, not the tenant's call-timeout, since an upload holds
// parse tokens other tenants wait for.
func TestUploadStopsASpinningDescribe(t *testing.T) {
	defer func(d time.Duration) { UploadCallTimeout = d }(UploadCallTimeout)
	UploadCallTimeout = 100 * time.Millisecond
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Fatal("wat2wasm not found: install wabt (Debian/Ubuntu: apt-get install -y wabt)")
	}
	out := filepath.Join(t.TempDir(), "spin.wasm")
	if msg, err := exec.Command(tool, "../plugin/testdata/spindescribe.wat", "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, msg)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, fuel := range []int64{0, 1 << 40} { // a call-fuel budget (the clock bounds it not) is set aside too
		cfg := testConfig(t)
		cfg.Host.CallFuel = fuel
		s := newTestServer(t, cfg)
		_, err = s.UploadPlugin(t.Context(), tenantA, "spin", bin)
		if CodeOf(err) != Unprocessable || !strings.Contains(err.Error(), "export sluice_describe: deadline exceeded: the call ran past its call-timeout of 100ms") {
			t.Fatalf("upload with call-fuel %d: %v", fuel, err)
		}
	}
}
