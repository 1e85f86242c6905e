// The sweep page: run a sweep spec in the workbench and draw one outcome over two axes as heat maps.
"use strict";

const $ = (id) => document.getElementById(id);
let specs = {}, last = null;

async function api(path, body) {
  let resp;
  try {
    resp = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                              body: JSON.stringify(body || {})});
  } catch (e) { throw {text: "error: cannot reach the workbench server (is `umpire serve` still running?)"}; }
  let data;
  try { data = await resp.json(); } catch (e) { throw {text: `error: the server answered ${resp.status} without JSON`}; }
  if (!resp.ok) throw Object.assign(data.error || {text: `error ${resp.status}`}, {status: resp.status});
  return data;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  e.append(...children);
  return e;
}

function fillSpecs() {
  const pick = $("spec-pick");
  pick.replaceChildren();
  const mine = specs[$("ruleset").value] || {};
  for (const name of Object.keys(mine)) pick.append(el("option", {value: name, text: name}));
  pick.append(el("option", {value: "", text: "(your own)"}));
  $("spec-text").value = mine[pick.value] || "";
}

function showError(e) {
  const box = $("error");
  box.hidden = false;
  box.replaceChildren(el("div", {class: "error-head", text: e.status === 504 ? "Limit reached" : "Input error"}));
  box.append(el("pre", {class: "mono", text: e.text || String(e)}));
  if (e.status === 504) box.append(el("p", {text: "The cells finished before the limit are kept: run the sweep again to go on."}));
}

// viridis-like ramp for shares, red-white-blue for changes
function shareColour(x) {
  const stops = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  const t = Math.max(0, Math.min(1, x)) * (stops.length - 1), i = Math.min(stops.length - 2, Math.floor(t)), f = t - i;
  const c = stops[i].map((v, k) => Math.round(v + (stops[i + 1][k] - v) * f));
  return [`rgb(${c.join(",")})`, x < 0.6 ? "#fff" : "#000"];
}
function changeColour(x, limit) {
  const t = Math.max(-1, Math.min(1, x / limit));
  const c = t >= 0 ? [255 - 222 * t, 255 - 153 * t, 255 - 83 * t] : [255 + 77 * t, 255 + 255 * t, 255 + 255 * t];
  return [`rgb(${c.map(Math.round).join(",")})`, Math.abs(t) > 0.6 ? "#fff" : "#000"];
}

function draw() {
  const d = last, hm = d.heatmap;
  const maps = $("maps");
  maps.replaceChildren();
  if (!hm) { maps.append(el("p", {class: "muted", text: "The spec has no heatmap: {outcome, x, y}; the rows are in the CSV."})); return; }
  const axes = d.axes, X = axes.find((a) => a.name === hm.x), Y = axes.find((a) => a.name === hm.y);
  const fixed = {};
  for (const sel of $("fixed").querySelectorAll("select")) fixed[sel.dataset.axis] = sel.value;
  const index = new Map();
  for (const r of d.rows) index.set(r.overlay + "\u0000" + axes.map((a) => String(r.axes[a.name])).join("\u0000"), r);
  const rowAt = (overlay, x, y) => index.get(overlay + "\u0000" + axes.map((a) =>
    a === X ? String(x) : a === Y ? String(y) : fixed[a.name]).join("\u0000"));
  const overlays = d.overlays.map((o) => o.name);
  let limit = 0.01;
  for (const r of d.rows) if (r.change && r.status === "ok") limit = Math.max(limit, Math.abs(r.change[hm.outcome] || 0));
  const panels = overlays.map((o) => [o, "share"]).concat(overlays.slice(1).map((o) => [o, "change"]));
  for (const [overlay, kind] of panels) {
    const table = el("table", {class: "sweep-map"});
    table.append(el("caption", {text: kind === "share" ? `${overlay}: P(${hm.outcome})` : `change: ${overlay} − ${overlays[0]}`}));
    for (const y of [...Y.values].reverse()) {
      const tr = el("tr", {}, el("th", {text: String(y)}));
      for (const x of X.values) {
        const r = rowAt(overlay, x, y);
        const td = el("td");
        if (!r || r.status !== "ok") {
          td.className = "none"; td.textContent = "×";
          td.title = r ? `${r.status}: ${r.reason || ""}` : "no row";
        } else {
          const v = kind === "share" ? (r.outcomes[hm.outcome] || 0) : ((r.change || {})[hm.outcome] || 0);
          const [bg, ink] = kind === "share" ? shareColour(v) : changeColour(v, limit);
          td.style.background = bg; td.style.color = ink;
          td.textContent = kind === "share" ? (v * 100).toFixed(0) : (v >= 0 ? "+" : "") + (v * 100).toFixed(0);
          td.title = `${hm.x}=${x}, ${hm.y}=${y}: ${(v * 100).toFixed(1)}%`;
        }
        tr.append(td);
      }
      table.append(tr);
    }
    const head = el("tr", {}, el("th", {text: `${hm.y} \\ ${hm.x}`}));
    for (const x of X.values) head.append(el("th", {text: String(x)}));
    table.append(el("thead", {}, head));
    maps.append(table);
  }
}

function show(d) {
  last = d;
  $("result").hidden = false;
  $("result-title").textContent = d.title || d.sweep;
  const st = Object.entries(d.statuses).map(([k, n]) => `${n} ${k}`).join(", ");
  $("summary").textContent = `${d.cells} cells × ${d.overlays.length} overlay sets = ${d.tasks} rows: ${st}; ` +
    `${d.reused} read back from the results cache.`;
  const fixed = $("fixed");
  fixed.replaceChildren();
  const hm = d.heatmap;
  if (hm) {
    for (const a of d.axes) {
      if (a.name === hm.x || a.name === hm.y) continue;
      const sel = el("select", {"data-axis": a.name, "aria-label": a.name});
      for (const v of a.values) sel.append(el("option", {value: String(v), text: String(v)}));
      const want = (hm.where || {})[a.name];
      if (want !== undefined) sel.value = String(a.values.find((v) => String(v) === String(want)) ?? want);
      sel.addEventListener("change", draw);
      fixed.append(el("label", {text: a.name + " "}, sel));
    }
  }
  const link = $("csv");
  link.href = URL.createObjectURL(new Blob([d.csv], {type: "text/csv"}));
  draw();
}

async function run() {
  $("error").hidden = true;
  $("run").disabled = true;
  $("status").textContent = "running…";
  const t0 = performance.now();
  try {
    const name = $("spec-pick").value || "sweep.yaml";
    show(await api("/api/sweep", {ruleset: $("ruleset").value, text: $("spec-text").value, name}));
    $("status").textContent = `done in ${((performance.now() - t0) / 1000).toFixed(1)} s`;
  } catch (e) {
    showError(e);
    $("status").textContent = "";
  } finally {
    $("run").disabled = false;
  }
}

async function start() {
  const data = await api("/api/sweep_specs", {});
  specs = data.specs;
  $("max-tasks").textContent = data.max_tasks.toLocaleString("en");
  const pick = $("ruleset");
  for (const rid of Object.keys(specs)) pick.append(el("option", {value: rid, text: rid}));
  const first = Object.keys(specs).find((rid) => Object.keys(specs[rid]).length);
  if (first) pick.value = first;
  pick.addEventListener("change", fillSpecs);
  $("spec-pick").addEventListener("change", () => {
    const mine = specs[$("ruleset").value] || {};
    if ($("spec-pick").value) $("spec-text").value = mine[$("spec-pick").value] || "";
  });
  $("run").addEventListener("click", run);
  fillSpecs();
}

start().catch(showError);
