package web

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/host/server"
)

// chromiumPath is Debian's chromium (packages chromium and
// chromium-driver; scripts/tools-browser.sh installs them).
const chromiumPath = "/usr/bin/chromium"

// TestDashboardInChromium opens the dashboard of a running job in headless
// Chromium: it signs in with a token, opens the job from the list, finds
// the job graph with its edge labels, the subtask table, the skew charts
// and the hot keys, sees the figures move, and saves a screenshot.
func TestDashboardInChromium(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	a.ok(tokenA, "POST", "/v1/plugins?name=valid", validWasm(t), 201, nil)
	job := a.submit(tokenA, `version: 1
name: dashboard-demo
parallelism: 2
plugins:
  valid: { path: valid }
operators:
  - id: txns
    source: { type: generator, preset: transactions, rate: 3000, skew: 0.8, hot-key: acct-corp }
  - id: valid
    filter: valid
  - id: totals
    key-by: accountId
    sum: amount
  - id: out
    sink: { type: collect }
`)
	waitFor(t, "the hot key to show in the metrics", func() bool {
		var m server.JobMetrics
		a.ok(tokenA, "GET", "/v1/jobs/"+job.ID+"/metrics", nil, 200, &m)
		return len(m.HotKeys) > 0
	})

	ctx := chromium(t)

	// records in of the first subtask of totals, as the table shows it
	inOf := `(() => { const r = [...document.querySelectorAll('#subtasks tbody tr')].find(r => r.cells[0].textContent === 'totals');
	  return r ? parseInt(r.cells[3].textContent.replace(/[^0-9]/g, ''), 10) || 0 : 0; })()`
	err := openJob(ctx, a, tokenA, job.ID)
	if err == nil {
		err = chromedp.Do(ctx,
			chromedp.WaitVisible(chromedp.CSS(`#graph text.edge-label`)),
			chromedp.WaitVisible(chromedp.CSS(`#subtasks tbody tr`)),
		)
	}
	if err != nil {
		t.Fatalf("in the dashboard: %v; the page: %s", err, pageState(ctx))
	}
	// the page polls the API every second: wait for the hot key and for
	// records in the table
	ready := `document.querySelectorAll('#hotkeys tbody tr').length > 0 && ` + inOf + ` > 0`
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](ready, chromedp.WithPollingTimeout(time.Minute))); err != nil {
		t.Fatalf("waiting for hot keys and records in the dashboard: %v; the page: %s", err, pageState(ctx))
	}
	eval := func(expr string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return n
	}
	stored, err := chromedp.Run(ctx, chromedp.Evaluate[string](`sessionStorage.getItem('sluice.token')`))
	if err != nil {
		t.Fatal(err)
	}
	labels, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#graph text.edge-label')].map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	tasks := eval(`document.querySelectorAll('#graph g.task').length`)
	rows := eval(`document.querySelectorAll('#subtasks tbody tr').length`)
	charts := eval(`document.querySelectorAll('#skew svg.skew-chart').length`)
	hotRows := eval(`document.querySelectorAll('#hotkeys tbody tr').length`)
	hotRow, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#hotkeys tbody tr:first-child td')].map(td => td.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	before := eval(inOf)
	// and it keeps moving while the job runs
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](inOf+` > `+strconv.Itoa(before), chromedp.WithPollingTimeout(time.Minute))); err != nil {
		t.Errorf("the subtask table did not move past %d records in: %v", before, err)
	}
	if stored != tokenA {
		t.Errorf("sessionStorage holds %q, want the token", stored)
	}
	if !slices.Contains(labels, "HASH") {
		t.Errorf("edge labels %q, want HASH", labels)
	}
	// the key as a user writes it, not as JSON text inside quotes
	if len(hotRow) != 5 || hotRow[0] != "valid → totals (HASH)" || hotRow[1] != "acct-corp" || !strings.HasPrefix(hotRow[4], "salt the key") {
		t.Errorf("hot key row %q, want the edge with its strategy, acct-corp unquoted, and the advice", hotRow)
	}
	if tasks != 2 || rows != 4*2 || charts != 2 || hotRows < 1 {
		t.Errorf("%d task boxes, %d subtask rows, %d skew charts, %d hot keys; want 2, 8, 2, at least 1", tasks, rows, charts, hotRows)
	}
	// the vertices carry their records in and out, each has a throughput
	// chart whose lines fill as samples come, and an empty section says so
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](`document.querySelectorAll('#throughput svg.throughput-chart polyline.in').length === 2 && `+
		`[...document.querySelectorAll('#throughput polyline.in')].every(p => p.points.length >= 2)`, chromedp.WithPollingTimeout(time.Minute))); err != nil {
		t.Errorf("no throughput chart with two samples per task: %v", err)
	}
	// the keyed operator's subtasks show their state, the source's none
	state, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#subtasks tbody tr')].filter(r => ['totals', 'txns'].includes(r.cells[0].textContent)).map(r => r.cells[0].textContent + '=' + r.cells[7].textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range state {
		op, v, _ := strings.Cut(c, "=")
		if (op == "totals") != strings.HasSuffix(v, " keys") {
			t.Errorf("keyed state column %q: want bytes and keys for totals only", c)
		}
	}
	vertex, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#graph g.task text.records')].map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(vertex) != 2 || !strings.HasPrefix(vertex[0], "records in 0 · out ") || vertex[0] == "records in 0 · out 0" || strings.HasPrefix(vertex[1], "records in 0 ") {
		t.Errorf("vertex records %q: want the source task with records out and the keyed task with records in", vertex)
	}
	empty, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#exceptions tbody').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if empty != "none" {
		t.Errorf("the exceptions of a healthy job read %q, want none", empty)
	}
	if msg, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('job-error').textContent`)); err != nil || msg != "" {
		t.Errorf("the page shows an error for a healthy job: %q (%v)", msg, err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "sluice-dashboard-")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "dashboard.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the dashboard of job %s: %s (%d bytes); edge labels %q, %d subtask rows, %d hot keys, totals records in %d",
		job.ID, path, len(png), labels, rows, hotRows, before)
}

// chromium starts headless Chromium for the test; its tab's context
// ends with the test, or after two minutes.
func chromium(t *testing.T) context.Context {
	t.Helper()
	if _, err := exec.LookPath(chromiumPath); err != nil {
		t.Fatalf("%s is missing: install Debian's chromium and chromium-driver (scripts/tools-browser.sh, or apt-get install chromium chromium-driver): %v", chromiumPath, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelTab)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// openJob signs in with token and opens the job from the list.
func openJob(ctx context.Context, a *testAPI, token, id string) error {
	link := chromedp.CSS(`#jobs tbody a[href="#/jobs/` + id + `"]`)
	return chromedp.Do(ctx,
		chromedp.Navigate(a.http.URL+"/ui/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.CSS(`#login-form button[type=submit]`)),
		chromedp.WaitVisible(link),
		chromedp.Click(link),
	)
}

