// sluice dashboard: plain JavaScript, no dependencies. It keeps the API
// token in sessionStorage, polls the REST API every second and draws the
// job graph in SVG the way Flink's Web UI does: tasks as boxes holding
// their chained operators, exchanges labelled with their ship strategy,
// tasks coloured by busy and back-pressured time.
"use strict";

const TOKEN_KEY = "sluice.token";
const SVG = "http://www.w3.org/2000/svg";
const ENDED = new Set(["FINISHED", "FAILED", "CANCELED"]);

const $ = (id) => document.getElementById(id);
let view = { job: null, plan: null, final: false };
let timer = null;
let generation = 0; // the newest refresh: an older one still awaiting schedules nothing

// ---- API ------------------------------------------------------------

class AuthError extends Error {}

async function api(path, options = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) throw new AuthError("no token");
  const res = await fetch(path, {
    ...options,
    headers: { ...(options.headers || {}), Authorization: "Bearer " + token },
  });
  if (res.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    throw new AuthError("the token was refused");
  }
  const body = res.status === 204 ? null : await res.json();
  if (!res.ok) {
    const where = body && body.where ? body.where + ": " : "";
    throw new Error(where + (body && body.error ? body.error : res.statusText));
  }
  return body;
}

// ---- small DOM helpers ---------------------------------------------

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

