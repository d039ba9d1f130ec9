package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/server"
)

func TestBadPipelineAnswers400WithLineAndColumn(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	cases := []struct {
		name, yaml string
		want       []server.Problem // Message: a part of it
	}{
		{"syntax", "version: 1\nname: x\noperators:\n  - id: a\n    source: {type: generator, preset: sequence\n",
			[]server.Problem{{Line: 5, Col: 1, Message: "did not find expected ',' or '}'"}}},
		{"unknown key", "version: 1\nname: x\noperators:\n  - id: a\n    sorce: {type: generator, preset: sequence}\n  - id: b\n    sink: {type: collect}\n",
			[]server.Problem{{Line: 4, Col: 5, Message: "operator 'a' has no kind"}, {Line: 5, Col: 5, Message: `unknown key "sorce"`}}},
		{"host connectors", "version: 1\nname: x\noperators:\n  - id: a\n    source: {type: file, path: /etc/passwd}\n  - id: b\n    sink: {type: print}\n",
			[]server.Problem{
				{Line: 5, Col: 13, Message: "source type file is not offered by this server"},
				{Line: 7, Col: 11, Message: "sink type print is not offered by this server"}}},
		{"unknown sink type lists what tenants may use", "version: 1\nname: x\noperators:\n  - id: a\n    source: {type: generator, preset: sequence}\n  - id: b\n    sink: {type: s3}\n",
			[]server.Problem{{Line: 7, Col: 18, Message: `sink type must be one of collect, discard, not "s3"`}}},
		// kafka is a connector of the host, which reaches the network:
		// refused to tenants in the server's words
		{"kafka is not offered", "version: 1\nname: x\noperators:\n  - id: a\n    source: {type: kafka, brokers: 'h:9092', topics: [t]}\n  - id: b\n    sink: {type: kafka, brokers: 'h:9092', topic: u}\n",
			[]server.Problem{{Line: 5, Col: 13, Message: "operator a: source type kafka is not offered by this server (it reaches the host's files, streams or network)"},
				{Line: 7, Col: 11, Message: "operator b: sink type kafka is not offered by this server (it reaches the host's files, streams or network)"}}},
		// the collect sink's type is rewritten for the linter: a problem
		// after it on the same line keeps its column
		{"collect keeps columns", "version: 1\nname: x\noperators:\n  - {id: a, source: {type: generator, preset: sequence}}\n  - {id: é, sink: {type: collect}, parallelism: zero}\n",
			[]server.Problem{{Line: 5, Col: 10, Message: `invalid operator id "é"`}, {Line: 5, Col: 49, Message: "parallelism must be"}}},
		{"collect takes no option", "version: 1\nname: x\noperators:\n  - id: a\n    source: {type: generator, preset: sequence}\n  - id: b\n    sink: {type: collect, limit: 5}\n",
			[]server.Problem{{Line: 7, Col: 27, Message: "sink collect takes no option limit"}}},
		{"unknown plugin", "version: 1\nname: x\nplugins:\n  f: {path: nothing}\noperators:\n  - id: a\n    source: {type: generator, preset: sequence}\n  - id: b\n    filter: f\n  - id: c\n    sink: {type: collect}\n",
			[]server.Problem{{Line: 4, Col: 3, Message: `plugin f: path "nothing" names no plugin of tenant a`}}},
		// the server runs plugins on the fake clock and seeded random
		// only: a grant is refused, not ignored
		{"grants", "version: 1\nname: x\nplugins:\n  f: {path: nothing, grant: [clock, random]}\noperators:\n  - id: a\n    source: {type: generator, preset: sequence}\n  - id: b\n    filter: f\n  - id: c\n    sink: {type: collect}\n",
			[]server.Problem{{Line: 4, Col: 3, Message: `plugin f: path "nothing" names no plugin of tenant a`},
				{Line: 4, Col: 29, Message: "plugin f: grant clock, random is not offered by this server"}}},
		{"planner", "version: 1\nname: x\nslots: 1\nparallelism: 2\noperators:\n  - id: a\n    source: {type: generator, preset: sequence}\n  - id: b\n    sink: {type: collect}\n",
			[]server.Problem{{Line: 3, Col: 1, Message: "the job needs 2 slots but the pipeline offers 1"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := a.do(tokenA, "POST", "/v1/jobs", []byte(c.yaml))
			if r.code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", r.code, r)
			}
			e := r.errorJSON(t)
			if e.Where != server.PipelineFile || len(e.Problems) != len(c.want) {
				t.Fatalf("where %q, problems %+v; want %d problems", e.Where, e.Problems, len(c.want))
			}
			for i, w := range c.want {
				g := e.Problems[i]
				if g.Line != w.Line || g.Col != w.Col || !strings.Contains(g.Message, w.Message) {
					t.Errorf("problem %d: %d:%d %s\nwant %d:%d ...%s...", i, g.Line, g.Col, g.Message, w.Line, w.Col, w.Message)
				}
			}
		})
	}
	var list []server.JobStatus
	a.ok(tokenA, "GET", "/v1/jobs", nil, 200, &list)
	if len(list) != 0 {
		t.Errorf("refused pipelines became jobs: %+v", list)
	}
}

// TestAnswersDoNotEscapeHTML: a message quoting what the user wrote shows
// it as written, < and > included, not as \u003c and \u003e.
func TestAnswersDoNotEscapeHTML(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	r := a.do(tokenA, "POST", "/v1/jobs", []byte("version: 1\nname: x\noperators:\n  - id: a\n    source: {type: generator, preset: sequence}\n  - id: b\n    sink: {type: <kafka>}\n"))
	if r.code != http.StatusBadRequest || !strings.Contains(string(r.body), `not \"<kafka>\"`) || strings.Contains(string(r.body), `\u003c`) {
		t.Errorf("status %d:\n%s", r.code, r)
	}
}