// TestDashboardShowsCheckpoints: a checkpointed job's page shows its
// completed checkpoints in the counts and the history, and its "Stop with
// savepoint" button ends the job FINISHED with the savepoint in the
// history.
func TestDashboardShowsCheckpoints(t *testing.T) {
	ctx := chromium(t)
	a, _ := startCkptAPI(t)
	job := a.submit(tokenA, ckptJob)
	if err := openJob(ctx, a, tokenA, job.ID); err != nil {
		t.Fatalf("in the dashboard: %v; the page: %s", err, pageState(ctx))
	}
	completed := `[...document.querySelectorAll('#checkpoints tbody tr')].some(r => r.cells.length === 9 && r.cells[1].textContent === 'checkpoint' && r.cells[2].textContent === 'COMPLETED') && ` +
		`/completed [1-9]/.test(document.getElementById('checkpoint-counts').textContent) && document.getElementById('checkpoint-latest').textContent.startsWith('latest completed: checkpoint')`
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](completed, chromedp.WithPollingTimeout(time.Minute))); err != nil {
		t.Fatalf("no completed checkpoint in the dashboard: %v; the page: %s", err, pageState(ctx))
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("stop-savepoint")), chromedp.Click(chromedp.ID("stop-savepoint"))); err != nil {
		t.Fatalf("stop with savepoint: %v; the page: %s", err, pageState(ctx))
	}
	if end := a.wait(job.ID); end.State != server.Finished {
		t.Fatalf("after the dashboard's stop-with-savepoint: %s %q", end.State, end.Error)
	}
	stopped := `document.querySelector('#job-summary .state').textContent === 'FINISHED' && ` +
		`[...document.querySelectorAll('#checkpoints tbody tr')].some(r => r.cells[1].textContent === 'savepoint' && r.cells[2].textContent === 'COMPLETED' && r.cells[8].textContent.includes('/a/savepoints/')) && ` +
		`document.getElementById('savepoint-buttons').hidden`
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](stopped, chromedp.WithPollingTimeout(time.Minute))); err != nil {
		t.Fatalf("the dashboard does not show the job FINISHED with its savepoint: %v; the page: %s", err, pageState(ctx))
	}
}

// pageState describes the page for a failure message: its address, what
// it says and the screenshot's path.
func pageState(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText.slice(0, 2000)`))
	if err != nil {
		return "unreadable: " + err.Error()
	}
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		if f, err := os.CreateTemp("", "sluice-dashboard-failure-*.png"); err == nil {
			_, _ = f.Write(png)
			_ = f.Close()
			text += "\n(screenshot " + f.Name() + ")"
		}
	}
	return text
}
