package web

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/host/server"
)

// collector exposes server.Monitor as Prometheus metrics with Flink's
// meanings. Labels are bounded: tenant (configured), job_id (running jobs
// only: a job's series disappear when it ends), operator and task (the
// job's), subtask (below its parallelism), call and kind (fixed lists).
// job_id rather than job: Prometheus gives every scraped series a job
// label of its own (and Flink's reporter says job_id too).
type collector struct {
	srv *server.Server

	recordsIn, recordsOut, bytesIn, bytesOut *prometheus.Desc
	logDropped                               *prometheus.Desc
	wmIn, wmOut                              *prometheus.Desc
	stateBytes, stateKeys                    *prometheus.Desc
	busy, idle, backPressured, skew          *prometheus.Desc
	calls, errors, duration, memory, restart *prometheus.Desc
	uptime                                   *prometheus.Desc
	slots, slotsQuota, pages, pagesQuota     *prometheus.Desc
	running, runningQuota, plugins           *prometheus.Desc
	pluginsQuota, pluginBytes, jobs          *prometheus.Desc
	rateLimited                              *prometheus.Desc
	// Flink's checkpoint metrics, under its names (lastCheckpointDuration
	// in ms, as Flink's)
	ckDuration, ckSize, ckCompleted *prometheus.Desc
	ckFailed, ckInProgress          *prometheus.Desc
}

func newCollector(srv *server.Server) *collector {
	op := []string{"tenant", "job_id", "operator", "subtask"}
	task := []string{"tenant", "job_id", "task", "subtask"}
	tenant := []string{"tenant"}
	job := []string{"tenant", "job_id"}
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc("sluice_"+name, help, labels, nil)
	}
	return &collector{
		srv:           srv,
		recordsIn:     d("operator_records_in_total", "Records the operator subtask received (Flink numRecordsIn).", op),
		recordsOut:    d("operator_records_out_total", "Records the operator subtask emitted (Flink numRecordsOut).", op),
		bytesIn:       d("operator_bytes_in_total", "Bytes the operator subtask received (Flink numBytesIn).", op),
		bytesOut:      d("operator_bytes_out_total", "Bytes the operator subtask emitted (Flink numBytesOut).", op),
		logDropped:    d("operator_log_lines_dropped_total", "Lines of guest stdout and stderr the plugin operator subtask dropped past the kept tail (a log flood).", op),
		wmIn:          d("operator_currentInputWatermark", "The operator subtask's current input watermark, epoch ms (Flink currentInputWatermark); absent before the first.", op),
		wmOut:         d("operator_currentOutputWatermark", "The operator subtask's current output watermark, epoch ms (Flink currentOutputWatermark); absent before the first.", op),
		stateBytes:    d("operator_state_bytes", "Bytes of keyed state the operator subtask holds on its backend (heap: what state-memory counts; Pebble: disk and memtables), measured every 250 ms between batches; absent for an operator without keyed state.", op),
		stateKeys:     d("operator_state_keys", "Keys of keyed state the operator subtask holds (heap only: Pebble does not count them).", op),
		busy:          d("task_busy_time_ms_per_second", "Time the task subtask was busy, ms per second over the last sample (Flink busyTimeMsPerSecond).", task),
		idle:          d("task_idle_time_ms_per_second", "Time the task subtask waited for input, ms per second (Flink idleTimeMsPerSecond).", task),
		backPressured: d("task_back_pressured_time_ms_per_second", "Time the task subtask waited for a free output buffer, ms per second (Flink backPressuredTimeMsPerSecond).", task),
		skew:          d("task_skew", "The busiest subtask's records in against the mean of the task's subtasks (1 is even).", []string{"tenant", "job_id", "task"}),
		calls:         d("plugin_calls_total", "Calls into a plugin instance by call (open, process, close, partition, keys).", append(op, "call")),
		errors:        d("plugin_errors_total", "Failed plugin calls by kind (trap, deadline, memory_limit, abi, ...).", []string{"tenant", "job_id", "operator", "kind"}),
		duration:      d("plugin_call_duration_seconds", "Duration of calls into a plugin, over the operator's subtasks.", []string{"tenant", "job_id", "operator"}),
		memory:        d("plugin_instance_memory_bytes", "Linear memory of the live plugin instance.", op),
		restart:       d("plugin_instance_restarts_total", "Plugin instances discarded after a trap, deadline or ABI error and replaced.", op),
		uptime:        d("job_uptime_seconds", "Time since the running job was submitted (Flink uptime).", []string{"tenant", "job_id"}),
		slots:         d("tenant_slots", "Task slots the tenant's running jobs hold.", tenant),
		slotsQuota:    d("tenant_slots_quota", "The tenant's slot quota.", tenant),
		pages:         d("tenant_memory_pages", "Plugin memory the tenant's running jobs may use: instances × instance pages (64 KiB).", tenant),
		pagesQuota:    d("tenant_memory_pages_quota", "The tenant's memory quota, 64 KiB pages.", tenant),
		running:       d("tenant_running_jobs", "The tenant's running jobs.", tenant),
		runningQuota:  d("tenant_running_jobs_quota", "The tenant's quota of running jobs.", tenant),
		plugins:       d("tenant_plugins", "Plugins the tenant has stored.", tenant),
		pluginsQuota:  d("tenant_plugins_quota", "The tenant's quota of stored plugins.", tenant),
		pluginBytes:   d("tenant_plugin_bytes", "Bytes of the tenant's stored plugins.", tenant),
		jobs:          d("tenant_jobs_total", "The tenant's jobs by outcome: submitted, finished, failed, canceled, refused (by a quota).", []string{"tenant", "outcome"}),
		rateLimited:   d("tenant_rate_limited_total", "The tenant's requests refused with 429.", tenant),
		ckDuration:    d("job_lastCheckpointDuration", "Time the latest completed checkpoint took, trigger to durable metadata, in ms (Flink lastCheckpointDuration).", job),
		ckSize:        d("job_lastCheckpointSize", "Bytes of the latest completed checkpoint's state files (Flink lastCheckpointSize).", job),
		ckCompleted:   d("job_numberOfCompletedCheckpoints", "Checkpoints and savepoints completed (Flink numberOfCompletedCheckpoints).", job),
		ckFailed:      d("job_numberOfFailedCheckpoints", "Checkpoints and savepoints failed (Flink numberOfFailedCheckpoints).", job),
		ckInProgress:  d("job_numberOfInProgressCheckpoints", "Checkpoints and savepoints in progress (Flink numberOfInProgressCheckpoints).", job),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.recordsIn, c.recordsOut, c.bytesIn, c.bytesOut, c.logDropped, c.wmIn, c.wmOut, c.stateBytes, c.stateKeys, c.busy, c.idle,
		c.backPressured, c.skew, c.calls, c.errors, c.duration, c.memory, c.restart, c.uptime, c.slots, c.slotsQuota,
		c.pages, c.pagesQuota, c.running, c.runningQuota, c.plugins, c.pluginsQuota, c.pluginBytes, c.jobs, c.rateLimited,
		c.ckDuration, c.ckSize, c.ckCompleted, c.ckFailed, c.ckInProgress} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	mon := c.srv.Monitor()
	for _, u := range mon.Tenants {
		c.tenant(ch, u)
	}
	for _, j := range mon.Jobs {
		c.job(ch, j)
	}
}

