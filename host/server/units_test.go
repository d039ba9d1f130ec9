package server

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
)

// TestCollectIsInTheServersSet: the collect sink is one connector of the
// server's set, so a tenant's pipeline parses with it however its type is
// written (quoted, in a block, with an escape), the other sinks keep
// theirs, and a problem points at the tenant's own line and column.
func TestCollectIsInTheServersSet(t *testing.T) {
	src := "version: 1\nname: x\noperators:\n  - {id: a, source: {type: generator, preset: sequence}}\n" +
		"  - id: b\n    sink: {type: \"collect\"}\n  - id: c\n    input: a\n    sink:\n      type: collect\n" +
		"  - {id: d, input: a, sink: {type: discard}}\n  - {id: e, input: a, sink: {type: \"c\\x6fllect\"}}\n"
	p, err := pipeline.Parse(PipelineFile, []byte(src), pipeline.ParseOptions{Connectors: Connectors()})
	if err != nil {
		t.Fatal(err)
	}
	for id, typ := range map[string]string{"b": "collect", "c": "collect", "d": "discard", "e": "collect"} {
		if got := p.Operator(id).Sink.Type; got != typ {
			t.Errorf("sink %s: %s, want %s", id, got, typ)
		}
	}
	if n := collects(p); n != 3 {
		t.Errorf("%d collect sinks, want 3", n)
	}
	// a problem after the sink on its line keeps its column, and an
	// option of collect is refused at its key
	bad := "version: 1\nname: x\noperators:\n  - {id: a, source: {type: generator, preset: sequence}}\n" +
		"  - {id: b, sink: {type: collect, limit: 5}, parallelism: zero}\n"
	_, err = pipeline.Parse(PipelineFile, []byte(bad), pipeline.ParseOptions{Connectors: Connectors()})
	var errs pipeline.Errors
	if !errors.As(err, &errs) || len(errs) != 2 {
		t.Fatalf("problems: %v", err)
	}
	if e := errs[0]; e.Pos != (pipeline.Pos{Line: 5, Col: 35}) || !strings.Contains(e.Msg, "sink collect takes no option limit") {
		t.Errorf("first problem %d:%d %s", e.Pos.Line, e.Pos.Col, e.Msg)
	}
	if e := errs[1]; e.Pos != (pipeline.Pos{Line: 5, Col: 59}) || !strings.Contains(e.Msg, "parallelism must be") {
		t.Errorf("second problem %d:%d %s", e.Pos.Line, e.Pos.Col, e.Msg)
	}
	// the host's own lint does not know collect
	if _, err := pipeline.Parse(PipelineFile, []byte(src), pipeline.ParseOptions{}); err == nil || !strings.Contains(err.Error(), `not "collect"`) {
		t.Errorf("parsed without the server's set: %v", err)
	}
}

func TestTailKeepsTheNewestRecords(t *testing.T) {
	tl := newTail(3, 1<<20)
	var batch []byte
	for i := range 5 {
		batch = abi.AppendEnvelope(batch, 0, false, nil, abi.AppendInt(abi.AppendStr(abi.AppendMapHeader(nil, 1), "n"), int64(i)))
	}
	if err := tl.push("out", 1, batch, 5); err != nil {
		t.Fatal(err)
	}
	recs, total := tl.last(0)
	var ns []int
	for _, r := range recs {
		var v struct{ N int }
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatal(err)
		}
		ns = append(ns, v.N)
	}
	if total != 5 || len(ns) != 3 || ns[0] != 2 || ns[2] != 4 || recs[0].Sink != "out" || recs[0].Subtask != 1 {
		t.Errorf("kept %v of %d: %+v", ns, total, recs)
	}
	if recs, _ := tl.last(1); len(recs) != 1 || !strings.Contains(string(recs[0].Value), "4") {
		t.Errorf("last(1) = %+v", recs)
	}
	// by bytes: each value is 4 bytes; 9 bytes hold two
	small := newTail(100, 9)
	_ = small.push("out", 0, batch, 5)
	if recs, total := small.last(0); len(recs) != 2 || total != 5 {
		t.Errorf("byte-bounded tail kept %d of %d", len(recs), total)
	}
	tiny := newTail(10, 3)
	_ = tiny.push("out", 0, batch[:len(batch)/5], 1)
	if recs, _ := tiny.last(0); len(recs) != 1 || !strings.Contains(string(recs[0].Value), "omitted") {
		t.Errorf("a record over the byte limit: %+v", recs)
	}
}

