package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/sluicehq/sluice/host/server"
)

// whoami: the caller and its quotas and usage.
func (h *Handler) whoami(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	writeJSON(w, http.StatusOK, struct {
		Tenant string         `json:"tenant,omitempty"`
		Admin  bool           `json:"admin"`
		Usage  []server.Usage `json:"usage"`
	}{p.Tenant, p.Admin, h.srv.Usage(p)})
}

// tenants: every tenant's usage (admin only).
func (h *Handler) tenants(w http.ResponseWriter, r *http.Request) {
	if !principal(r).Admin {
		writeError(w, http.StatusForbidden, r.URL.Path, "only the admin token lists tenants: GET /v1/whoami shows yours")
		return
	}
	writeJSON(w, http.StatusOK, h.srv.Usage(principal(r)))
}

// uploadPlugin: POST /v1/plugins?name=NAME with the module as the body.
func (h *Handler) uploadPlugin(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if name == "" {
		writeError(w, http.StatusBadRequest, "query parameter name", "name the plugin: POST /v1/plugins?name=NAME with the .wasm module as the body")
		return
	}
	bin, ok := readBody(w, r, h.cfg.MaxRequestBytes, "max-request-bytes")
	if !ok {
		return
	}
	info, err := h.srv.UploadPlugin(r.Context(), principal(r), name, bin)
	if err != nil {
		writeServerError(w, r, err)
		return
	}
	status := http.StatusOK
	if info.Created {
		status = http.StatusCreated
		w.Header().Set("Location", "/v1/plugins/"+info.Digest)
	}
	writeJSON(w, status, info)
}

func (h *Handler) listPlugins(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, h.srv.Plugins(principal(r)))
}

func (h *Handler) getPlugin(w http.ResponseWriter, r *http.Request) {
	info, err := h.srv.Plugin(principal(r), r.PathValue("ref"))
	if err != nil {
		writeServerError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

func (h *Handler) deletePlugin(w http.ResponseWriter, r *http.Request) {
	if err := h.srv.DeletePlugin(principal(r), r.PathValue("ref")); err != nil {
		writeServerError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// submitJob: POST /v1/jobs with the pipeline YAML as the body; with
// ?from=PATH the job starts from that savepoint (Flink's savepointPath),
// and &allow-non-restored-state=true drops the state of operators it no
// longer has (Flink's allowNonRestoredState).
func (h *Handler) submitJob(w http.ResponseWriter, r *http.Request) {
	var opts server.SubmitOptions
	q := r.URL.Query()
	opts.From = q.Get("from")
	if v := q.Get("allow-non-restored-state"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "query parameter allow-non-restored-state", "allow-non-restored-state is true or false, not %q", v)
			return
		}
		if opts.From == "" && b {
			writeError(w, http.StatusBadRequest, "query parameter allow-non-restored-state", "allow-non-restored-state needs from")
			return
		}
		opts.AllowNonRestoredState = b
	}
	src, ok := readBody(w, r, int64(h.cfg.MaxPipelineBytes), "max-pipeline-bytes")
	if !ok {
		return
	}
	st, err := h.srv.SubmitWith(r.Context(), principal(r), src, opts)
	if err != nil {
		var e *server.Error
		if errors.As(err, &e) && e.Code == server.Invalid && !bytes.ContainsAny(src, "\r\n") && len(e.Problems) > 0 {
			// curl -d (--data) drops a file's line breaks; --data-binary keeps them
			hint := *e
			hint.Msg += " (the body has no line breaks: curl -d drops them, send the file with curl --data-binary @FILE)"
			err = &hint
		}
		writeServerError(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/jobs/"+st.ID)
	writeJSON(w, http.StatusCreated, st)
}

func (h *Handler) listJobs(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, h.srv.Jobs(principal(r)))
}

func (h *Handler) getJob(w http.ResponseWriter, r *http.Request) {
	answer(w, r, func(p server.Principal, id string) (any, error) { return h.srv.Job(p, id) })
}

func (h *Handler) jobMetrics(w http.ResponseWriter, r *http.Request) {
	answer(w, r, func(p server.Principal, id string) (any, error) { return h.srv.JobMetrics(p, id) })
}

func (h *Handler) jobExceptions(w http.ResponseWriter, r *http.Request) {
	answer(w, r, func(p server.Principal, id string) (any, error) { return h.srv.JobExceptions(p, id) })
}

func (h *Handler) cancelJob(w http.ResponseWriter, r *http.Request) {
	answer(w, r, func(p server.Principal, id string) (any, error) { return h.srv.Cancel(p, id) })
}

func (h *Handler) jobCheckpoints(w http.ResponseWriter, r *http.Request) {
	answer(w, r, func(p server.Principal, id string) (any, error) { return h.srv.JobCheckpoints(p, id) })
}

// triggerSavepoint: POST /v1/jobs/{id}/savepoints with {"stop": bool}
// (an empty body is {"stop": false}), as Flink's POST
// /jobs/:jobid/savepoints and /stop; 202 with the savepoint's id, its
// progress in GET /v1/jobs/{id}/checkpoints.
func (h *Handler) triggerSavepoint(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stop bool `json:"stop"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, "request body", `want {"stop": true} or {"stop": false}: %v`, err)
		return
	}
	sp, err := h.srv.TriggerSavepoint(r.Context(), principal(r), r.PathValue("id"), req.Stop)
	if err != nil {
		writeServerError(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/jobs/"+sp.Job+"/checkpoints")
	writeJSON(w, http.StatusAccepted, sp)
}

// jobOutput: GET /v1/jobs/{id}/output?n=N, the newest N records of the
// job's collect sinks (every kept one without n).
func (h *Handler) jobOutput(w http.ResponseWriter, r *http.Request) {
	n, err := intParam(r, "n", 0)
	if err != nil {
		writeError(w, http.StatusBadRequest, "query parameter n", "%v", err)
		return
	}
	answer(w, r, func(p server.Principal, id string) (any, error) { return h.srv.JobOutput(p, id, n) })
}

// jobPlan: the plan as `host plan --format json` prints it.
func (h *Handler) jobPlan(w http.ResponseWriter, r *http.Request) {
	b, err := h.srv.Plan(principal(r), r.PathValue("id"))
	if err != nil {
		writeServerError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// answer answers with what get returns for the job in the path.
func answer(w http.ResponseWriter, r *http.Request, get func(server.Principal, string) (any, error)) {
	v, err := get(principal(r), r.PathValue("id"))
	if err != nil {
		writeServerError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
