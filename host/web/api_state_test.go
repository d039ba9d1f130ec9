package web

import (
	"net/http"
	"testing"

	"github.com/sluicehq/sluice/host/server"
)

// TestStateSizeMetrics: a keyed operator's state size, bytes and keys,
// shows per subtask and summed in GET /v1/jobs/{id}/metrics and as the
// Prometheus gauges sluice_operator_state_bytes and _keys; an operator
// without keyed state has neither.
func TestStateSizeMetrics(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	a.ok(tokenA, "POST", "/v1/plugins?name=valid", validWasm(t), http.StatusCreated, nil)
	job := a.submit(tokenA, liveJob("valid", 2))
	var m server.JobMetrics
	waitFor(t, "keyed state measured on both subtasks", func() bool {
		a.ok(tokenA, "GET", "/v1/jobs/"+job.ID+"/metrics", nil, 200, &m)
		op := operator(t, m, "totals")
		return op.StateKeys != nil && *op.StateKeys >= 2 && op.Subtasks[0].StateBytes != nil && op.Subtasks[1].StateBytes != nil &&
			*op.Subtasks[0].StateBytes > 0 && *op.Subtasks[1].StateBytes > 0
	})
	op := operator(t, m, "totals")
	var bytes, keys int64
	for _, s := range op.Subtasks {
		if s.StateKeys == nil {
			t.Fatalf("subtask %d: no state keys on the heap", s.Subtask)
		}
		bytes += *s.StateBytes
		keys += *s.StateKeys
	}
	if *op.StateBytes != bytes || *op.StateKeys != keys {
		t.Errorf("totals: %d bytes, %d keys; its subtasks sum to %d and %d", *op.StateBytes, *op.StateKeys, bytes, keys)
	}
	if src := operator(t, m, "txns"); src.StateBytes != nil || src.Subtasks[0].StateBytes != nil {
		t.Errorf("the source has keyed state: %+v", src)
	}
	text := a.ok(tokenAdmin, "GET", "/metrics", nil, 200, nil).String()
	id := `job_id="` + job.ID + `"`
	for _, name := range []string{"sluice_operator_state_bytes", "sluice_operator_state_keys"} {
		if v, ok := series(text, name, id, `operator="totals"`, `subtask="1"`); !ok || v <= 0 {
			t.Errorf("%s of totals: %v (found %v)", name, v, ok)
		}
		if _, ok := series(text, name, id, `operator="txns"`); ok {
			t.Errorf("%s of the source", name)
		}
	}
	a.ok(tokenA, "POST", "/v1/jobs/"+job.ID+"/cancel", nil, 200, nil)
	a.wait(job.ID)
}
