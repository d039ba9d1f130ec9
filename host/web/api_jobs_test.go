package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/codec"
	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/server"
)

// generatorSpec is the source of the bounded jobs below.
const generatorSpec = `{ type: generator, preset: transactions, count: 4000, seed: 7, accounts: 20 }`

// expectedSums runs the same generator in the test, alone, and sums the
// amounts per account of the records keep accepts.
func expectedSums(t *testing.T, keep func(amount int64) bool) map[string]int64 {
	t.Helper()
	p, err := pipeline.Parse("gen.yaml", []byte("version: 1\nname: gen\noperators:\n  - id: g\n    source: "+generatorSpec+"\n  - id: out\n    sink: {type: discard}\n"), pipeline.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := (&connector.Builtin{}).Source(p.Operators[0], 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	c := collectorFunc(func(_ int, buf []byte, count int) error {
		rd := abi.NewReader(buf, count)
		for rd.Next() {
			js, err := codec.MsgpackToJSON(nil, rd.Record().Value)
			if err != nil {
				return err
			}
			var v struct {
				AccountID string `json:"accountId"`
				Amount    int64  `json:"amount"`
			}
			if err := json.Unmarshal(js, &v); err != nil {
				return err
			}
			if keep(v.Amount) {
				sums[v.AccountID] += v.Amount
			}
		}
		return rd.Err()
	})
	if err := src.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return sums
}

type collectorFunc func(port int, buf []byte, count int) error

func (f collectorFunc) Emit(port int, buf []byte, count int) error { return f(port, buf, count) }

// outputSums reads a finished job's output: one record per account.
func outputSums(t *testing.T, a *testAPI, token, id string) map[string]int64 {
	t.Helper()
	var out server.Output
	a.ok(token, "GET", "/v1/jobs/"+id+"/output", nil, 200, &out)
	got := map[string]int64{}
	for _, r := range out.Records {
		var v struct {
			AccountID string `json:"accountId"`
			Amount    int64  `json:"amount"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatal(err)
		}
		if _, dup := got[v.AccountID]; dup {
			t.Errorf("account %s twice in a batch job's output", v.AccountID)
		}
		got[v.AccountID] = v.Amount
	}
	if int(out.Total) != len(out.Records) {
		t.Errorf("output total %d, records kept %d", out.Total, len(out.Records))
	}
	return got
}

func sameSums(t *testing.T, got, want map[string]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d accounts, want %d", len(got), len(want))
	}
	var bad []string
	for k, w := range want {
		if got[k] != w {
			bad = append(bad, fmt.Sprintf("%s: %d, want %d", k, got[k], w))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("wrong sums:\n%s", strings.Join(bad, "\n"))
	}
}

func operator(t *testing.T, m server.JobMetrics, id string) server.OperatorMetrics {
	t.Helper()
	for _, op := range m.Operators {
		if op.ID == id {
			return op
		}
	}
	t.Fatalf("no operator %s in the metrics", id)
	return server.OperatorMetrics{}
}

func TestBuiltinJobRunsToCompletion(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	st := a.submit(tokenA, `version: 1
name: totals
mode: batch
parallelism: 2
operators:
  - id: txns
    source: `+generatorSpec+`
  - id: totals
    key-by: accountId
    sum: amount
  - id: out
    sink: { type: collect }
`)
	if st.State != server.Running || st.Tenant != "a" || st.Slots != 2 || len(st.ID) != 32 {
		t.Fatalf("submitted: %+v", st)
	}
	end := a.wait(st.ID)
	if end.State != server.Finished || end.RecordsDone != 4000 {
		t.Fatalf("ended %s with %d records: %s", end.State, end.RecordsDone, end.Error)
	}
	sameSums(t, outputSums(t, a, tokenA, st.ID), expectedSums(t, func(int64) bool { return true }))

	var m server.JobMetrics
	a.ok(tokenA, "GET", "/v1/jobs/"+st.ID+"/metrics", nil, 200, &m)
	if m.State != server.Finished || m.RateWindow != "run" || len(m.Tasks) != 2 {
		t.Fatalf("metrics: state %s, window %s, %d tasks", m.State, m.RateWindow, len(m.Tasks))
	}
	if op := operator(t, m, "txns"); op.RecordsOut != 4000 || len(op.Subtasks) != 2 {
		t.Errorf("txns: %d records out over %d subtasks, want 4000 over 2", op.RecordsOut, len(op.Subtasks))
	}
	totals := operator(t, m, "totals")
	if totals.RecordsIn != 4000 || totals.RecordsOut != 20 {
		t.Errorf("totals: %d in, %d out; want 4000 in, 20 out (one final sum per account)", totals.RecordsIn, totals.RecordsOut)
	}
	var perSubtask int64
	for _, s := range totals.Subtasks {
		perSubtask += s.RecordsIn
	}
	if perSubtask != 4000 || m.Tasks[1].Skew < 1 {
		t.Errorf("totals subtasks sum to %d; task skew %.2f", perSubtask, m.Tasks[1].Skew)
	}
	var plan struct {
		Tasks []struct{ Operators []string }
		Edges []struct {
			From, To     string
			ShipStrategy string `json:"ship_strategy"`
		}
	}
	a.ok(tokenA, "GET", "/v1/jobs/"+st.ID+"/plan", nil, 200, &plan)
	if len(plan.Tasks) != 2 || plan.Edges[0].ShipStrategy != "HASH" {
		t.Errorf("plan: %+v", plan)
	}
	var exc server.Exceptions
	a.ok(tokenA, "GET", "/v1/jobs/"+st.ID+"/exceptions", nil, 200, &exc)
	if len(exc.Exceptions) != 0 {
		t.Errorf("exceptions of a clean job: %+v", exc.Exceptions)
	}
	if r := a.do(tokenA, "POST", "/v1/jobs/"+st.ID+"/cancel", nil); r.code != http.StatusConflict {
		t.Errorf("cancelling a finished job: %d, want 409", r.code)
	}
}

func TestPluginJobRunsToCompletion(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	bin := validWasm(t)
	var info server.PluginInfo
	a.ok(tokenA, "POST", "/v1/plugins?name=valid", bin, http.StatusCreated, &info)
	if !strings.HasPrefix(info.Digest, "sha256:") || info.Size != len(bin) || info.ABIVersion != 1 {
		t.Fatalf("upload: %+v", info)
	}
	// the same bytes again: stored once
	var again server.PluginInfo
	a.ok(tokenA, "POST", "/v1/plugins?name=valid", bin, http.StatusOK, &again)
	if again.Digest != info.Digest || again.Created {
		t.Errorf("second upload: %+v", again)
	}
	st := a.submit(tokenA, `version: 1
name: valid-totals
mode: batch
parallelism: 2
plugins:
  valid: { path: "`+info.Digest+`" }
operators:
  - id: txns
    source: `+generatorSpec+`
  - id: valid
    filter: valid
  - id: totals
    key-by: accountId
    sum: amount
  - id: out
    sink: { type: collect }
`)
	if st.Instances != 2 || st.MemoryPages != 512 || st.Plugins["valid"] != info.Digest {
		t.Errorf("submitted: %+v", st)
	}
	end := a.wait(st.ID)
	if end.State != server.Finished {
		t.Fatalf("ended %s: %s", end.State, end.Error)
	}
	positive := func(amount int64) bool { return amount > 0 }
	want := expectedSums(t, positive)
	sameSums(t, outputSums(t, a, tokenA, st.ID), want)

	var m server.JobMetrics
	a.ok(tokenA, "GET", "/v1/jobs/"+st.ID+"/metrics", nil, 200, &m)
	valid := operator(t, m, "valid")
	if valid.RecordsIn != 4000 || operator(t, m, "totals").RecordsIn != valid.RecordsOut {
		t.Errorf("valid: %d in, %d out; totals %d in", valid.RecordsIn, valid.RecordsOut, operator(t, m, "totals").RecordsIn)
	}
	if len(m.Plugins) != 2 {
		t.Fatalf("plugin instances in the metrics: %d, want 2", len(m.Plugins))
	}
	for _, pc := range m.Plugins {
		if pc.Operator != "valid" || pc.Plugin != "valid" || pc.Calls["open"] != 1 || pc.Calls["process"] < 1 ||
			len(pc.Errors) != 0 || pc.Count != pc.Calls["open"]+pc.Calls["process"]+pc.Calls["close"] {
			t.Errorf("plugin calls: %+v", pc)
		}
	}
}

func TestPluginUploadRefusedByTheABIChecks(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	for name, bin := range map[string][]byte{
		"not-wasm":   []byte("#!/bin/sh\necho hello\n"),
		"no-exports": {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00},
	} {
		r := a.do(tokenA, "POST", "/v1/plugins?name="+name, bin)
		if r.code != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d, want 422: %s", name, r.code, r)
			continue
		}
		e := r.errorJSON(t)
		if e.Where != "plugin "+name || len(e.Reasons) == 0 {
			t.Errorf("%s: %+v", name, e)
		}
	}
	var list []server.PluginInfo
	a.ok(tokenA, "GET", "/v1/plugins", nil, 200, &list)
	if len(list) != 0 {
		t.Errorf("refused plugins were stored: %+v", list)
	}
	if r := a.do(tokenA, "POST", "/v1/plugins?name=../x", []byte{0}); r.code != http.StatusBadRequest {
		t.Errorf("bad name: %d", r.code)
	}
	if r := a.do(tokenAdmin, "POST", "/v1/plugins?name=x", validWasm(t)); r.code != http.StatusForbidden {
		t.Errorf("upload as the admin: %d, want 403", r.code)
	}
}

// TestSameBytesUnderAnotherNameIsAConflict: uploading stored bytes under a
// second name is refused with the name they have (it renamed them, and
// every pipeline naming the first name broke); under the same name it is
// a no-op.
func TestSameBytesUnderAnotherNameIsAConflict(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	bin := validWasm(t)
	a.ok(tokenA, "POST", "/v1/plugins?name=first", bin, http.StatusCreated, nil)
	r := a.do(tokenA, "POST", "/v1/plugins?name=second", bin)
	if r.code != http.StatusConflict || !strings.Contains(r.errorJSON(t).Error, `these bytes are stored already as "first"`) {
		t.Fatalf("%d: %s", r.code, r)
	}
	a.ok(tokenA, "POST", "/v1/plugins?name=first", bin, http.StatusOK, nil)
	j := a.submit(tokenA, liveJob("first", 1)) // the first name still resolves
	a.ok(tokenA, "POST", "/v1/jobs/"+j.ID+"/cancel", nil, 200, nil)
	a.wait(j.ID)
}

// A plugin used as what it is not (a filter behind map:) is a 422 whose
// problems name the line and column of the use, as lint's do.
func TestSubmitRefusesAPluginUsedAsAnotherKind(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	a.ok(tokenA, "POST", "/v1/plugins?name=v", validWasm(t), http.StatusCreated, nil)
	job := "version: 1\nname: kinds\nplugins: { v: { path: v } }\noperators:\n" +
		"  - { id: s, source: { type: generator, preset: transactions, count: 10 } }\n" +
		"  - id: m\n    map: v\n" +
		"  - { id: o, sink: { type: collect } }\n"
	r := a.do(tokenA, "POST", "/v1/jobs", []byte(job))
	if r.code != http.StatusUnprocessableEntity {
		t.Fatalf("%d, want 422: %s", r.code, r)
	}
	var e struct {
		Error    string           `json:"error"`
		Where    string           `json:"where"`
		Problems []server.Problem `json:"problems"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Problems) != 1 || e.Problems[0].Line != 7 || e.Problems[0].Col != 5 || e.Where != server.PipelineFile {
		t.Fatalf("refusal: %s", r.body)
	}
	mustContain(t, "refusal", e.Problems[0].Message, `operator "m" uses plugin "v" as a map, but the plugin is a filter`, "write filter: v")
	mustContain(t, "refusal", e.Error, "7:5: operator \"m\"")
}

// TestOutputSaysWhenItIsCut: an answer holding fewer records than the
// collect sinks received says so, with how many it holds.
func TestOutputSaysWhenItIsCut(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	job := a.submit(tokenA, "version: 1\nname: five\noperators:\n  - id: src\n    source: { type: elements, values: [{n: 1}, {n: 2}, {n: 3}, {n: 4}, {n: 5}] }\n  - id: out\n    sink: { type: collect }\n")
	if end := a.wait(job.ID); end.State != server.Finished || end.RecordsDone != 5 || end.RecordsSunk != 5 {
		t.Fatalf("job: %+v", end)
	}
	for _, c := range []struct {
		query     string
		returned  int
		truncated bool
	}{{"", 5, false}, {"?n=2", 2, true}, {"?n=5", 5, false}, {"?n=9", 5, false}} {
		var out server.Output
		r := a.ok(tokenA, "GET", "/v1/jobs/"+job.ID+"/output"+c.query, nil, 200, &out)
		if out.Total != 5 || out.Returned != c.returned || len(out.Records) != c.returned || out.Truncated != c.truncated {
			t.Errorf("output%s: %s", c.query, r)
		}
	}
}
