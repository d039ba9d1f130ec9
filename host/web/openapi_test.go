package web

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/host/server"
)

// TestOpenAPIMatchesTheRoutes: docs/openapi.yaml documents every route of
// the API and no other, and its schemas of the answers have the fields the
// server writes.
func TestOpenAPIMatchesTheRoutes(t *testing.T) {
	b, err := os.ReadFile("../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI    string                    `yaml:"openapi"`
		Paths      map[string]map[string]any `yaml:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `yaml:"properties"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if method == "parameters" {
				continue
			}
			if m, _ := op.(map[string]any); m["responses"] == nil {
				t.Errorf("%s %s documents no responses", method, path)
			}
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	hs, ss := testSettings(t)
	srv, err := server.New(server.Config{Host: hs, Server: ss})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(t.Context())
	routes := slices.Clone(New(srv, ss).patterns)
	slices.Sort(routes)
	slices.Sort(documented)
	if !slices.Equal(routes, documented) {
		t.Errorf("routes and docs/openapi.yaml differ:\nroutes:     %v\ndocumented: %v", routes, documented)
	}
	for name, v := range map[string]any{"JobStatus": server.JobStatus{}, "Output": server.Output{},
		"OutputRecord": server.OutputRecord{}, "Error": errorBody{}, "Checkpoints": server.Checkpoints{},
		"CheckpointInfo": server.CheckpointInfo{}, "Savepoint": server.Savepoint{}} {
		var fields, props []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			fields = append(fields, tag)
		}
		for p := range doc.Components.Schemas[name].Properties {
			props = append(props, p)
		}
		slices.Sort(fields)
		slices.Sort(props)
		if !slices.Equal(fields, props) {
			t.Errorf("schema %s: properties %v, the server writes %v", name, props, fields)
		}
	}
}