func TestLimiterRefillsAtTheRate(t *testing.T) {
	now := time.Unix(0, 0)
	l := newLimiter(2, 2, func() time.Time { return now })
	for i := range 2 {
		if ok, _ := l.allow("a"); !ok {
			t.Fatalf("request %d of the burst refused", i)
		}
	}
	ok, wait := l.allow("a")
	if ok || wait != 500*time.Millisecond {
		t.Errorf("third: %v, wait %s; want refused, 500ms", ok, wait)
	}
	now = now.Add(500 * time.Millisecond)
	if ok, _ := l.allow("a"); !ok {
		t.Error("refused after refilling one token")
	}
	if ok, _ := l.allow("b"); !ok {
		t.Error("another key shares the bucket")
	}
	// a refused request takes nothing: the next token is still 500ms away
	if ok, wait := l.allow("a"); ok || wait != 500*time.Millisecond {
		t.Errorf("after refilling one: %v, wait %s; want refused, 500ms", ok, wait)
	}
	if ok, wait := l.allow("a"); ok || wait != 500*time.Millisecond {
		t.Errorf("refused again: %v, wait %s; want refused, 500ms (a refusal takes no token)", ok, wait)
	}
	// an idle hour fills the bucket to its burst, not past it
	now = now.Add(time.Hour)
	for i := range 2 {
		if ok, _ := l.allow("a"); !ok {
			t.Fatalf("after an hour, request %d of the burst refused", i)
		}
	}
	if ok, _ := l.allow("a"); ok {
		t.Error("a third request after an idle hour passed a burst of 2")
	}
}

func TestAuthenticate(t *testing.T) {
	s := newTestServer(t, testConfig(t))
	for token, want := range map[string]Principal{tokenA: tenantA, tokenB: tenantB, tokenAdmin: admin} {
		if p, ok := s.Authenticate(token); !ok || p != want {
			t.Errorf("%s: %v %v, want %v", token, p, ok, want)
		}
	}
	for _, bad := range []string{"", "x", tokenA + " ", HashToken(tokenA)} {
		if p, ok := s.Authenticate(bad); ok {
			t.Errorf("%q authenticated as %v", bad, p)
		}
	}
}

