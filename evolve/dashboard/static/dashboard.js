// evoforge dashboard: draws each page from its JSON (#page-data) and keeps live pages fresh.
// Untrusted text (sources, model answers, errors) is only ever set with textContent or given
// to Plotly as data; no innerHTML, no inline script (the Content-Security-Policy forbids it).
"use strict";

(function () {
  const STATUS_COLORS = {
    ok: "#2ca02c", incorrect: "#ff7f0e", edit_error: "#9467bd", syntax_error: "#8c564b",
    compile_error: "#e377c2", runtime_error: "#d62728", timeout: "#bcbd22",
    memory_limit: "#17becf", disk_limit: "#9edae5", crashed: "#7f7f7f", sandbox_violation: "#000000",
    duplicate: "#c7c7c7",
  };
  const PLOT_CONFIG = { displaylogo: false, responsive: true };
  const BASE_LAYOUT = {
    margin: { l: 60, r: 20, t: 40, b: 50 }, font: { size: 12 }, hovermode: "closest",
    legend: { orientation: "h", y: -0.2 },
  };

  // --- small DOM helpers (text only) -----------------------------------------------------
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = String(value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  const link = (href, text) => el("a", { href }, text);
  const runHref = (run) => "/runs/" + encodeURIComponent(run);
  const programHref = (run, id) => runHref(run) + "/programs/" + encodeURIComponent(id);
  function fmt(value, digits) {
    if (value === null || value === undefined) return "—";
    if (typeof value !== "number") return String(value);
    if (Number.isInteger(value)) return String(value);
    return String(Number(value.toPrecision(digits || 10)));
  }
  const when = (t) => (t ? new Date(t * 1000).toLocaleString() : "—");
  const money = (v) => (v === null || v === undefined ? "unknown" : "$" + v.toFixed(4));
  function table(id, headers, rows) {
    const node = document.getElementById(id);
    if (!node) return;
    const head = node.tHead || node.createTHead();
    head.replaceChildren(el("tr", {}, ...headers.map((h) => el("th", { text: h }))));
    const body = node.tBodies[0] || node.createTBody();
    body.replaceChildren(...rows.map((cells) => el("tr", {}, ...cells.map((c) => el("td", {}, c)))));
  }
  function statusBadge(status) {
    return el("span", { class: "status status-" + status, text: status });
  }
  const objectiveLabel = (d) => (d.objective ? d.objective + " (" + d.arrow + ")" : "score");
  function plot(id, traces, layout) {
    const node = document.getElementById(id);
    if (!node || typeof Plotly === "undefined") return null;
    Plotly.react(node, traces, Object.assign({}, BASE_LAYOUT, layout), PLOT_CONFIG);
    return node;
  }
  function onClickGo(node, hrefOf) {
    if (!node || node.dataset.clickBound) return;
    node.dataset.clickBound = "1";
    node.on("plotly_click", (event) => {
      const point = event.points && event.points[0];
      const href = point && hrefOf(point);
      if (href) window.location.href = href;
    });
  }

  // --- pages ----------------------------------------------------------------------------
  const render = {};

  render.runs = function (d) {
    drawSuites(d.suites);
    const body = document.querySelector("#runs-table tbody");
    document.getElementById("no-runs").hidden = d.runs.length > 0;
    body.replaceChildren(...d.runs.map((r) => el("tr", { "data-run": r.id },
      el("td", {}, el("input", { type: "checkbox", name: "run", value: r.id, "aria-label": "compare " + r.id })),
      el("td", {}, link(runHref(r.id), r.id)),
      el("td", { text: r.problem }),
      el("td", {}, statusBadge(r.status)),
      el("td", { class: "num evaluations", text: r.evaluations + (r.budget ? " / " + r.budget : "") }),
      el("td", { class: "num", text: r.budget_used === null ? "—" : Math.round(100 * r.budget_used) + "%" }),
      el("td", { class: "num best", text: r.objective ? r.objective + " " + fmt(r.best) + " (" + r.arrow + ")" : fmt(r.best) }),
      el("td", { class: "num", text: money(r.cost_usd) }),
      el("td", { text: when(r.created_at) }),
      el("td", { text: when(r.updated_at) }),
    )));
  };

  const suiteHref = (id) => "/suites/" + encodeURIComponent(id);
  const ratio = (v) => (v === null || v === undefined ? "—" : Number(v).toPrecision(4) + "x");

  function drawSuites(suites) {
    const section = document.getElementById("suites");
    if (!section) return;
    section.hidden = !suites || suites.length === 0;
    if (section.hidden) return;
    table("suites-table", ["suite", "name", "status", "tasks", "evaluations", "allocation", "vs seeds (geomean)"],
      suites.map((s) => [link(suiteHref(s.id), s.id), s.name, statusBadge(s.status), s.tasks,
        s.spent + " / " + s.budget, s.allocation, ratio(s.geomean_vs_seed)]));
  }

  render.suite = function (d) {
    const cards = [
      ["status", statusBadge(d.status)],
      ["evaluations", el("span", { id: "card-evaluations", text: d.spent + " / " + d.budget })],
      ["granted", String(d.granted)],
      ["allocation", d.allocation],
      ["tasks", String(d.tasks.length)],
      ["vs seeds (geometric mean)", el("span", { id: "card-geomean", text: ratio(d.geomean_vs_seed) })],
    ];
    document.getElementById("cards").replaceChildren(...cards.map(([name, value]) =>
      el("div", { class: "card" }, el("div", { class: "card-name", text: name }), el("div", { class: "card-value" }, value))));
    document.getElementById("stop-reason").textContent = d.stop_reason ? "Last stop: " + d.stop_reason : "";
    plot("chart-allocation", d.caps.map((t) => ({
      x: t.points.map((p) => p[0]), y: t.points.map((p) => p[2]), name: t.problem,
      type: "scatter", mode: "lines+markers", line: { shape: "hv", width: 2 },
    })), { title: { text: "Evaluations granted to each task, decision by decision" },
      xaxis: { title: { text: "allocation decision" } }, yaxis: { title: { text: "evaluations granted" } } });
    plot("chart-spent", [
      { x: d.tasks.map((t) => t.problem), y: d.tasks.map((t) => t.spent), name: "spent", type: "bar" },
      { x: d.tasks.map((t) => t.problem), y: d.tasks.map((t) => t.vs_seed), name: "best / seed",
        type: "scatter", mode: "markers", yaxis: "y2", marker: { size: 10 } },
    ], { title: { text: "Evaluations spent and best over seed" }, barmode: "group",
      yaxis: { title: { text: "evaluations" } },
      yaxis2: { title: { text: "best / seed" }, overlaying: "y", side: "right" } });
    const baselines = Array.from(new Set(d.task_rows.flatMap((t) => Object.keys(t.speedups)))).sort();
    table("tasks-table", ["task", "status", "evaluations", "grants", "best", "vs seed",
      ...baselines.map((b) => "speedup vs " + b), "run"],
      d.task_rows.map((t) => [t.problem, statusBadge(t.status), t.spent + " / " + t.granted, t.grants,
        t.best_text, ratio(t.vs_seed), ...baselines.map((b) => ratio(t.speedups[b])),
        t.run_id ? link(runHref(t.run_id), t.run_id) : "—"]));
    const m = d.metrics;
    const rows = [["correct", m.correct + " / " + m.tasks]];
    for (const [b, shares] of Object.entries(m.fast_p)) {
      rows.push(["vs " + b + ": fast_p", Object.entries(shares).map(([p, v]) => "fast_" + p + " " + v.toFixed(3)).join(", ")]);
      rows.push(["vs " + b + ": geometric-mean speedup", ratio(m.geomean[b])]);
    }
    if (m.untimed) rows.push(["not timed", m.untimed]);
    table("metrics-table", ["", ""], rows);
    const names = Object.fromEntries(d.tasks.map((t) => [t.ord, t.problem]));
    table("grants-table", ["#", "task", "evaluations", "cap", "spent then", "best / seed then", "why"],
      d.grants.slice(-20).reverse().map((g) => ["#" + g.seq, names[g.ord], (g.evaluations > 0 ? "+" : "") + g.evaluations,
        g.cap, g.spent, ratio(Math.exp(g.gain)), g.why]));
  };

  render.run = function (d) {
    const label = objectiveLabel(d);
    const budget = d.budget ? " / " + d.budget : "";
    const cards = [
      ["status", statusBadge(d.status)],
      ["evaluations", el("span", { id: "card-evaluations", text: d.evaluations + budget })],
      ["best " + label, el("span", { id: "card-best", text: fmt(d.best) })],
      ["best at evaluation", fmt(d.best_evaluation)],
      ["grid", d.grid.elites + (d.grid.cells ? " / " + d.grid.cells + " cells" : " cells")],
      ["QD score", fmt(d.grid.qd_score, 6)],
      ["edits saved by tolerant matching", el("span", { id: "card-edits-saved",
        text: d.search.edits_saved + " / " + d.search.edits_applied,
        title: Object.entries(d.search.edit_matches).map(([k, v]) => k + " " + v).join(", ") })],
      ["duplicates (not evaluated)", el("span", { id: "card-novelty", text: d.novelty_rejected,
        title: (d.status_labels && d.status_labels.duplicate) || "candidates not evaluated (status duplicate)" })],
      ["model calls / evaluation", el("span", { id: "card-calls-per-evaluation",
        text: d.cost.calls_per_evaluation === null ? "—" : d.cost.calls_per_evaluation.toFixed(2),
        title: d.cost.calls + " calls (retries included) for " + d.cost.evaluations + " evaluations" })],
      ["calls wasted", el("span", { id: "card-wasted-calls", text: String(d.cost.wasted_calls),
        title: Object.entries(d.cost.wasted).map(([k, v]) => k.replace("_", " ") + " " + v).join(", ") })],
      ["evaluations / min", fmt(d.evaluations_per_minute, 3)],
      ["cost", money(d.cost_usd) + (d.unpriced_calls ? " + " + d.unpriced_calls + " unpriced" : "")],
      ["tokens in / out", d.tokens_in + " / " + d.tokens_out],
      ["started", when(d.created_at)],
      ["last update", when(d.updated_at)],
    ];
    document.getElementById("cards").replaceChildren(...cards.map(([name, value]) =>
      el("div", { class: "card" }, el("div", { class: "card-name", text: name }), el("div", { class: "card-value" }, value))));
    document.getElementById("stop-reason").textContent = d.stop_reason ? "Last stop: " + d.stop_reason : "";

    // Best over evaluations: steps, overall and per island, drawn to the last evaluation.
    const stepTrace = (steps, name, extra) => {
      const xs = steps.map((s) => s.evaluation);
      const ys = steps.map((s) => s.value);
      const ids = steps.map((s) => s.program_id);
      if (steps.length) { xs.push(d.evaluations); ys.push(ys[ys.length - 1]); ids.push(ids[ids.length - 1]); }
      return Object.assign({ x: xs, y: ys, customdata: ids, name, type: "scatter",
        mode: "lines+markers", line: { shape: "hv" }, marker: { size: 5 } }, extra);
    };
    const traces = [stepTrace(d.best_over_evaluations, "run", { line: { shape: "hv", width: 3, color: "#111" } })];
    for (const [island, steps] of Object.entries(d.island_best_over_evaluations)) {
      traces.push(stepTrace(steps, "island " + island, { line: { shape: "hv", width: 1 }, opacity: 0.8 }));
    }
    onClickGo(plot("chart-best", traces, {
      title: { text: "Best " + label + " over evaluations" },
      xaxis: { title: { text: "evaluations" } }, yaxis: { title: { text: d.objective || "score" } },
    }), (p) => p.customdata && programHref(d.id, p.customdata));

    const minutes = d.bucket_s / 60;
    const times = d.buckets.map((b) => new Date((b.start + d.bucket_s / 2) * 1000));
    plot("chart-rate", [{ x: times, y: d.buckets.map((b) => b.evaluations / minutes), type: "bar",
      name: "evaluations per minute", marker: { color: "#1f77b4" } }], {
      title: { text: "Evaluations per minute (" + fmt(d.bucket_s) + " s buckets)" },
      xaxis: { type: "date" }, yaxis: { title: { text: "evaluations / min" } }, showlegend: false,
    });
    const statuses = Array.from(new Set(d.buckets.flatMap((b) => Object.keys(b.statuses)))).sort();
    const labels = d.status_labels || {};
    plot("chart-statuses", statuses.map((s) => ({ x: times, y: d.buckets.map((b) => b.statuses[s] || 0),
      type: "bar", name: labels[s] ? s + " (" + labels[s] + ")" : s, marker: { color: STATUS_COLORS[s] } })), {
      title: { text: "Attempts by status over time" }, barmode: "stack", xaxis: { type: "date" },
      yaxis: { title: { text: "attempts" } },
    });
    const models = d.models.map((m) => m.model);
    plot("chart-models", [
      { x: models, y: d.models.map((m) => m.calls), type: "bar", name: "answered calls", marker: { color: "#1f77b4" } },
      { x: models, y: d.models.map((m) => m.retries + m.errors), type: "bar", name: "retries + failed", marker: { color: "#d62728" } },
      { x: models, y: d.models.map((m) => m.cost_usd), type: "scatter", mode: "markers", yaxis: "y2",
        name: "cost (USD)", marker: { size: 12, symbol: "diamond", color: "#ff7f0e" } },
    ], {
      title: { text: "Model calls and cost per model" }, barmode: "group",
      yaxis: { title: { text: "calls" } },
      yaxis2: { title: { text: "USD" }, overlaying: "y", side: "right", rangemode: "tozero" },
    });

    table("top-table", ["program", label, "seq", "island", "generation", "edit", "model"],
      d.top.map((p) => [link(programHref(d.id, p.id), p.id), fmt(p.value), p.seq, p.island,
        p.generation, p.edit_kind, p.model || "—"]));
    table("islands-table", ["island", "best " + label, "elites", "resets", "migrations", "grid"],
      d.islands.map((i) => [i.island, fmt(i.best), i.elites, i.resets, i.migrations,
        link(runHref(d.id) + "/grid?island=" + i.island, "grid")]));
    table("models-table", ["model", "calls", "retries", "failed", "tokens in", "tokens out", "cost", "mean latency"],
      d.models.map((m) => [m.model, m.calls, m.retries, m.errors, m.tokens_in, m.tokens_out,
        money(m.cost_usd) + (m.unpriced ? " (+" + m.unpriced + " unpriced)" : ""),
        m.mean_latency_s === null ? "—" : m.mean_latency_s.toFixed(2) + " s"]));
  };

  render.grid = function (d) {
    const label = objectiveLabel(d);
    const note = d.elites + " elites" + (d.cells ? " in " + d.cells + " cells" : "") +
      (d.folded.length ? "; folded over " + d.folded.join(", ") + " (each square shows the best)" : "");
    document.getElementById("grid-note").textContent = note;
    const hover = d.z.map((row, r) => row.map((v, c) => v === null ? "empty" :
      label + " " + fmt(v) + "<br>" + d.ids[r][c]));
    const node = plot("chart-grid", [{
      type: "heatmap", z: d.z, customdata: d.ids, text: hover, hoverinfo: "text",
      x: d.x.labels.map(String), y: d.y ? d.y.labels : [""], colorscale: "Viridis",
      reversescale: d.direction === "minimize", colorbar: { title: { text: d.objective || "score" } },
      xgap: 1, ygap: 1, hoverongaps: false,
    }], {
      title: { text: (d.island === -1 ? "Global grid" : "Island " + d.island) + ": best " + label + " per cell" },
      xaxis: { title: { text: d.x.name }, type: "category" },
      yaxis: { title: { text: d.y ? d.y.name : "" }, type: "category" },
    });
    onClickGo(node, (p) => p.customdata && programHref(d.run.id, p.customdata));
  };

  render.pareto = function (d) {
    if (d.single) return;
    const xl = d.x.name + " (" + d.x.arrow + ")", yl = d.y.name + " (" + d.y.arrow + ")";
    document.getElementById("pareto-note").textContent = d.front.length + " programs on the front of " +
      d.programs + " ok programs" + (d.points.length < d.programs ? " (" + d.points.length + " drawn)" : "") +
      ". Click a point to open its program.";
    const node = plot("chart-pareto", [
      { x: d.points.map((p) => p[1]), y: d.points.map((p) => p[2]), customdata: d.points.map((p) => p[0]),
        type: d.points.length > 5000 ? "scattergl" : "scatter", mode: "markers", name: "programs",
        marker: { color: "#bbb", size: 5 } },
      { x: d.front.map((p) => p[1]), y: d.front.map((p) => p[2]), customdata: d.front.map((p) => p[0]),
        type: "scatter", mode: "lines+markers", name: "Pareto front", line: { shape: "hv" },
        marker: { color: "#d62728", size: 9 } },
    ], { title: { text: "Pareto front: " + xl + " against " + yl }, xaxis: { title: { text: xl } },
      yaxis: { title: { text: yl } } });
    onClickGo(node, (p) => p.customdata && programHref(d.run.id, p.customdata));
    table("front-table", ["program", xl, yl], d.front.map((p) =>
      [link(programHref(d.run.id, p[0]), p[0]), fmt(p[1]), fmt(p[2])]));
  };

  render.failures = function (d) {
    document.getElementById("failures-note").textContent = d.failed + " of " + d.attempts +
      " attempts failed, in " + d.groups.length + " groups of the same status and message (numbers masked as #).";
    const stop = document.getElementById("stop-reason");
    if (stop) {
      stop.hidden = !d.stop_reason;
      stop.textContent = d.stop_reason ? "The run failed: " + d.stop_reason : "";
    }
    const models = document.getElementById("model-errors");
    if (models) {
      models.hidden = !d.model_errors.length;
      document.getElementById("model-errors-note").textContent = d.model_calls_failed +
        " model calls failed (no program came of them), in " + d.model_errors.length + " groups.";
      table("model-errors-table", ["count", "kind", "model", "message", "fix"],
        d.model_errors.map((m) => [m.count, m.kind, m.model,
          m.message.startsWith(m.model + ": ") ? m.message.slice(m.model.length + 2) : m.message, m.hint]));
    }
    const failed = Object.entries(d.statuses).filter(([s]) => s !== "ok");
    for (const id of ["chart-failures", "groups-table"]) {  // nothing to draw: no failed program
      const node = document.getElementById(id);
      if (node) node.hidden = !failed.length;
    }
    if (!failed.length) return;
    plot("chart-failures", [{ x: failed.map(([s]) => s), y: failed.map(([, n]) => n), type: "bar",
      marker: { color: failed.map(([s]) => STATUS_COLORS[s] || "#888") } }],
      { title: { text: "Failed attempts by status" }, showlegend: false });
    table("groups-table", ["count", "status", "message (numbers as #)", "latest example", "seq range"],
      d.groups.map((g) => [g.count, statusBadge(g.status), g.signature,
        el("div", {}, link(programHref(d.run.id, g.example_id), g.example_id), el("div", { class: "example", text: g.example })),
        g.first_seq + "–" + g.last_seq]));
  };

  render.lineage = function (d) {
    const byId = new Map(d.nodes.map((n) => [n.id, n]));
    const values = d.nodes.filter((n) => n.value !== null).map((n) => n.value);
    const low = values.length ? Math.min(...values) : 0, high = values.length ? Math.max(...values) : 1;
    const floor = low - 0.08 * ((high - low) || 1);
    const y = (n) => (n.value === null ? floor : n.value);
    const ex = [], ey = [];
    for (const n of d.nodes) {
      const parent = byId.get(n.parent_id);
      if (parent) { ex.push(parent.generation, n.generation, null); ey.push(y(parent), y(n), null); }
    }
    const group = (filter, name, marker) => {
      const nodes = d.nodes.filter(filter);
      return { x: nodes.map((n) => n.generation), y: nodes.map(y), customdata: nodes.map((n) => n.id),
        text: nodes.map((n) => n.id + " · seq " + n.seq + " · " + n.status + " · " + n.edit_kind +
          (n.model ? " · " + n.model : "") + (n.value === null ? "" : " · " + fmt(n.value))),
        hoverinfo: "text", type: "scatter", mode: "markers", name, marker };
    };
    const node = plot("chart-lineage", [
      { x: ex, y: ey, type: "scatter", mode: "lines", hoverinfo: "skip", name: "parent → child",
        line: { color: "#ccc", width: 1 } },
      group((n) => n.role === "descendant" && n.status === "ok", "descendants", { color: "#1f77b4", size: 7 }),
      group((n) => n.status !== "ok" && n.role !== "self", "failed", { color: "#d62728", size: 7, symbol: "x" }),
      group((n) => n.role === "ancestor" && n.status === "ok", "ancestors", { color: "#111", size: 10 }),
      group((n) => n.role === "self", "this program", { color: "#ff7f0e", size: 16, symbol: "star" }),
    ], { title: { text: "Lineage: " + objectiveLabel(d) + " by generation" },
      xaxis: { title: { text: "generation" } }, yaxis: { title: { text: d.objective || "score" } } });
    onClickGo(node, (p) => p.customdata && programHref(d.run.id, p.customdata));
    const chain = d.nodes.filter((n) => n.role !== "descendant").sort((a, b) => a.depth - b.depth);
    table("ancestry-table", ["step", "program", "seq", "status", objectiveLabel(d), "edit", "model"],
      chain.map((n, i) => [i, link(programHref(d.run.id, n.id), n.id), n.seq, statusBadge(n.status),
        fmt(n.value), n.edit_kind, n.model || "—"]));
  };

  render.compare = function (d) {
    const label = d.objective ? d.objective + " (" + (d.direction === "minimize" ? "min" : "max") + ")" : "score";
    plot("chart-compare", d.runs.map((r) => {
      const xs = r.best_over_evaluations.map((s) => s.evaluation), ys = r.best_over_evaluations.map((s) => s.value);
      if (xs.length) { xs.push(r.evaluations); ys.push(ys[ys.length - 1]); }
      return { x: xs, y: ys, name: r.id, type: "scatter", mode: "lines", line: { shape: "hv", width: 2 } };
    }), { title: { text: "Best " + label + " over evaluations" }, xaxis: { title: { text: "evaluations" } },
      yaxis: { title: { text: d.objective || "score" } } });
    const rows = [
      ["problem", ...d.runs.map((r) => r.problem)],
      ["status", ...d.runs.map((r) => r.status)],
      ["evaluations", ...d.runs.map((r) => r.evaluations + (r.budget ? " / " + r.budget : ""))],
      ["best " + label, ...d.runs.map((r) => fmt(r.best))],
      ...d.checkpoints.map((c) => ["after " + c + " evaluations", ...d.runs.map((r) => fmt(r.best_at[String(c)]))]),
    ];
    if (d.target !== null) rows.push(["evaluations to reach " + fmt(d.target), ...d.runs.map((r) => fmt(r.evaluations_to_reach_target))]);
    const statuses = Array.from(new Set(d.runs.flatMap((r) => Object.keys(r.statuses)))).sort();
    for (const s of statuses) rows.push([s, ...d.runs.map((r) => (r.statuses[s] || 0) + " (" + Math.round(100 * (r.status_shares[s] || 0)) + "%)")]);
    rows.push(["cost", ...d.runs.map((r) => money(r.cost_usd))]);
    rows.push(["tokens in / out", ...d.runs.map((r) => r.tokens_in + " / " + r.tokens_out)]);
    table("compare-table", ["", ...d.runs.map((r) => r.id)], rows.map((cells, i) =>
      i === 0 ? cells : cells));
    const head = document.querySelector("#compare-table thead tr");
    head.replaceChildren(el("th"), ...d.runs.map((r) => el("th", {}, link(runHref(r.id), r.id))));
  };

  render.program = function () {};
  render.prompts = function () {};  // rendered by the server; a live page reloads its data
  render.error = function () {};

  // --- start and live updates -------------------------------------------------------------
  function start() {
    const page = document.body.dataset.page;
    const data = JSON.parse(document.getElementById("page-data").textContent);
    const draw = render[page] || (() => {});
    draw(data);
    let stamp = JSON.stringify(data.stamp);
    const poll = Number(document.body.dataset.pollMs) || 0;
    const badge = document.getElementById("live");
    if (badge) badge.hidden = !data.live;
    if (!data.live || !poll) return;
    const api = "/api" + (window.location.pathname === "/" ? "/runs" : window.location.pathname) + window.location.search;
    const tick = async () => {
      const started = performance.now();
      let live = true;
      try {
        const response = await fetch(api, { cache: "no-store", headers: { accept: "application/json" } });
        if (response.ok) {
          const fresh = await response.json();
          const freshStamp = JSON.stringify(fresh.stamp);
          if (freshStamp !== stamp) { stamp = freshStamp; draw(fresh); }
          live = fresh.live;
        }
      } catch (error) {
        // the server may be restarting; try again later
      }
      if (badge) badge.hidden = !live;
      // A slow server (a huge archive) is asked less often.
      const delay = Math.max(poll, 5 * (performance.now() - started));
      if (live) window.setTimeout(tick, delay);
    };
    window.setTimeout(tick, poll);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
