"use strict";
const ROOT = __ROOT_JSON__;
const $ = (id) => document.getElementById(id);
const state = { tables: [], table: null, view: null, viewRb: null, mark: null, run: [], ranked: 0, layout: null,
                asked: 0 };

// -- the API ----------------------------------------------------------------------------
async function api(path, options) {
  const response = await fetch(ROOT + path, options);
  let data = null;
  try { data = await response.json(); } catch (e) { /* not JSON */ }
  if (!response.ok) {
    const message = data && data.error ? data.error.message : response.status + " " + response.statusText;
    throw new Error(message);
  }
  return data;
}

function showError(message) { $("error").textContent = message || ""; }

function tableLabel(t) {
  return t.measure + (t.rb_counts ? " rb=(" + t.rb_counts.join(",") + ")" : "");
}

function decimalsOf(text) {     // decimals a number is written with: 0.3333 -> 4, 0.5000 -> 4, 12 -> 0
  const m = /^[-+]?\d*(?:\.(\d*))?$/.exec(text);
  return m ? (m[1] || "").length : null;
}

function isTruncated(t) {        // rankings of 0..N degrees: more runs than REL^N
  return t.n_runs > Math.pow(t.rel.length, t.n) * (1 + 1e-9);
}

// rb as typed ("5", "3,2", "(3,2)") -> null, an integer or a list of integers
function parseRb(text) {
  text = text.trim();
  if (!text) return null;
  const bracketed = /^[(\[].*[)\]]$/.test(text);
  const inner = bracketed ? text.slice(1, -1) : text;
  const parts = inner.split(",").map((p) => p.trim()).filter((p) => p !== "");
  if (!parts.length || !parts.every((p) => /^\d+$/.test(p))) {
    throw new Error("rb must be an integer (the topic's recall base) or per-grade counts like 3,2");
  }
  const counts = parts.map(Number);
  return counts.length > 1 || bracketed || inner.includes(",") ? counts : counts[0];
}

// -- the tables -------------------------------------------------------------------------
async function loadTables() {
  const data = await api("/v1/tables");
  state.tables = data.tables;
  $("store-info").textContent = data.tables.length + " table" + (data.tables.length === 1 ? "" : "s")
    + " (store format " + data.store.format_version + ", irscale " + (data.store.generator_version || "?") + ")";
  const body = $("tables").tBodies[0];
  const select = $("table");
  data.tables.forEach((t, i) => {
    const row = body.insertRow();
    row.dataset.table = String(i);
    const rb = t.rb_counts ? "counts (" + t.rb_counts.join(",") + ")" : (t.rb_dependent ? "1.." + t.n : "none");
    const cells = [tableLabel(t), (t.names || []).join(", "), t.n, "{" + t.rel.join(",") + "}",
                   Number(t.n_runs).toLocaleString("en"), Number(t.n_distinct).toLocaleString("en"), rb, t.tie_method];
    cells.forEach((text, j) => {
      const cell = row.insertCell();
      cell.textContent = String(text);
      if (j === 2 || j === 4 || j === 5) cell.className = "num";
    });
    row.addEventListener("click", () => { select.value = String(i); chooseTable(i); });
    const option = document.createElement("option");
    option.value = String(i);
    option.textContent = tableLabel(t);
    select.appendChild(option);
  });
  if (data.tables.length) chooseTable(0);
}

function chooseTable(i) {
  const t = state.tables[i];
  state.table = t;
  for (const row of $("tables").tBodies[0].rows) row.classList.toggle("selected", row.dataset.table === String(i));
  const rb = $("rb");
  if (t.rb_counts) {
    rb.disabled = false;
    rb.value = t.rb_counts.join(",");
    $("rb-hint").textContent = "per-grade counts c_1..c_" + (t.rel.length - 1);
  } else if (t.rb_dependent) {
    rb.disabled = false;
    rb.value = String(t.n);
    $("rb-hint").textContent = "recall base >= 1 (" + t.n + " and more: the common scale)";
  } else {
    rb.disabled = true;
    rb.value = "";
    $("rb-hint").textContent = "no recall base";
  }
  state.run = new Array(t.n).fill(0);
  drawBoxes();
  for (const id of ["res-rank", "res-k", "res-scaled"]) $(id).textContent = "\u2013";
  $("res-what").textContent = "";
  plot();
}

