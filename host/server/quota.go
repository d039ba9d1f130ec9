package server

import (
	"fmt"

	"github.com/sluicehq/sluice/host/plan"
)

// need is what a planned job takes from its tenant's quotas: its slots,
// and for memory one instance per subtask of every plugin operator and
// per upstream subtask of every plugin edge (partitioner, key selector),
// each allowed the tenant's instance pages.
func need(g *plan.JobGraph, instancePages uint32) usage {
	u := usage{slots: g.RequiredSlots}
	par := map[string]int{}
	for _, op := range g.Operators {
		par[op.ID] = op.Parallelism
		if op.Kind.UsesPlugin() {
			u.instances += op.Parallelism
		}
	}
	for _, e := range g.Edges {
		if e.CustomPlugin != "" || e.KeyPlugin != "" {
			u.instances += par[e.From]
		}
	}
	u.pages = int64(u.instances) * int64(instancePages)
	return u
}

// admitLocked checks a job needing u against t's quotas and the host's
// slots, and reserves it. s.mu is held.
func (s *Server) admitLocked(t *tenant, u usage) error {
	q := t.cfg
	name := q.Name
	if s.closing {
		return errorf(Unavailable, "server", "the server is shutting down: it accepts no new job")
	}
	// counted at admission, not once started: submits compiling their
	// plugins side by side would all pass a count of the running ones
	if t.jobs+1 > q.RunningJobs {
		return errorf(QuotaExceeded, "quota running-jobs", "tenant %s: %d jobs running or starting, quota %d: wait for one to end or cancel one", name, t.jobs, q.RunningJobs)
	}
	if t.slots+u.slots > q.Slots {
		return errorf(QuotaExceeded, "quota slots", "tenant %s: job needs %d slots, quota %d (running: %d)", name, u.slots, q.Slots, t.slots)
	}
	if t.pages+u.pages > q.MemoryPages {
		return errorf(QuotaExceeded, "quota memory-pages", "tenant %s: job needs %d memory pages (%d plugin instances × %d pages), quota %d (running: %d)",
			name, u.pages, u.instances, q.InstancePages, q.MemoryPages, t.pages)
	}
	if host := s.cfg.Host.Slots; host > 0 && s.slotsUsed+u.slots > host {
		// not the tenant's quota but the host's room, which other tenants'
		// jobs take: a 503 to retry, and no numbers about their jobs
		if u.slots > host {
			return errorf(QuotaExceeded, "host slots", "host: the job needs %d slots, more than the host has (%d)", u.slots, host)
		}
		return errorf(Unavailable, "host slots", "host: no room for a job of %s now: try again when running jobs end", plural(u.slots, "slot"))
	}
	t.jobs++
	t.slots += u.slots
	t.pages += u.pages
	s.slotsUsed += u.slots
	return nil
}

// unreserveLocked gives back what admitLocked reserved.
func (s *Server) unreserveLocked(t *tenant, u usage) {
	t.jobs--
	t.slots -= u.slots
	t.pages -= u.pages
	s.slotsUsed -= u.slots
}

// release gives an ended job's quota back and moves it to the history.
func (s *Server) release(j *Job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tenants[j.Tenant]
	s.unreserveLocked(t, j.need)
	delete(t.running, j.ID)
	switch j.status().State {
	case Finished:
		t.finished.Add(1)
	case Canceled:
		t.canceled.Add(1)
	default:
		t.failed.Add(1)
	}
	t.ended = append(t.ended, j)
	for len(t.ended) > s.cfg.Server.JobHistory {
		delete(s.jobs, t.ended[0].ID)
		t.ended[0] = nil
		t.ended = t.ended[1:]
	}
}

// Usage is a tenant's use of its quotas.
type Usage struct {
	Tenant           string  `json:"tenant"`
	Slots            int     `json:"slots"`
	SlotsQuota       int     `json:"slots_quota"`
	MemoryPages      int64   `json:"memory_pages"`
	MemoryPagesQuota int64   `json:"memory_pages_quota"`
	InstancePages    uint32  `json:"instance_pages"`
	CallTimeoutMs    int64   `json:"call_timeout_ms"`
	RunningJobs      int     `json:"running_jobs"`
	RunningJobsQuota int     `json:"running_jobs_quota"`
	Plugins          int     `json:"plugins"`
	PluginsQuota     int     `json:"plugins_quota"`
	PluginBytes      int64   `json:"plugin_bytes"`       // stored, summed
	PluginBytesQuota int     `json:"plugin_bytes_quota"` // per plugin
	JobsSubmitted    int64   `json:"jobs_submitted"`
	JobsFinished     int64   `json:"jobs_finished"`
	JobsFailed       int64   `json:"jobs_failed"`
	JobsCanceled     int64   `json:"jobs_canceled"`
	Refused          int64   `json:"refused"` // by a quota
	RateLimited      int64   `json:"rate_limited"`
	RateLimit        float64 `json:"rate_limit"`
}

// Usage returns p's usage; the admin gets every tenant's.
func (s *Server) Usage(p Principal) []Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Usage{}
	for _, name := range s.names {
		if p.Admin || name == p.Tenant {
			out = append(out, s.usageLocked(s.tenants[name]))
		}
	}
	return out
}

func (s *Server) usageLocked(t *tenant) Usage {
	q := t.cfg
	u := Usage{Tenant: q.Name, Slots: t.slots, SlotsQuota: q.Slots, MemoryPages: t.pages, MemoryPagesQuota: q.MemoryPages,
		InstancePages: q.InstancePages, CallTimeoutMs: q.CallTimeout.Milliseconds(),
		RunningJobs: t.jobs, RunningJobsQuota: q.RunningJobs, Plugins: len(t.plugins), PluginsQuota: q.Plugins,
		PluginBytesQuota: q.PluginBytes, JobsSubmitted: t.submitted.Load(), JobsFinished: t.finished.Load(),
		JobsFailed: t.failed.Load(), JobsCanceled: t.canceled.Load(), Refused: t.refused.Load(),
		RateLimited: t.rateLimited.Load(), RateLimit: s.cfg.Server.RateLimit}
	for _, sp := range t.plugins {
		u.PluginBytes += int64(len(sp.bin))
	}
	return u
}

// plural is "1 slot", "2 slots".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
