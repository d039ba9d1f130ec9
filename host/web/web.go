// Package web is the HTTP adapter of host/server: the REST API under /v1,
// /healthz, /readyz, the Prometheus /metrics and the embedded dashboard
// under /ui/. Handlers are thin: they authenticate, decode, call one
// server method and encode its answer or refusal as JSON.
//
// Routes (errors are {"error", "where"} JSON, plus "problems" [{line, col,
// message}] for a pipeline and "reasons" for a refused plugin):
//
//	POST   /v1/plugins?name=N      upload a module (body: the .wasm); 201, 200 if stored already under N,
//	                               409 if stored under another name, 422 if refused
//	GET    /v1/plugins             list; GET|DELETE /v1/plugins/{name or sha256:hex}
//	POST   /v1/jobs                submit (body: pipeline YAML; ?from=SAVEPOINT&allow-non-restored-state=
//	                               true to start from a savepoint); 201, 400 lint, 403 quota, 413 larger than
//	                               max-pipeline-bytes, 422 a plugin used as another kind, 503 no host room
//	                               now (Retry-After) or shutting down
//	GET    /v1/jobs                list; GET /v1/jobs/{id} status (records_total -1: unbounded, or
//	                               not known yet: the sources had not opened, as at submit)
//	GET    /v1/jobs/{id}/plan      the plan (host plan --format json)
//	GET    /v1/jobs/{id}/metrics   tasks, operators, subtasks, hot keys, plugin calls
//	GET    /v1/jobs/{id}/exceptions
//	GET    /v1/jobs/{id}/output?n= the newest records of the collect sinks
//	POST   /v1/jobs/{id}/cancel
//	GET    /v1/whoami, /v1/tenants (admin): quotas and usage
//	GET    /healthz, /readyz, /metrics (admin), /ui/ (dashboard)
//
// During Server.Shutdown's drain /readyz answers 503 and a submission is
// refused with 503, while every read keeps being answered (host serve
// closes the listener only once the drain ended). Everything is in memory
// only: plugins, job history and output are lost when the server stops.
//
// A known path asked with another method is a 405 with Allow; an unknown
// one a 404. A body is the file itself: a pipeline larger than
// max-pipeline-bytes or a plugin larger than max-request-bytes is a 413, a
// multipart form (curl -F) a 415.
//
// Every /v1 request and /metrics need "Authorization: Bearer <token>";
// /metrics needs the admin's. /healthz, /readyz and the dashboard's static
// files carry no data and need none: the dashboard asks for the token and
// sends it with each API call.
package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluicehq/sluice/host/server"
	"github.com/sluicehq/sluice/host/settings"
)

// Handler serves the API, the metrics and the dashboard of one Server.
type Handler struct {
	srv *server.Server
	cfg settings.Server
	mux *http.ServeMux

	registry *prometheus.Registry
	requests *prometheus.CounterVec
	// patterns are the routes of the API (docs/openapi.yaml documents
	// each), in the order routes registers them
	patterns []string
}

// New returns the handler of srv; cfg gives the request size limit and
// the rate limit (for messages).
func New(srv *server.Server, cfg settings.Server) *Handler {
	h := &Handler{srv: srv, cfg: cfg, mux: http.NewServeMux(), registry: prometheus.NewRegistry()}
	h.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sluice_http_requests_total", Help: "HTTP requests by route pattern and status code.",
	}, []string{"route", "code"})
	h.registry.MustRegister(h.requests, newCollector(srv), gaugeCollector{monitor: srv.Monitor},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	h.routes()
	return h
}

func (h *Handler) routes() {
	api := func(pattern string, f http.HandlerFunc) {
		h.mux.Handle(pattern, h.authenticated(f))
		h.patterns = append(h.patterns, pattern)
	}
	h.mux.HandleFunc("GET /healthz", h.healthz)
	h.mux.HandleFunc("GET /readyz", h.readyz)
	h.mux.Handle("GET /metrics", h.authenticated(adminOnly(promhttp.HandlerFor(h.registry, promhttp.HandlerOpts{}))))
	h.patterns = append(h.patterns, "GET /healthz", "GET /readyz", "GET /metrics")
	h.mux.Handle("GET /{$}", http.RedirectHandler("/ui/", http.StatusFound))
	h.mux.Handle("GET /ui/", dashboard())

	api("GET /v1/whoami", h.whoami)
	api("GET /v1/tenants", h.tenants)
	api("POST /v1/plugins", h.uploadPlugin)
	api("GET /v1/plugins", h.listPlugins)
	api("GET /v1/plugins/{ref}", h.getPlugin)
	api("DELETE /v1/plugins/{ref}", h.deletePlugin)
	api("POST /v1/jobs", h.submitJob)
	api("GET /v1/jobs", h.listJobs)
	api("GET /v1/jobs/{id}", h.getJob)
	api("GET /v1/jobs/{id}/plan", h.jobPlan)
	api("GET /v1/jobs/{id}/metrics", h.jobMetrics)
	api("GET /v1/jobs/{id}/exceptions", h.jobExceptions)
	api("GET /v1/jobs/{id}/output", h.jobOutput)
	api("POST /v1/jobs/{id}/cancel", h.cancelJob)
	api("GET /v1/jobs/{id}/checkpoints", h.jobCheckpoints)
	api("POST /v1/jobs/{id}/savepoints", h.triggerSavepoint)
	h.mux.Handle("/v1/", h.authenticated(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// this catch-all matches every method, so the mux's own 405 never
		// comes: a path that exists for other methods says which
		if allowed := h.allowed(r); len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			writeError(w, http.StatusMethodNotAllowed, r.Method+" "+r.URL.Path, "use %s", strings.Join(allowed, " or "))
			return
		}
		writeError(w, http.StatusNotFound, r.Method+" "+r.URL.Path, "no such endpoint")
	})))
}

// allowed lists the methods r's path has a route for, besides the
// catch-all.
func (h *Handler) allowed(r *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := h.mux.Handler(probe); pattern != "" && pattern != "/v1/" {
			out = append(out, m)
		}
	}
	return out
}

// ServeHTTP serves r and counts it by route pattern (a bounded label).
// The count is taken when the status is written, before the client can
// see the response.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w, count: func(code int) {
		route := r.Pattern // set by the mux before it calls the handler
		if route == "" {
			route = "unmatched"
		}
		h.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	}}
	h.mux.ServeHTTP(rec, r)
	if !rec.wrote {
		rec.WriteHeader(http.StatusOK)
	}
}

type statusRecorder struct {
	http.ResponseWriter
	count func(code int)
	wrote bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.wrote = true
		s.count(code)
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (h *Handler) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (h *Handler) readyz(w http.ResponseWriter, _ *http.Request) {
	if !h.srv.Ready() {
		writeError(w, http.StatusServiceUnavailable, "server", "shutting down: not accepting jobs")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// HTTPServer returns an http.Server for h with timeouts that keep slow
// clients from holding connections.
func HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       5 * time.Minute, // large plugin uploads
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}