// -- the view ---------------------------------------------------------------------------
async function plot() {
  const t = state.table;
  if (!t) return;
  showError("");
  let rb;
  try { rb = t.rb_dependent ? parseRb($("rb").value) : null; } catch (e) { showError(e.message); return; }
  const query = new URLSearchParams({ measure: t.measure, points: $("points").value,
                                      bins: $("bins").value || "40", gaps: $("gap-scale").value });
  if (rb !== null) query.set("rb", Array.isArray(rb) ? rb.join(",") : String(rb));
  document.body.dataset.plotted = "";
  const asked = ++state.asked;
  try {
    const view = await api("/v1/table?" + query.toString());
    if (asked !== state.asked) return;             // another view was asked for meanwhile
    state.view = view;
    state.viewRb = rb;
    state.mark = null;
    describe(view);
    draw();
    document.body.dataset.plotted = view.measure + "|" + JSON.stringify(view.rb);
  } catch (e) {
    if (asked !== state.asked) return;
    state.view = null;
    draw();
    showError(e.message);
  }
}

function fmt(x, digits) {
  if (x === null || x === undefined) return "\u2013";
  if (x === 0) return "0";
  const a = Math.abs(x);
  return a >= 1e-3 && a < 1e6 ? String(Number(x.toPrecision(digits || 6))) : x.toExponential((digits || 6) - 1);
}

function describe(v) {
  const rb = v.rb === null ? "" : ", rb = " + (Array.isArray(v.rb) ? "(" + v.rb.join(",") + ")" : v.rb);
  $("summary").textContent = v.measure + rb + ": K = " + v.k.toLocaleString("en") + " distinct values over "
    + v.n_runs.toLocaleString("en") + " runs, from " + fmt(v.value_lo[0]) + " to " + fmt(v.value_hi[v.points - 1])
    + (v.exact ? "; every rank drawn." : "; " + v.points + " bins of consecutive ranks drawn (smallest and largest "
       + "value of each).") + " Dashed: equally spaced values.";
  const g = v.gaps;
  $("gap-summary").textContent = "Gaps between consecutive values: " + (g.sampled
    ? g.used.toLocaleString("en") + " of " + g.total.toLocaleString("en") + " (64 windows of consecutive ranks)"
    : "all " + g.total.toLocaleString("en")) + "; smallest " + fmt(g.min) + ", median " + fmt(g.median)
    + ", largest " + fmt(g.max) + (g.zero ? "; " + g.zero + " of 0 (closer than float64 tells)" : "")
    + ". Dashed: the gap of equal spacing.";
}

// -- drawing ----------------------------------------------------------------------------
function niceTicks(lo, hi, count) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const step0 = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * step0).find((s) => s >= raw) || 10 * step0;
  const ticks = [];
  for (let x = Math.ceil(lo / step) * step; x <= hi + step * 1e-9; x += step) {
    ticks.push(Math.abs(x) < step * 1e-9 ? 0 : x);
  }
  return ticks;
}

function canvasContext(canvas) {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth, height = canvas.clientHeight;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  ctx.font = "12px system-ui, sans-serif";
  return { ctx, width, height };
}