func TestNeedCountsPluginInstances(t *testing.T) {
	p, err := pipeline.Parse("x.yaml", []byte(`version: 1
name: x
parallelism: 3
plugins:
  f: { path: f.wasm }
  k: { path: k.wasm }
operators:
  - id: src
    source: { type: generator, preset: sequence }
    parallelism: 2
  - id: f
    filter: f
  - id: agg
    key-by: { plugin: k }
    count: true
  - id: out
    sink: { type: discard }
`), pipeline.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// filter f: 3 instances; key selector k: one per upstream (f) subtask
	if u := need(g, 100); u.instances != 6 || u.pages != 600 || u.slots != 3 {
		t.Errorf("need = %+v, want 6 instances, 600 pages, 3 slots", u)
	}
}

// TestFuelRateIsPerTenant: every plugin host of a tenant's jobs gets the
// tenant's one pacer, so running more jobs does not multiply its CPU cap;
// tenants do not share one, and no rate is no pacer.
func TestFuelRateIsPerTenant(t *testing.T) {
	cfg := testConfig(t)
	cfg.Host.FuelRate = 1e9
	cfg.Server.Tenants[1].FuelRate = 5e8
	s := newTestServer(t, cfg)
	a, b := s.tenants["a"], s.tenants["b"]
	ca1, ca2, cb := s.pluginConfig(a), s.pluginConfig(a), s.pluginConfig(b)
	if ca1.FuelPacer == nil || ca1.FuelPacer != ca2.FuelPacer || cb.FuelPacer == nil || cb.FuelPacer == ca1.FuelPacer {
		t.Errorf("pacers: a %p and %p, b %p: want a's shared by its hosts, b's its own", ca1.FuelPacer, ca2.FuelPacer, cb.FuelPacer)
	}
	if ca1.FuelRate != 1e9 || cb.FuelRate != 5e8 {
		t.Errorf("rates: a %d, b %d", ca1.FuelRate, cb.FuelRate)
	}
	h1, err := s.newPluginHost(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	defer h1.Close(t.Context())
	if h1.Config().FuelPacer != a.pacer {
		t.Error("a job's plugin host does not get the tenant's pacer")
	}
	if s := newTestServer(t, testConfig(t)); s.pluginConfig(s.tenants["a"]).FuelPacer != nil {
		t.Error("no fuel-rate, yet a pacer")
	}
}

// TestCallFuelReachesTenantHosts: the host's call-fuel (a deterministic
// budget instead of call-timeout) is every tenant's plugin config's.
func TestCallFuelReachesTenantHosts(t *testing.T) {
	cfg := testConfig(t)
	cfg.Host.CallFuel = 123456
	s := newTestServer(t, cfg)
	if got := s.pluginConfig(s.tenants["b"]).CallFuel; got != 123456 {
		t.Errorf("CallFuel %d, want 123456", got)
	}
}

// TestTenantHostsTakeTheHostSettings: a tenant's plugin config is the
// host's (settings.PluginConfig) but for what the tenant's own settings
// narrow: the restart policy, output cap and cache reach it.
func TestTenantHostsTakeTheHostSettings(t *testing.T) {
	cfg := testConfig(t)
	cfg.Host.RestartAttempts, cfg.Host.RestartDelay, cfg.Host.RestartWindow = 9, 7*time.Millisecond, 70*time.Second
	cfg.Host.MaxOutputBytes, cfg.Host.CacheDir = 12345, t.TempDir()
	s := newTestServer(t, cfg)
	a := s.tenants["a"]
	want := cfg.Host.PluginConfig()
	want.MemoryLimitPages, want.CallTimeout = a.cfg.InstancePages, a.cfg.CallTimeout
	want.MaxModuleBytes = min(want.MaxModuleBytes, a.cfg.PluginBytes)
	if got := s.pluginConfig(a); !reflect.DeepEqual(got, want) {
		t.Errorf("tenant a's plugin config\n got %+v\nwant %+v", got, want)
	}
}

// BenchmarkLimiterAllow is one request's rate-limit check, a few keys.
func BenchmarkLimiterAllow(b *testing.B) {
	now := time.Unix(0, 0)
	l := newLimiter(1e9, 40, func() time.Time { return now })
	keys := []string{"tenant:a", "tenant:b", "admin"}
	for i := 0; b.Loop(); i++ {
		now = now.Add(time.Microsecond)
		l.allow(keys[i%len(keys)])
	}
}

// TestTenantsAreSuggestedOnlyWhatTheyMayUse: a mistyped connector type
// gets the nearest one a tenant may use, and no suggestion of one the
// server refuses.
func TestTenantsAreSuggestedOnlyWhatTheyMayUse(t *testing.T) {
	for typ, want := range map[string]string{
		"colect": `sink type must be one of collect, discard, not "colect" (did you mean "collect"?)`,
		"prnt":   `sink type must be one of collect, discard, not "prnt"`,
	} {
		src := "version: 1\nname: x\noperators:\n  - {id: a, source: {type: generator, preset: sequence}}\n  - {id: b, sink: {type: " + typ + "}}\n"
		_, err := pipeline.Parse(PipelineFile, []byte(src), pipeline.ParseOptions{Connectors: Connectors()})
		var errs pipeline.Errors
		if !errors.As(err, &errs) {
			t.Fatalf("%s: %v", typ, err)
		}
		if e := lintError(errs); len(e.Problems) != 1 || e.Problems[0].Message != want {
			t.Errorf("%s: %+v\nwant %s", typ, e.Problems, want)
		}
	}
}