func (c *collector) tenant(ch chan<- prometheus.Metric, u server.Usage) {
	g := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, u.Tenant)
	}
	g(c.slots, float64(u.Slots))
	g(c.slotsQuota, float64(u.SlotsQuota))
	g(c.pages, float64(u.MemoryPages))
	g(c.pagesQuota, float64(u.MemoryPagesQuota))
	g(c.running, float64(u.RunningJobs))
	g(c.runningQuota, float64(u.RunningJobsQuota))
	g(c.plugins, float64(u.Plugins))
	g(c.pluginsQuota, float64(u.PluginsQuota))
	g(c.pluginBytes, float64(u.PluginBytes))
	ch <- prometheus.MustNewConstMetric(c.rateLimited, prometheus.CounterValue, float64(u.RateLimited), u.Tenant)
	for outcome, n := range map[string]int64{"submitted": u.JobsSubmitted, "finished": u.JobsFinished,
		"failed": u.JobsFailed, "canceled": u.JobsCanceled, "refused": u.Refused} {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.CounterValue, float64(n), u.Tenant, outcome)
	}
}

func (c *collector) job(ch chan<- prometheus.Metric, j server.JobSample) {
	m := j.Metrics
	ch <- prometheus.MustNewConstMetric(c.uptime, prometheus.GaugeValue, j.Uptime.Seconds(), j.Tenant, j.ID)
	if s := j.Checkpoints; s != nil {
		g := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, j.Tenant, j.ID)
		}
		g(c.ckDuration, float64(s.LastCheckpointDuration.Milliseconds()))
		g(c.ckSize, float64(s.LastCheckpointSize))
		g(c.ckCompleted, float64(s.NumberOfCompletedCheckpoints))
		g(c.ckFailed, float64(s.NumberOfFailedCheckpoints))
		g(c.ckInProgress, float64(s.NumberOfInProgressCheckpoints))
	}
	for _, op := range m.Operators {
		for _, s := range op.Subtasks {
			l := []string{j.Tenant, j.ID, op.ID, strconv.Itoa(s.Subtask)}
			ch <- prometheus.MustNewConstMetric(c.recordsIn, prometheus.CounterValue, float64(s.RecordsIn), l...)
			ch <- prometheus.MustNewConstMetric(c.recordsOut, prometheus.CounterValue, float64(s.RecordsOut), l...)
			ch <- prometheus.MustNewConstMetric(c.bytesIn, prometheus.CounterValue, float64(s.BytesIn), l...)
			ch <- prometheus.MustNewConstMetric(c.bytesOut, prometheus.CounterValue, float64(s.BytesOut), l...)
			ch <- prometheus.MustNewConstMetric(c.logDropped, prometheus.CounterValue, float64(s.LogLinesDropped), l...)
			if s.CurrentInputWatermark != nil {
				ch <- prometheus.MustNewConstMetric(c.wmIn, prometheus.GaugeValue, float64(*s.CurrentInputWatermark), l...)
			}
			if s.CurrentOutputWatermark != nil {
				ch <- prometheus.MustNewConstMetric(c.wmOut, prometheus.GaugeValue, float64(*s.CurrentOutputWatermark), l...)
			}
			if s.StateBytes != nil {
				ch <- prometheus.MustNewConstMetric(c.stateBytes, prometheus.GaugeValue, float64(*s.StateBytes), l...)
			}
			if s.StateKeys != nil {
				ch <- prometheus.MustNewConstMetric(c.stateKeys, prometheus.GaugeValue, float64(*s.StateKeys), l...)
			}
		}
	}
	for _, t := range m.Tasks {
		ch <- prometheus.MustNewConstMetric(c.skew, prometheus.GaugeValue, t.Skew, j.Tenant, j.ID, t.Name)
		for _, s := range t.Subtasks {
			l := []string{j.Tenant, j.ID, t.Name, strconv.Itoa(s.Subtask)}
			ch <- prometheus.MustNewConstMetric(c.busy, prometheus.GaugeValue, s.Busy, l...)
			ch <- prometheus.MustNewConstMetric(c.idle, prometheus.GaugeValue, s.Idle, l...)
			ch <- prometheus.MustNewConstMetric(c.backPressured, prometheus.GaugeValue, s.BackPressured, l...)
		}
	}
	type hist struct {
		count   uint64
		sum     float64
		buckets map[float64]uint64
	}
	hists := map[string]*hist{}
	var order []string
	for _, pc := range m.Plugins {
		l := []string{j.Tenant, j.ID, pc.Operator, strconv.Itoa(pc.Subtask)}
		for call, n := range pc.Calls {
			ch <- prometheus.MustNewConstMetric(c.calls, prometheus.CounterValue, float64(n), append(l, call)...)
		}
		ch <- prometheus.MustNewConstMetric(c.memory, prometheus.GaugeValue, float64(pc.MemoryBytes), l...)
		ch <- prometheus.MustNewConstMetric(c.restart, prometheus.CounterValue, float64(pc.Restarts), l...)
		h := hists[pc.Operator]
		if h == nil {
			h = &hist{buckets: map[float64]uint64{}}
			hists[pc.Operator] = h
			order = append(order, pc.Operator)
		}
		h.count += uint64(pc.Count)
		h.sum += pc.SumSeconds
		for i, ub := range server.CallBuckets {
			h.buckets[ub] += uint64(pc.Buckets[i])
		}
	}
	for _, op := range order {
		h := hists[op]
		ch <- prometheus.MustNewConstHistogram(c.duration, h.count, h.sum, h.buckets, j.Tenant, j.ID, op)
	}
	for op, kinds := range j.Errors {
		for kind, n := range kinds {
			ch <- prometheus.MustNewConstMetric(c.errors, prometheus.CounterValue, float64(n), j.Tenant, j.ID, op, kind)
		}
	}
}