function axes(ctx, box, xs, ys, xTicks, yTicks, xLabel, yLabel, xText, yText) {
  ctx.strokeStyle = "#e6e9ee";
  ctx.lineWidth = 1;
  ctx.fillStyle = "#5b6575";
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  for (const t of xTicks) {
    const x = Math.round(xs(t)) + 0.5;
    ctx.beginPath(); ctx.moveTo(x, box.top); ctx.lineTo(x, box.bottom); ctx.stroke();
    ctx.fillText(xText(t), x, box.bottom + 5);
  }
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (const t of yTicks) {
    const y = Math.round(ys(t)) + 0.5;
    ctx.beginPath(); ctx.moveTo(box.left, y); ctx.lineTo(box.right, y); ctx.stroke();
    ctx.fillText(yText(t), box.left - 6, y);
  }
  ctx.strokeStyle = "#8a93a3";
  ctx.strokeRect(box.left + 0.5, box.top + 0.5, box.right - box.left, box.bottom - box.top);
  ctx.textAlign = "center";
  ctx.textBaseline = "bottom";
  ctx.fillText(xLabel, (box.left + box.right) / 2, box.bottom + 38);
  ctx.save();
  ctx.translate(14, (box.top + box.bottom) / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textBaseline = "middle";
  ctx.fillText(yLabel, 0, 0);
  ctx.restore();
}

function plotScales(v, width, height) {
  const box = { left: 72, right: width - 16, top: 14, bottom: height - 44 };
  const x0 = v.k > 1 ? 1 : 0.5, x1 = v.k > 1 ? v.k : 1.5;
  let y0 = v.value_lo[0], y1 = v.value_hi[v.points - 1];
  if (!(y1 > y0)) { y0 -= 0.5; y1 += 0.5; }
  const pad = (y1 - y0) * 0.04;
  y0 -= pad; y1 += pad;
  const xs = (r) => box.left + (r - x0) / (x1 - x0) * (box.right - box.left);
  const ys = (y) => box.bottom - (y - y0) / (y1 - y0) * (box.bottom - box.top);
  return { box, x0, x1, y0, y1, xs, ys };
}

function draw() {
  drawPlot();
  drawGaps();
}

function drawPlot() {
  const { ctx, width, height } = canvasContext($("plot"));
  const v = state.view;
  state.layout = null;
  if (!v) return;
  const s = plotScales(v, width, height);
  state.layout = s;
  const xTicks = niceTicks(s.x0, s.x1, 8).filter((t) => t >= 1 && Number.isInteger(t) || v.k === 1);
  axes(ctx, s.box, s.xs, s.ys, xTicks, niceTicks(s.y0, s.y1, 6), "unq rank (1.." + v.k.toLocaleString("en") + ")",
       "value", (t) => t.toLocaleString("en"), (t) => fmt(t, 4));
  ctx.save();
  ctx.beginPath();
  ctx.rect(s.box.left, s.box.top, s.box.right - s.box.left, s.box.bottom - s.box.top);
  ctx.clip();
  // equally spaced values: the straight line from the smallest to the largest
  ctx.setLineDash([6, 4]);
  ctx.strokeStyle = "#9aa3b2";
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(s.xs(1), s.ys(v.value_lo[0]));
  ctx.lineTo(s.xs(v.k), s.ys(v.value_hi[v.points - 1]));
  ctx.stroke();
  ctx.setLineDash([]);
  // the values: through (rank_lo, value_lo) and (rank_hi, value_hi) of every bin
  ctx.strokeStyle = getComputedStyle(document.documentElement).getPropertyValue("--series").trim();
  ctx.fillStyle = ctx.strokeStyle;
  ctx.lineWidth = 2;
  ctx.beginPath();
  for (let i = 0; i < v.points; i++) {
    const a = [s.xs(v.rank_lo[i]), s.ys(v.value_lo[i])];
    if (i === 0) ctx.moveTo(a[0], a[1]); else ctx.lineTo(a[0], a[1]);
    if (v.rank_hi[i] !== v.rank_lo[i]) ctx.lineTo(s.xs(v.rank_hi[i]), s.ys(v.value_hi[i]));
  }
  ctx.stroke();
  if (v.exact && v.k <= 400) {
    for (let i = 0; i < v.points; i++) {
      ctx.beginPath();
      ctx.arc(s.xs(v.rank_lo[i]), s.ys(v.value_lo[i]), 2.5, 0, 2 * Math.PI);
      ctx.fill();
    }
  }
  // the point ranked last
  const m = state.mark;
  if (m) {
    const x = s.xs(m.rank), y = s.ys(m.value);
    ctx.strokeStyle = "#d62728";
    ctx.setLineDash([3, 3]);
    ctx.lineWidth = 1;
    ctx.beginPath(); ctx.moveTo(x, s.box.bottom); ctx.lineTo(x, y); ctx.lineTo(s.box.left, y); ctx.stroke();
    ctx.setLineDash([]);
    ctx.lineWidth = 2.5;
    ctx.beginPath(); ctx.arc(x, y, 7, 0, 2 * Math.PI); ctx.stroke();
    ctx.fillStyle = "#d62728";
    ctx.textAlign = x > (s.box.left + s.box.right) / 2 ? "right" : "left";
    ctx.textBaseline = "bottom";
    ctx.font = "bold 12px system-ui, sans-serif";
    const at = x + (ctx.textAlign === "left" ? 10 : -10);
    ctx.strokeStyle = "#ffffff";
    ctx.lineWidth = 4;
    ctx.strokeText(m.label, at, y - 8);
    ctx.fillText(m.label, at, y - 8);
  }
  ctx.restore();
}

function drawGaps() {
  const { ctx, width, height } = canvasContext($("gaps"));
  const v = state.view;
  if (!v) return;
  const g = v.gaps;
  const box = { left: 72, right: width - 16, top: 12, bottom: height - 44 };
  if (!g.counts.length) {
    ctx.fillStyle = "#5b6575";
    ctx.textAlign = "center";
    ctx.fillText(v.k > 1 ? "no positive gap" : "one value: no gap", width / 2, height / 2);
    return;
  }
  const log = g.scale === "log";
  const tx = (e) => log ? Math.log10(e) : e;
  const a = tx(g.edges[0]), b = tx(g.edges[g.edges.length - 1]);
  const top = Math.max(...g.counts) * 1.08;
  const xs = (u) => box.left + (u - a) / (b - a) * (box.right - box.left);
  const ys = (c) => box.bottom - c / top * (box.bottom - box.top);
  let xTicks, xText;
  if (log && Math.floor(b) - Math.ceil(a) >= 1) {
    xTicks = [];
    const stride = Math.max(1, Math.ceil((Math.floor(b) - Math.ceil(a) + 1) / 10));
    for (let p = Math.ceil(a); p <= Math.floor(b); p += stride) xTicks.push(p);
    xText = (p) => "1e" + p;
  } else {
    xTicks = niceTicks(a, b, 6);
    xText = log ? (u) => fmt(Math.pow(10, u), 3) : (u) => fmt(u, 4);
  }
  const yTicks = niceTicks(0, top, 4).filter((t) => Number.isInteger(t));
  axes(ctx, box, xs, ys, xTicks, yTicks, "gap between consecutive values" + (log ? " (log scale)" : ""),
       "gaps", xText, (t) => t.toLocaleString("en"));
  ctx.fillStyle = getComputedStyle(document.documentElement).getPropertyValue("--bars").trim();
  for (let i = 0; i < g.counts.length; i++) {
    if (!g.counts[i]) continue;
    const x0 = xs(tx(g.edges[i])), x1 = xs(tx(g.edges[i + 1]));
    const y = ys(g.counts[i]);
    ctx.fillRect(x0 + 0.5, y, Math.max(1, x1 - x0 - 1), box.bottom - y);
  }
  // the gap equally spaced values would have
  if (v.k > 1) {
    const even = (v.value_hi[v.points - 1] - v.value_lo[0]) / (v.k - 1);
    const u = tx(even);
    if (even > 0 && u >= a && u <= b) {
      ctx.strokeStyle = "#1d2430";
      ctx.setLineDash([6, 4]);
      ctx.beginPath(); ctx.moveTo(xs(u) + 0.5, box.top); ctx.lineTo(xs(u) + 0.5, box.bottom); ctx.stroke();
      ctx.setLineDash([]);
    }
  }
}

// value of a rank from the view: exact when every rank is drawn, else within its bin
function valueOfRank(rank) {
  const v = state.view;
  let lo = 0, hi = v.points - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (v.rank_hi[mid] < rank) lo = mid + 1; else hi = mid;
  }
  if (rank === v.rank_lo[lo]) return { value: v.value_lo[lo], exact: true, bin: lo };
  if (rank === v.rank_hi[lo]) return { value: v.value_hi[lo], exact: true, bin: lo };
  const f = (rank - v.rank_lo[lo]) / (v.rank_hi[lo] - v.rank_lo[lo]);
  return { value: v.value_lo[lo] + f * (v.value_hi[lo] - v.value_lo[lo]), exact: false, bin: lo };
}