function svg(tag, attrs = {}, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function fillRows(tbody, rows) {
  if (!rows.length) { // an empty section says so, not just its headers
    const cols = tbody.parentElement.tHead ? tbody.parentElement.tHead.rows[0].cells.length : 1;
    tbody.replaceChildren(el("tr", { class: "empty" }, el("td", { colspan: cols, text: "none" })));
    return;
  }
  tbody.replaceChildren(...rows.map((cells) => {
    const tr = el("tr");
    for (const c of cells) {
      if (c instanceof Node) { tr.append(el("td", {}, c)); continue; }
      const isNum = typeof c === "number";
      tr.append(el("td", { class: isNum ? "num" : "", text: isNum ? fmt(c) : String(c) }));
    }
    return tr;
  }));
}

// keyText shows a key the API gives as JSON: a string without its JSON
// quotes, anything else (a number, a tuple) as written.
function keyText(json) {
  try {
    const v = JSON.parse(json);
    return typeof v === "string" ? v : json;
  } catch (e) {
    return json;
  }
}

function fmt(n) {
  if (!Number.isFinite(n)) return "–";
  if (Math.abs(n) >= 1e6) return (n / 1e6).toFixed(1) + "M";
  if (Math.abs(n) >= 1e4) return (n / 1e3).toFixed(1) + "K";
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

function bytes(n) {
  if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + " MiB";
  if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + " KiB";
  return n + " B";
}

// stateSize is a subtask's keyed state as the table shows it: bytes, and
// keys where the backend counts them (the heap); blank without keyed state.
function stateSize(s) {
  if (s.state_bytes == null) return "";
  return bytes(s.state_bytes) + (s.state_keys == null ? "" : " · " + fmt(s.state_keys) + " keys");
}

function duration(ms) {
  const s = Math.floor(ms / 1000);
  if (s < 60) return (ms / 1000).toFixed(1) + "s";
  const m = Math.floor(s / 60);
  return m < 60 ? m + "m " + (s % 60) + "s" : Math.floor(m / 60) + "h " + (m % 60) + "m";
}

function time(iso) { return new Date(iso).toLocaleTimeString(); }

// ---- views -------------------------------------------------------------

function showLogin(message) {
  $("login").hidden = false;
  $("main").hidden = true;
  $("logout").hidden = true;
  $("who").textContent = "";
  $("login-error").textContent = message || "";
  $("token").focus();
}

function showMain() {
  $("login").hidden = true;
  $("main").hidden = false;
  $("logout").hidden = false;
}

function route() {
  const m = location.hash.match(/^#\/jobs\/([0-9a-f]+)$/);
  const id = m ? m[1] : null;
  if (id !== view.job) view = { job: id, plan: null, final: false };
  $("jobs-view").hidden = !!id;
  $("job-view").hidden = !id;
  refresh();
}

async function refresh() {
  clearTimeout(timer);
  const mine = ++generation;
  if (!sessionStorage.getItem(TOKEN_KEY)) { showLogin(); return; }
  try {
    showMain();
    if (view.job) await refreshJob(view.job);
    else await refreshJobs();
  } catch (err) {
    if (err instanceof AuthError) { showLogin("Sign-in failed: " + err.message + "."); return; }
    const target = view.job ? $("job-error") : $("usage");
    target.textContent = err.message;
  }
  if (mine === generation) timer = setTimeout(refresh, 1000);
}

async function refreshJobs() {
  const [who, jobs] = await Promise.all([api("/v1/whoami"), api("/v1/jobs")]);
  $("who").textContent = who.admin ? "admin" : "tenant " + who.tenant;
  if (!who.admin && who.usage.length) {
    const u = who.usage[0];
    $("usage").textContent = `slots ${u.slots}/${u.slots_quota} · memory ${u.memory_pages}/${u.memory_pages_quota} pages · ` +
      `running jobs ${u.running_jobs}/${u.running_jobs_quota} · plugins ${u.plugins}/${u.plugins_quota}`;
  } else {
    $("usage").textContent = who.usage.length + " tenants";
  }
  $("jobs-empty").hidden = jobs.length > 0;
  fillRows($("jobs").tBodies[0], jobs.map((j) => [
    el("a", { href: "#/jobs/" + j.id, text: j.id.slice(0, 8) }),
    j.tenant, j.name, el("span", { class: "state " + j.state, text: j.state }),
    time(j.submitted), duration(j.duration_ms),
    records(j),
    j.slots,
  ]));
}

// records: what the sources read (of what they will read, when known) and
// what reached the sinks, so a job that failed after reading shows it.
function records(j) {
  const read = j.records_total > 0 ? fmt(j.records_done) + " / " + fmt(j.records_total) : fmt(j.records_done);
  return `${read} read · ${fmt(j.records_sunk)} to sinks`;
}

async function refreshJob(id) {
  if (view.final) return;
  if (!view.plan) view.plan = await api("/v1/jobs/" + id + "/plan");
  const [job, metrics, exc, out, ckpts] = await Promise.all([
    api("/v1/jobs/" + id), api("/v1/jobs/" + id + "/metrics"),
    api("/v1/jobs/" + id + "/exceptions"), api("/v1/jobs/" + id + "/output?n=20"),
    api("/v1/jobs/" + id + "/checkpoints"),
  ]);
  $("job-title").textContent = job.name + " (" + job.id + ")";
  const summary = $("job-summary");
  summary.replaceChildren(
    el("span", { class: "state " + job.state, text: job.state }),
    ` · tenant ${job.tenant} · ${job.mode} · ${duration(job.duration_ms)} · records ${records(job)} · ${job.slots} slots · rates over ${metrics.rate_window}`);
  $("job-error").textContent = job.error || "";
  $("cancel").hidden = ENDED.has(job.state);
  drawGraph(view.plan, metrics);
  subtaskTable(metrics);
  skewCharts(metrics);
  throughputCharts(id, metrics);
  fillRows($("hotkeys").tBodies[0], metrics.hot_keys.map((h) => [
    h.from + " → " + h.to + " (" + h.strategy + ")", keyText(h.key), (100 * h.share).toFixed(0) + "%", h.subtask, h.advice]));
  fillRows($("plugins").tBodies[0], metrics.plugins.map((p) => {
    const calls = Object.values(p.calls).reduce((a, b) => a + b, 0);
    const errs = Object.entries(p.errors).map(([k, v]) => k + " " + v).join(", ") || "0";
    const mean = p.count ? (1e6 * p.sum_seconds / p.count).toFixed(1) + " µs" : "–";
    return [p.operator, p.plugin, p.subtask, calls, mean, errs, p.restarts, bytes(p.memory_bytes)];
  }));
  checkpointSection(job, ckpts);
  const tbody = $("exceptions").tBodies[0];
  fillRows(tbody, exc.exceptions.map((e) => [time(e.time), e.operator || "–", e.subtask >= 0 ? e.subtask : "–",
    e.kind + (e.root ? " (root cause)" : ""), e.message]));
  exc.exceptions.forEach((e, i) => {
    const tr = tbody.rows[i];
    if (e.root) tr.classList.add("root");
    tr.cells[4].classList.add("msg");
  });
  $("output").textContent = out.records.map((r) => r.sink + "[" + r.subtask + "] " + JSON.stringify(r.value)).join("\n") +
    (out.total > out.records.length ? "\n… " + fmt(out.total) + " records in all" : "");
  if (ENDED.has(job.state)) view.final = true;
}

// checkpointSection shows the checkpoint statistics as Flink's Web UI:
// the counts under Flink's names, the latest completed, and the history.
function checkpointSection(job, c) {
  const n = c.counts;
  $("checkpoint-counts").textContent = c.checkpointing
    ? `completed ${n.numberOfCompletedCheckpoints} · failed ${n.numberOfFailedCheckpoints} · in progress ${n.numberOfInProgressCheckpoints}` +
      (c.restored ? ` · restored from ${c.restored}` : "")
    : "The job takes no checkpoints: set checkpointing: interval in its pipeline.";
  const l = c.latest_completed;
  $("checkpoint-latest").textContent = l
    ? `latest completed: ${l.kind || "checkpoint"} ${l.id}, ${duration(l.end_to_end_duration_ms)}, ${bytes(l.state_size)}` + (l.external_path ? ` in ${l.external_path}` : "")
    : "";
  $("savepoint-buttons").hidden = !c.checkpointing || ENDED.has(job.state);
  fillRows($("checkpoints").tBodies[0], c.history.map((h) => {
    const align = (h.subtasks || []).reduce((a, s) => Math.max(a, s.alignment_duration_ms), 0);
    return [h.id, h.kind, h.status, time(h.trigger_timestamp), duration(h.end_to_end_duration_ms), bytes(h.state_size),
      h.num_acknowledged_subtasks + " / " + h.num_subtasks, align + " ms", h.failure_message || h.external_path || ""];
  }));
}

// ---- the job graph ----------------------------------------------------

// colour is Flink's vertex colour: from idle blue to busy red, or to grey
// when back-pressure dominates.
function colour(busy, bp) {
  const mix = (a, b, t) => a.map((x, i) => Math.round(x + (b[i] - x) * Math.min(Math.max(t, 0), 1)));
  const rgb = bp > busy ? mix([236, 238, 240], [95, 99, 104], bp / 1000) : mix([220, 236, 255], [232, 65, 44], busy / 1000);
  const dark = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 140;
  return { fill: "rgb(" + rgb.join(",") + ")", text: dark ? "#fff" : "#14202e" };
}

function drawGraph(plan, metrics) {
  const g = $("graph");
  const taskOf = {};
  plan.operators.forEach((o) => { taskOf[o.id] = o.task; });
  const kind = {};
  plan.operators.forEach((o) => { kind[o.id] = o.kind; });
  const links = plan.edges.filter((e) => !e.chained).map((e) => ({ from: taskOf[e.from], to: taskOf[e.to], ship: e.ship_strategy }));
  // columns by longest path from a source (tasks come in topological order)
  const depth = plan.tasks.map(() => 0);
  for (const t of plan.tasks) for (const l of links) if (l.to === t.id) depth[t.id] = Math.max(depth[t.id], depth[l.from] + 1);
  const W = 250, GAPX = 110, GAPY = 36, PAD = 24;
  const height = (t) => 73 + 17 * t.operators.length;
  const rows = {};
  const box = {};
  for (const t of plan.tasks) {
    const col = depth[t.id];
    const y = rows[col] || PAD;
    box[t.id] = { x: PAD + col * (W + GAPX), y, w: W, h: height(t) };
    rows[col] = y + height(t) + GAPY;
  }
  const width = PAD * 2 + (Math.max(...depth) + 1) * (W + GAPX) - GAPX;
  const totalH = Math.max(...Object.values(rows)) + PAD - GAPY;
  g.setAttribute("width", width);
  g.setAttribute("height", totalH);
  g.setAttribute("viewBox", `0 0 ${width} ${totalH}`);
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" });
  marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#6b7785" }));
  defs.append(marker);
  const parts = [defs];
  const seen = {};
  for (const l of links) {
    const a = box[l.from], b = box[l.to];
    const key = l.from + ">" + l.to;
    const k = (seen[key] = (seen[key] || 0) + 1) - 1;
    const y1 = a.y + a.h / 2 + k * 10, y2 = b.y + b.h / 2 + k * 10;
    const x1 = a.x + a.w, x2 = b.x;
    const mx = (x1 + x2) / 2;
    parts.push(svg("path", { class: "edge", d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, "marker-end": "url(#arrow)" }));
    const ly = (y1 + y2) / 2 + k * 14;
    const lw = 8 + 7.2 * l.ship.length;
    parts.push(svg("rect", { class: "label-bg", x: mx - lw / 2, y: ly - 9, width: lw, height: 17, rx: 3 }));
    parts.push(svg("text", { class: "edge-label", x: mx, y: ly + 4, "text-anchor": "middle" }, l.ship));
  }
  const tm = {};
  metrics.tasks.forEach((t) => { tm[t.id] = t; });
  for (const t of plan.tasks) {
    const b = box[t.id];
    const m = tm[t.id] || { busy_ms_per_second_max: 0, back_pressured_ms_per_second_max: 0 };
    const c = colour(m.busy_ms_per_second_max, m.back_pressured_ms_per_second_max);
    const grp = svg("g", { class: "task", "data-task": t.id });
    grp.append(svg("title", {}, t.name));
    grp.append(svg("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: 6, fill: c.fill, stroke: "#14202e", "stroke-width": 1.2 }));
    grp.append(svg("text", { class: "task-title", x: b.x + 10, y: b.y + 18, fill: c.text }, `Task ${t.id} · parallelism ${t.parallelism}`));
    t.operators.forEach((op, i) => {
      const label = (i ? "↳ " : "") + op + " (" + kind[op] + ")";
      grp.append(svg("text", { class: "operator", x: b.x + 14, y: b.y + 38 + 17 * i, fill: c.text }, label));
    });
    grp.append(svg("text", { class: "records", x: b.x + 10, y: b.y + b.h - 27, fill: c.text },
      `records in ${fmt(m.records_received || 0)} · out ${fmt(m.records_sent || 0)}`));
    grp.append(svg("text", { class: "times", x: b.x + 10, y: b.y + b.h - 10, fill: c.text },
      `busy ${Math.round(m.busy_ms_per_second_max / 10)}% · back-pressured ${Math.round(m.back_pressured_ms_per_second_max / 10)}%`));
    parts.push(grp);
  }
  g.replaceChildren(...parts);
}

// ---- tables and charts --------------------------------------------------

function subtaskTable(metrics) {
  const rows = [];
  for (const op of metrics.operators) {
    const task = metrics.tasks[op.task];
    for (const s of op.subtasks) {
      const t = (task && task.subtasks[s.subtask]) || {};
      rows.push([op.id, op.task, s.subtask, s.records_in, s.records_out, bytes(s.bytes_in), bytes(s.bytes_out), stateSize(s),
        Math.round(t.busy_ms_per_second || 0), Math.round(t.back_pressured_ms_per_second || 0), Math.round(t.idle_ms_per_second || 0)]);
    }
  }
  fillRows($("subtasks").tBodies[0], rows);
}

function skewCharts(metrics) {
  const W = 240, H = 120, PAD = 22;
  const charts = metrics.tasks.map((t) => {
    const s = svg("svg", { width: W, height: H, class: "skew-chart", "data-task": t.id });
    const values = t.records_in.length ? t.records_in : [0];
    const top = Math.max(1, ...values);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    const bw = (W - 2 * PAD) / values.length;
    s.append(svg("text", { x: 6, y: 14 }, `Task ${t.id}: skew ${t.skew ? t.skew.toFixed(2) : "–"}`));
    values.forEach((v, i) => {
      const h = (H - 2 * PAD) * v / top;
      const hot = t.skew > 1.5 && v === top;
      const bar = svg("rect", { class: hot ? "bar hot" : "bar", x: PAD + i * bw + 2, y: H - PAD - h, width: Math.max(bw - 4, 1), height: h });
      bar.append(svg("title", {}, `subtask ${i}: ${v} records`));
      s.append(bar);
      s.append(svg("text", { x: PAD + i * bw + bw / 2, y: H - 6, "text-anchor": "middle" }, String(i)));
    });
    const my = H - PAD - (H - 2 * PAD) * mean / top;
    s.append(svg("line", { class: "mean", x1: PAD, x2: W - PAD, y1: my, y2: my }));
    return s;
  });
  $("skew").replaceChildren(...charts);
}

// history keeps, per job and task, the last samples of what the vertex
// received and sent and its back-pressure, one per refresh, for the
// throughput charts (Flink's Web UI shows the same over time).
const history = {};
const HISTORY = 120;

function throughputCharts(job, metrics) {
  const now = Date.now();
  const h = (history[job] = history[job] || {});
  const W = 320, H = 120, PAD = 22;
  const charts = metrics.tasks.map((t) => {
    const samples = (h[t.id] = h[t.id] || []);
    const last = samples[samples.length - 1];
    if (!last || last.t !== now) {
      const s = { t: now, recv: t.records_received, sent: t.records_sent, bp: t.back_pressured_ms_per_second_max / 10, in: 0, out: 0 };
      if (last && now > last.t) {
        s.in = Math.max(0, (s.recv - last.recv) * 1000 / (now - last.t));
        s.out = Math.max(0, (s.sent - last.sent) * 1000 / (now - last.t));
      }
      samples.push(s);
      if (samples.length > HISTORY) samples.shift();
    }
    const rates = samples.slice(1);
    const cur = rates[rates.length - 1] || { in: 0, out: 0, bp: 0 };
    const chart = svg("svg", { width: W, height: H, class: "throughput-chart", "data-task": t.id });
    chart.append(svg("text", { x: 6, y: 14 }, `Task ${t.id}: in ${fmt(cur.in)}/s · out ${fmt(cur.out)}/s · bp ${Math.round(cur.bp)}%`));
    const top = Math.max(1, ...rates.map((r) => Math.max(r.in, r.out)));
    const x = (i) => PAD + (W - 2 * PAD) * (rates.length > 1 ? i / (rates.length - 1) : 0);
    const y = (v, max) => H - PAD - (H - 2 * PAD) * v / max;
    const line = (cls, f, max) => svg("polyline", { class: cls, points: rates.map((r, i) => `${x(i)},${y(f(r), max)}`).join(" ") });
    if (rates.length) {
      chart.append(line("bp", (r) => r.bp, 100));
      chart.append(line("in", (r) => r.in, top));
      chart.append(line("out", (r) => r.out, top));
    }
    chart.append(svg("text", { x: PAD, y: H - 6 }, `${rates.length} samples · top ${fmt(top)}/s`));
    return chart;
  });
  $("throughput").replaceChildren(...charts);
}

// ---- wiring --------------------------------------------------------------

$("login-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const token = $("token").value.trim();
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  $("token").value = "";
  refresh();
});

$("logout").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  clearTimeout(timer);
  showLogin("The token was forgotten.");
});

$("cancel").addEventListener("click", async () => {
  if (!view.job) return;
  try { await api("/v1/jobs/" + view.job + "/cancel", { method: "POST" }); } catch (err) { $("job-error").textContent = err.message; }
  refresh();
});

for (const [button, stop] of [["savepoint", false], ["stop-savepoint", true]]) {
  $(button).addEventListener("click", async () => {
    if (!view.job) return;
    try {
      await api("/v1/jobs/" + view.job + "/savepoints", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ stop }),
      });
    } catch (err) { $("job-error").textContent = err.message; }
    refresh();
  });
}

window.addEventListener("hashchange", route);
route();
