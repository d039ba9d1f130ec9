package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/server"
)

// refPipeline uses plugin valid at path.
func refPipeline(path string) string {
	return `version: 1
name: refs
mode: batch
plugins:
  valid: { path: "` + path + `" }
operators:
  - id: txns
    source: ` + generatorSpec + `
  - id: valid
    filter: valid
  - id: out
    sink: { type: collect }
`
}

// TestDigestPrefixInAnyCase: SHA256:<HEX>, as some tools print a digest,
// names the same plugin as sha256:<hex>, in a pipeline and in the API.
func TestDigestPrefixInAnyCase(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	var info server.PluginInfo
	a.ok(tokenA, "POST", "/v1/plugins?name=valid", validWasm(t), http.StatusCreated, &info)
	upper := strings.ToUpper(info.Digest)
	var got server.PluginInfo
	a.ok(tokenA, "GET", "/v1/plugins/"+upper, nil, http.StatusOK, &got)
	if got.Digest != info.Digest {
		t.Errorf("GET %s: %+v", upper, got)
	}
	st := a.submit(tokenA, refPipeline(upper))
	if st.Plugins["valid"] != info.Digest {
		t.Errorf("submitted with %s: plugins %v, want %s", upper, st.Plugins, info.Digest)
	}
	if end := a.wait(st.ID); end.State != server.Finished {
		t.Errorf("ended %s: %s", end.State, end.Error)
	}
}

// TestFilePathInAServerPipeline: a file path (absolute, or climbing out
// with "..") names no plugin on the server; the answer says to use an
// uploaded plugin's name or digest, not the CLI's advice about paths
// relative to the pipeline file.
func TestFilePathInAServerPipeline(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	a.ok(tokenA, "POST", "/v1/plugins?name=valid", validWasm(t), http.StatusCreated, nil)
	for _, path := range []string{"/usr/lib/valid.wasm", "../plugins/valid/valid.wasm", "valid.wasm"} {
		r := a.do(tokenA, "POST", "/v1/jobs", []byte(refPipeline(path)))
		if r.code != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", path, r.code, r)
		}
		e := r.errorJSON(t)
		if len(e.Problems) != 1 {
			t.Fatalf("%s: problems %+v", path, e.Problems)
		}
		msg := e.Problems[0].Message
		mustContain(t, path, msg, "is a file path", "uploaded plugin's name or its sha256:<hex> digest", "uploaded: valid")
		if strings.Contains(msg, "relative to the pipeline file") || strings.Contains(msg, "climbs out") {
			t.Errorf("%s: the CLI's advice: %s", path, msg)
		}
	}
}