function rankUnder(event) {
  const s = state.layout, v = state.view;
  if (!s || !v) return null;
  const rect = $("plot").getBoundingClientRect();
  const x = event.clientX - rect.left;
  if (x < s.box.left || x > s.box.right) return null;
  const r = Math.round(s.x0 + (x - s.box.left) / (s.box.right - s.box.left) * (s.x1 - s.x0));
  return Math.min(v.k, Math.max(1, r));
}

// -- ranking ----------------------------------------------------------------------------
function degreeColor(d, top) {
  if (d < 0) return null;
  const f = top > 0 ? d / top : 0;
  const light = Math.round(100 - 62 * f);
  return "hsl(140, " + (f > 0 ? 55 : 0) + "%, " + light + "%)";
}

function drawBoxes() {
  const t = state.table, holder = $("boxes");
  holder.textContent = "";
  if (!t) return;
  const top = t.rel.length - 1;
  state.run.forEach((d, i) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "box" + (d < 0 ? " end" : "");
    button.dataset.index = String(i);
    button.textContent = d < 0 ? "\u00b7" : String(d);
    button.title = "r_" + (i + 1) + (d < 0 ? ": end of the ranking" : " = " + d);
    const color = degreeColor(d, top);
    if (color) {
      button.style.background = color;
      button.style.color = d / Math.max(top, 1) > 0.6 ? "#fff" : "#1d2430";
    }
    button.addEventListener("click", (event) => {
      const lowest = isTruncated(t) ? -1 : 0;
      const step = event.shiftKey ? -1 : 1;
      let next = state.run[i] + step;
      if (next > top) next = lowest;
      if (next < lowest) next = top;
      state.run[i] = next;
      drawBoxes();
    });
    holder.appendChild(button);
  });
}

async function rank(what) {
  const t = state.table, v = state.view;
  if (!t) return;
  showError("");
  let body;
  if (what === "run") {
    let run = state.run.slice();
    if (isTruncated(t)) { const end = run.indexOf(-1); if (end >= 0) run = run.slice(0, end); }
    body = { measure: t.measure, runs: [run] };
  } else {
    const text = $("value").value.trim();
    const x = Number(text);
    if (!text || !Number.isFinite(x)) { showError("type a number, e.g. 0.25"); return; }
    body = { measure: t.measure, values: [x] };
    if ($("nearest").checked) {
      const d = decimalsOf(text);
      if (d === null) { showError("a rounded value is written with its decimals, e.g. 0.3333"); return; }
      body.decimals = d;
    }
  }
  let rb;
  try { rb = t.rb_dependent ? parseRb($("rb").value) : null; } catch (e) { showError(e.message); return; }
  if (rb !== null) body.rb = rb;
  try {
    const answer = await api("/v1/rank", { method: "POST", headers: { "Content-Type": "application/json" },
                                           body: JSON.stringify(body) });
    const r = answer.rank[0];
    $("res-rank").textContent = String(r);
    $("res-k").textContent = String(answer.k);
    $("res-scaled").textContent = String(answer.scaled[0]);
    $("res-what").textContent = "(" + (what === "run" ? "run [" + body.runs[0].join(",") + "]"
                                                      : "value " + body.values[0]) + ", " + answer.measure
      + (answer.rb === null ? "" : ", rb = " + JSON.stringify(answer.rb)) + ")";
    state.ranked += 1;
    document.body.dataset.ranked = String(state.ranked);
    if (v && v.k === answer.k && JSON.stringify(state.viewRb) === JSON.stringify(rb)) {
      const y = what === "value" ? body.values[0] : valueOfRank(r).value;
      state.mark = { rank: r, value: y, label: "rank " + r };
      drawPlot();
    }
  } catch (e) {
    showError(e.message);
  }
}

// -- wiring -----------------------------------------------------------------------------
$("view-form").addEventListener("submit", (event) => { event.preventDefault(); plot(); });
$("table").addEventListener("change", () => chooseTable(Number($("table").value)));
for (const id of ["rb", "points", "bins", "gap-scale"]) $(id).addEventListener("change", plot);
$("rank-run").addEventListener("click", () => rank("run"));
$("clear-run").addEventListener("click", () => { if (state.table) { state.run.fill(0); drawBoxes(); } });
$("rank-value").addEventListener("click", () => rank("value"));
$("value").addEventListener("keydown", (event) => { if (event.key === "Enter") rank("value"); });
$("plot").addEventListener("mousemove", (event) => {
  const r = rankUnder(event);
  if (r === null) { $("hover").textContent = ""; return; }
  const at = valueOfRank(r);
  $("hover").textContent = "rank " + r.toLocaleString("en") + ": value " + (at.exact ? String(at.value)
    : "between " + fmt(state.view.value_lo[at.bin]) + " and " + fmt(state.view.value_hi[at.bin]));
});
$("plot").addEventListener("click", (event) => {
  const r = rankUnder(event);
  if (r === null) return;
  const at = valueOfRank(r);
  if (at.exact) { $("value").value = String(at.value); rank("value"); }
});
window.addEventListener("resize", draw);
loadTables().catch((e) => showError("cannot list the tables: " + e.message));
