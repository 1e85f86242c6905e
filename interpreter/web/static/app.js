// Umpire workbench. Everything shown comes from the JSON API (interpreter/web/app.py), which calls the
// same functions as the command line; this page holds no game knowledge.
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "style") el.style.cssText = v;     // through the DOM: the page's CSP refuses style attributes
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const state = {
  rulesets: [], rid: null, info: null, source: "shipped",
  overlays: [],            // [{shipped: name} | {text, name}] in order
  userOverlays: [],        // [{text, name}] the user uploaded or made
  lastResult: null, schema: null, cancel: false,
  refused: [],             // names of overlays the server refused (not applied)
  syncing: null,           // the pending check of a change to the overlays (syncOverlays)
};

class ApiError extends Error {
  constructor(status, error) { super(error.text); this.status = status; this.error = error; }
}

// this tab's id: the server queues heavy work (odds, simulations) round-robin by it
const CLIENT = (crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2));

async function api(path, body) {
  const opts = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json",
                                                                   "X-Umpire-Client": CLIENT},
                                          body: JSON.stringify(body)};
  let resp;
  try { resp = await fetch(path, opts); }
  catch (e) { throw new ApiError(0, {text: "error: cannot reach the workbench server (is `umpire serve` still running?)", diagnostics: []}); }
  let data;
  try { data = await resp.json(); }
  catch (e) { throw new ApiError(resp.status, {text: `error: the server answered ${resp.status} without JSON`, diagnostics: []}); }
  if (!resp.ok) throw new ApiError(resp.status, data.error || {text: `error ${resp.status}`, diagnostics: []});
  return data;
}

// ---------------------------------------------------------------- errors

function showError(box, err) {
  box.replaceChildren();
  box.hidden = false;
  const e = err instanceof ApiError ? err.error : {text: String(err), diagnostics: []};
  const diags = e.diagnostics || [];
  box.append(h("div", {class: "error-head", text: e.kind === "adjudication" ? "Cannot adjudicate" :
    e.kind === "limit" ? "Limit reached" : e.kind === "busy" ? "Busy" : "Input error"}));
  if (diags.length) {
    const list = h("ul", {class: "diags"});
    for (const d of diags) {
      const where = d.file ? `${d.file}${d.line ? `:${d.line}:${d.column}` : ""}` : "";
      list.append(h("li", {},
        where ? h("span", {class: "where", text: where}) : null,
        h("span", {class: "what", text: d.message}),
        d.hint ? h("div", {class: "hint", text: `hint: ${d.hint}`}) : null));
      if (d.line) markEditorLine(d.file, d.line, d.column);
    }
    box.append(list);
  }
  box.append(h("details", {}, h("summary", {text: "as the command line prints it"}),
                h("pre", {class: "cli", "data-testid": "error-text", text: e.text})));
  return e;
}

function clearError(box) { box.hidden = true; box.replaceChildren(); }

// ---------------------------------------------------------------- start-up

async function start() {
  $$(".tabs button").forEach(b => b.addEventListener("click", () => showTab(b.dataset.tab)));
  $$("[data-goto]").forEach(b => b.addEventListener("click", () => showTab(b.dataset.goto)));
  $$("#source-tabs button").forEach(b => b.addEventListener("click", () => showSource(b.dataset.source)));
  $("#ruleset").addEventListener("change", () => selectRuleset($("#ruleset").value));
  $("#situation").addEventListener("change", situationChosen);
  $("#edit-copy").addEventListener("click", editCopy);
  $("#upload-situation").addEventListener("change", e => readFile(e.target, text => {
    $("#situation-text").value = text; $("#text-name").value = e.target.files[0].name; updateGutter(); }));
  $("#situation-text").addEventListener("input", updateGutter);
  $("#situation-text").addEventListener("scroll", () => { $("#gutter").scrollTop = $("#situation-text").scrollTop; });
  $("#form-procedure").addEventListener("change", () => buildForm($("#form-procedure").value));
  $("#form-to-text").addEventListener("click", formToText);
  $("#btn-resolve").addEventListener("click", resolve);
  $("#brief").addEventListener("change", () => { if (state.lastResult) drawResolve(state.lastResult); });
  $("#btn-odds").addEventListener("click", odds);
  $("#btn-simulate").addEventListener("click", () => simulate());
  $("#btn-cancel").addEventListener("click", () => { state.cancel = true; });
  $("#btn-diff").addEventListener("click", diff);
  $("#upload-overlay").addEventListener("change", e => readFile(e.target, text => {
    addUserOverlay({text, name: e.target.files[0].name}); e.target.value = ""; }));
  $("#by").addEventListener("input", () => { $("#diff-by").textContent = byFields().join(", ") || "whole result"; });
  try {
    const data = await api("/api/rulesets");
    state.rulesets = data.rulesets;
    for (const r of data.rulesets) $("#ruleset").append(h("option", {value: r.id, text: `${r.title}`}));
    const wanted = new URLSearchParams(location.hash.slice(1)).get("ruleset");
    await selectRuleset(data.rulesets.some(r => r.id === wanted) ? wanted : data.rulesets[0].id);
  } catch (e) { showError($("#run-error"), e); }
}

function showTab(name) {
  $$(".tabs button").forEach(b => b.classList.toggle("active", b.dataset.tab === name));
  $$(".tab").forEach(t => t.classList.toggle("active", t.id === `tab-${name}`));
}

function showSource(name) {
  state.source = name;
  $$("#source-tabs button").forEach(b => b.classList.toggle("active", b.dataset.source === name));
  $$("[data-pane]").forEach(p => p.classList.toggle("active", p.dataset.pane === name));
  if (name === "form" && !$("#form-fields").childElementCount) buildForm($("#form-procedure").value);
  if (name === "text") updateGutter();
}

function readFile(input, then) {
  const f = input.files && input.files[0];
  if (!f) return;
  if (f.size > 500000) { alert("That file is larger than 500 kB; situation and overlay files are a few kB."); return; }
  f.text().then(then);
}

async function selectRuleset(rid) {
  state.rid = rid;
  $("#ruleset").value = rid;
  history.replaceState(null, "", `#ruleset=${encodeURIComponent(rid)}`);
  state.overlays = [];
  state.userOverlays = [];
  const r = state.rulesets.find(x => x.id === rid);
  $("#ruleset-title").textContent = r.title;
  const sel = $("#situation");
  const titles = r.situation_titles || {};
  const label = s => titles[s] ? `${titles[s]}  ·  ${s.replace(/\.ya?ml$/, "")}` : s.replace(/\.ya?ml$/, "");
  // the whole label as the tooltip: a long title does not fit the list's width
  sel.replaceChildren(...r.situations.map(s => h("option", {value: s, title: label(s), text: label(s)})));
  sel.selectedIndex = 0;
  ["#out-resolve", "#out-odds", "#out-diff"].forEach(s => { $(s).hidden = true; });
  [$("#run-error"), $("#diff-error"), $("#chart-error")].forEach(clearError);
  $("#by").value = "";
  $("#by-suggest").replaceChildren();
  drawOverlayList();
  await describe();
  situationChosen();
  $("#form-fields").replaceChildren();
  const procs = state.info.procedures;
  $("#form-procedure").replaceChildren(...procs.map(p => h("option", {value: p.name, text: p.name})));
  if (state.source === "form") buildForm(procs[0].name);
}

async function describe() {
  try {
    state.info = await api("/api/describe", {ruleset: state.rid, overlays: state.overlays});
    drawBrowse();
    chartEditorDraw();       // charts.js
  } catch (e) { showError($("#diff-error"), e); }
}

async function situationChosen() {
  const name = $("#situation").value;
  $("#situation-meta").textContent = "";
  if (!name) return;
  try {
    const src = await api("/api/source", {ruleset: state.rid, kind: "situation", name});
    const title = (src.text.match(/^title:\s*(.*)$/m) || [])[1];
    const source = (src.text.match(/^source:\s*(.*)$/m) || [])[1];
    $("#situation-meta").textContent = [title, source && `(${source.replace(/^"|"$/g, "")})`].filter(Boolean).join(" ");
    state.shippedText = src;
  } catch (e) { /* the list came from the server; a failure here shows on resolve */ }
}

function editCopy() {
  if (!state.shippedText) return;
  $("#situation-text").value = state.shippedText.text;
  $("#text-name").value = state.shippedText.name.replace(/(\.ya?ml)$/, "-copy$1");
  showSource("text");
}

// ---------------------------------------------------------------- the text editor's line numbers

function updateGutter() {
  const n = $("#situation-text").value.split("\n").length;
  $("#gutter").textContent = Array.from({length: n}, (_, i) => i + 1).join("\n");
}

function markEditorLine(file, line, column) {
  const ta = $("#situation-text");
  if (state.source !== "text" || !file || !file.endsWith($("#text-name").value.replace(/[^A-Za-z0-9._-]+/g, "-"))) return;
  const lines = ta.value.split("\n");
  if (line > lines.length) return;
  let start = 0;
  for (let i = 0; i < line - 1; i++) start += lines[i].length + 1;
  const from = start + Math.max(0, (column || 1) - 1);
  ta.focus();
  ta.setSelectionRange(from, start + lines[line - 1].length);
  const lh = parseFloat(getComputedStyle(ta).lineHeight) || 18;
  ta.scrollTop = Math.max(0, (line - 3) * lh);
}

// ---------------------------------------------------------------- the situation the user means

function situationSpec() {
  if (state.source === "shipped") {
    const name = $("#situation").value;
    if (!name) throw new ApiError(400, {text: "error: choose a situation", diagnostics: []});
    return {shipped: name};
  }
  if (state.source === "text") {
    const text = $("#situation-text").value;
    if (!text.trim()) throw new ApiError(400, {text: "error: the situation text is empty: paste or upload one, or build one", diagnostics: []});
    return {text, name: $("#text-name").value || "situation.yaml"};
  }
  return {text: formText(), name: "built-situation.yaml"};
}

function byFields() {
  return $("#by").value.split(",").map(s => s.trim()).filter(Boolean);
}

function busy(button, on) {
  button.disabled = on;
  button.classList.toggle("working", on);
}

// ---------------------------------------------------------------- resolve

async function resolve() {
  const box = $("#run-error");
  clearError(box);
  busy($("#btn-resolve"), true);
  try {
    const body = {ruleset: state.rid, situation: situationSpec(), overlays: await overlaysNow()};
    const seed = $("#seed").value.trim();
    if (seed) body.seed = seed;
    const data = await api("/api/resolve", body);
    state.lastResult = data;
    drawResolve(data);
    suggestBy(data.result);
  } catch (e) { showError(box, e); $("#out-resolve").hidden = true; }
  finally { busy($("#btn-resolve"), false); }
}

function drawResolve(d) {
  const out = $("#out-resolve");
  out.hidden = false;
  const status = {ok: "result", refused: "refused", error: "cannot adjudicate"}[d.status];
  const given = d.given_dice || 0;
  const rolled = d.dice.length > given;
  out.replaceChildren(
    h("div", {class: "out-head"},
      h("h2", {text: d.title || d.situation}),
      h("span", {class: `badge ${d.status}`, "data-testid": "status", text: status})),
    d.source ? h("p", {class: "muted small", text: `book: ${d.source}`}) : null,
    h("p", {class: "small"}, "procedure ", h("code", {text: d.procedure}),
      d.procedure_cite ? h("span", {class: "cite", text: d.procedure_cite}) : null),
    d.status === "ok" ? h("div", {class: "result", "data-testid": "result"}, valueView(d.result, "", changesByPath(d.changes))) :
      h("div", {class: "stopped"}, h("strong", {text: d.status === "refused" ? "Not allowed: " : ""}), d.reason,
        d.cite ? h("span", {class: "cite", text: d.cite}) : null,
        d.needs_chart ? h("p", {class: "small"}, "Supply this cell from your own player aid on the ",
          h("button", {class: "link", text: "House rules & charts", onclick: () => showTab("house")}), " tab.") : null),
    h("p", {class: "dice small"}, h("strong", {text: "dice: "}),
      d.dice.length ? d.dice.map(x => x.length > 1 ? `[${x.join(", ")}]` : String(x[0])).join("  ") : "none rolled",
      rolled && d.seed !== null ? h("span", {class: "muted"}, `   seed ${d.seed} `,
        h("button", {class: "link", text: "replay this seed", onclick: () => { $("#seed").value = d.seed; resolve(); }})) : null),
    d.board_svg ? boardView(d.board_svg) : null,
    h("details", {class: "json"}, h("summary", {text: "result as JSON"}),
      h("pre", {"data-testid": "result-json", text: JSON.stringify(d.result, null, 2)})),
    h("h3", {text: "Trace"}),
    traceView(d.trace, $("#brief").checked));
}

function boardView(text) {
  // the server's own SVG (umpire map): parsed as SVG, never as HTML, and only its svg element is kept
  const svg = new DOMParser().parseFromString(text, "image/svg+xml").documentElement;
  const box = h("div", {class: "board", "data-testid": "board"}, h("h3", {text: "Board"}));
  if (svg && svg.nodeName === "svg") {
    svg.querySelectorAll("script, foreignObject").forEach(n => n.remove());
    box.append(document.importNode(svg, true));
    const shown = h("p", {class: "small muted", text: "Point at a hex for its terrain."});
    box.append(shown);
    box.querySelectorAll("polygon.hex").forEach(p => p.addEventListener("click", () => {
      shown.textContent = p.querySelector("title")?.textContent || p.dataset.hex;
    }));
  }
  return box;
}

function isCode(v) {
  return v && typeof v === "object" && !Array.isArray(v) && "text" in v && "code" in v && Object.keys(v).length <= 3;
}

function scalar(v) {
  if (v === null || v === undefined) return "—";
  if (isCode(v)) return v.text;
  if (typeof v === "object" && !Array.isArray(v) && "original" in v && "dice" in v) return `${v.original} [${v.dice.join(", ")}]`;
  if (Array.isArray(v) && v.every(x => typeof x !== "object" || x === null)) return v.length ? v.join(", ") : "—";
  return String(v);
}

function isScalarish(v) {
  return v === null || typeof v !== "object" || isCode(v) || ("original" in v && "dice" in v) ||
    (Array.isArray(v) && v.every(x => typeof x !== "object" || x === null));
}

function changesByPath(changes) {
  // the server's changed_fields: for each list of the result that restates input records, what changed per record
  const by = new Map();
  for (const c of changes || []) if (c.view) by.set(c.at, [...(by.get(c.at) || []), c]);
  return by;
}

function changesView(changes, records) {
  // before -> after per unit (as `umpire resolve` prints it), with the full records one click away
  const rows = changes.flatMap(c => [
    ...c.changed.map(f => [f.field, scalar(f.before), scalar(f.after)]),
    ...c.added.map(f => [f.field, "", scalar(f.value)])].map(([field, before, after], i) =>
    h("tr", {}, h("td", {class: "unit-id", text: i ? "" : c.id}), h("td", {}, h("code", {text: field})),
      h("td", {class: "before", text: before}), h("td", {class: "arrow", text: before === "" ? "" : "→"}),
      h("td", {class: "after", text: after}))));
  return h("div", {class: "changes-view"},
    h("div", {class: "table-wrap"}, h("table", {class: "records changed", "data-testid": "changes"},
      h("thead", {}, h("tr", {}, ["unit", "field", "before", "", "after"].map(c => h("th", {text: c})))),
      h("tbody", {}, rows))),
    h("details", {class: "full-records"}, h("summary", {text: `all fields (${records.length} records)`}),
      valueView(records)));
}

function valueView(v, path = "", views = new Map()) {
  if (isScalarish(v)) return h("span", {class: "scalar", text: scalar(v)});
  if (Array.isArray(v) && views.has(path)) return changesView(views.get(path), v);
  if (Array.isArray(v)) {
    if (v.every(x => x && typeof x === "object" && !Array.isArray(x))) {
      const cols = [...new Set(v.flatMap(x => Object.keys(x)))];
      return h("div", {class: "table-wrap"}, h("table", {class: "records"},
        h("thead", {}, h("tr", {}, cols.map(c => h("th", {text: c})))),
        h("tbody", {}, v.map(x => h("tr", {}, cols.map(c => h("td", {}, c in x ? valueView(x[c]) : "")))))));
    }
    return h("ol", {}, v.map(x => h("li", {}, valueView(x))));
  }
  return h("dl", {class: "kv"}, Object.entries(v).map(([k, x]) =>
    [h("dt", {text: k}), h("dd", {}, valueView(x, path ? `${path}.${k}` : k, views))]));
}

const MARKS = {call: "", result: "=", refuse: "✕", modifier: "·", roll: "●", lookup: "▦", stack: "Σ", choose: "?"};

function traceView(events, brief) {
  // events carry a depth; a step's sub-steps are the events after it that are deeper
  const shown = brief ? events.filter(e => e.brief) : events;
  const root = h("div", {class: "trace", "data-testid": "trace"});
  const stack = [{depth: -1, el: root}];
  shown.forEach((e, i) => {
    while (stack.length > 1 && stack[stack.length - 1].depth >= e.depth) stack.pop();
    const parent = stack[stack.length - 1].el;
    const line = h("span", {class: `ev ${e.kind}`},
      MARKS[e.kind] === "" ? null : h("span", {class: "mark", text: MARKS[e.kind] || "·"}),
      e.cite ? h("span", {class: "cite", text: e.cite}) : null,
      h("span", {class: "t", text: e.text}),
      e.from ? h("span", {class: "from", text: `from ${e.from}`}) : null);
    const next = shown[i + 1];
    if (next && next.depth > e.depth) {
      const det = h("details", {open: e.depth < 1 || e.kind !== "call"}, h("summary", {}, line));
      const kids = h("div", {class: "kids"});
      det.append(kids);
      parent.append(det);
      stack.push({depth: e.depth, el: kids});
    } else {
      parent.append(h("div", {class: "leaf"}, line));
    }
  });
  return root;
}

function fieldPaths(v, prefix, out) {
  if (v === null || typeof v !== "object" || isCode(v)) { if (prefix) out.push(prefix); return out; }
  if (Array.isArray(v)) {
    if (v.every(x => x && typeof x === "object" && "id" in x)) v.forEach(x => fieldPaths(x, `${prefix}.${x.id}`, out));
    else if (prefix) out.push(prefix);
    return out;
  }
  for (const [k, x] of Object.entries(v)) {
    if (k === "id") continue;
    fieldPaths(x, prefix ? `${prefix}.${k}` : k, out);
  }
  return out;
}

function suggestBy(result) {
  const box = $("#by-suggest");
  box.replaceChildren();
  const paths = fieldPaths(result, "", []).slice(0, 24);
  if (!paths.length) return;
  box.append(h("span", {class: "muted small", text: "fields: "}));
  for (const p of paths) {
    box.append(h("button", {class: "chip", text: p, onclick: () => {
      const have = byFields();
      if (!have.includes(p)) $("#by").value = [...have, p].join(", ");
      $("#diff-by").textContent = byFields().join(", ");
    }}));
  }
}

// ---------------------------------------------------------------- odds and simulation

async function odds() {
  const box = $("#run-error");
  clearError(box);
  busy($("#btn-odds"), true);
  try {
    const data = await api("/api/odds", {ruleset: state.rid, situation: situationSpec(), overlays: await overlaysNow(),
                                         by: byFields(), all_dice: $("#all-dice").checked});
    drawOdds(data, "Exact odds");
  } catch (e) {
    const err = showError(box, e);
    if (/paths through the dice|time limit/.test(err.text || "")) {
      box.append(h("p", {}, "Exact odds are too large here. ",
        h("button", {class: "secondary", text: "Estimate by Monte Carlo instead", onclick: () => simulate()})));
    }
  } finally { busy($("#btn-odds"), false); }
}

async function simulate() {
  const box = $("#run-error");
  clearError(box);
  const asked = ($("#runs").value || "20000").trim();
  if (!/^[0-9]+$/.test(asked) || parseInt(asked, 10) < 1) {
    showError(box, new ApiError(400, {kind: "input", diagnostics: [],
      text: `error: runs must be a whole number of at least 1, not '${asked}'`}));
    return;
  }
  const total = parseInt(asked, 10);
  const seed = $("#sim-seed").value.trim() ? parseInt($("#sim-seed").value, 10) : Math.floor(Math.random() * 1e9);
  const chunks = Math.min(20, Math.max(1, Math.ceil(total / 2000)));
  const per = Math.ceil(total / chunks);
  const counts = new Map();
  const prog = $("#progress");
  prog.hidden = false;
  state.cancel = false;
  busy($("#btn-simulate"), true);
  let done = 0, data = null;
  const t0 = performance.now();
  try {
    for (let i = 0; i < chunks && done < total && !state.cancel; i++) {
      const runs = Math.min(per, total - done);
      data = await api("/api/simulate", {ruleset: state.rid, situation: situationSpec(), overlays: await overlaysNow(),
                                         by: byFields(), all_dice: $("#all-dice").checked, runs, seed: seed + i});
      for (const o of data.outcomes) {
        const c = counts.get(o.outcome) || {count: 0, stop: o.stop};
        c.count += o.count;
        counts.set(o.outcome, c);
      }
      done += runs;
      $(".bar", prog).style.width = `${(100 * done / total).toFixed(1)}%`;
      $(".ptext", prog).textContent = `${done.toLocaleString()} / ${total.toLocaleString()} runs`;
    }
    const outcomes = [...counts.entries()].map(([outcome, c]) => {
      const p = c.count / done;
      return {outcome, share: p, count: c.count, stop: c.stop, standard_error: Math.sqrt(p * (1 - p) / done)};
    }).sort((a, b) => b.share - a.share || a.outcome.localeCompare(b.outcome));
    drawOdds({exact: false, runs: done, seed, chunks, outcomes, seconds: (performance.now() - t0) / 1000,
              by: byFields()}, state.cancel ? "Monte Carlo (stopped early)" : "Monte Carlo estimate");
  } catch (e) { showError(box, e); }
  finally { prog.hidden = true; busy($("#btn-simulate"), false); }
}

function pct(p) { return `${(p * 100).toFixed(p >= 0.1 || p === 0 ? 1 : 2)}%`; }

function drawOdds(d, heading) {
  const out = $("#out-odds");
  out.hidden = false;
  const results = d.outcomes.filter(o => !o.stop);
  const stops = d.outcomes.filter(o => o.stop);
  const max = Math.max(...d.outcomes.map(o => o.share), 0.0001);
  const by = d.by && d.by.length ? `grouped by ${d.by.join(", ")}` : d.grouping ? `grouped by ${d.grouping}` : "whole result";
  const chart = h("div", {class: "chart", role: "img", "aria-label": `${heading}, ${by}`, "data-testid": "odds-chart"},
    results.map(o => h("div", {class: "bar-row", title: d.exact ? `${o.outcome}: ${o.fraction}` : o.outcome},
      h("div", {class: "label", text: o.outcome}),
      h("div", {class: "track"}, h("div", {class: "fill", style: `width:${(100 * o.share / max).toFixed(2)}%`})),
      h("div", {class: "value"}, h("strong", {text: pct(o.share)}),
        d.exact ? h("span", {class: "frac", text: o.fraction}) :
          h("span", {class: "frac", text: `± ${(o.standard_error * 100).toFixed(2)}`})))));
  const stopBox = stops.length ? h("div", {class: "stops", "data-testid": "odds-stops"},
    h("h3", {text: `Not a result: ${pct(stops.reduce((a, o) => a + o.share, 0))} set apart`}),
    h("p", {class: "muted small", text: "These chances stop before a result. “needs chart” names a cell the rulebook does not print: fill it on the House rules & charts tab."}),
    h("div", {class: "chart"}, stops.map(o => h("div", {class: `bar-row stop ${o.stop.replace(" ", "-")}`},
      h("div", {class: "label", text: o.outcome}),
      h("div", {class: "track"}, h("div", {class: "fill", style: `width:${(100 * o.share / max).toFixed(2)}%`})),
      h("div", {class: "value"}, h("strong", {text: pct(o.share)}),
        h("span", {class: "frac", text: d.exact ? o.fraction : `± ${(o.standard_error * 100).toFixed(2)}`})))))) : null;
  const foot = d.exact
    ? `exact over ${d.paths.toLocaleString()} paths through the dice, ${(d.seconds * 1000).toFixed(1)} ms; total ${d.total}`
    : `${d.runs.toLocaleString()} runs from seed ${d.seed}${d.chunks > 1 ? ` (+0…${d.chunks - 1} per batch)` : ""}, ${d.seconds.toFixed(2)} s; ± is one standard error`;
  out.replaceChildren(h("div", {class: "out-head"}, h("h2", {text: heading}), h("span", {class: "muted small", text: by})),
    results.length ? chart : h("p", {class: "muted", text: "No chance reaches a result."}), stopBox,
    h("p", {class: "muted small", text: foot}));
}

// ---------------------------------------------------------------- browse

function drawBrowse() {
  const d = state.info;
  const jump = $("#browse-jump");
  const sec = (id, title, count) => h("a", {href: `#${id}`, onclick: ev => { ev.preventDefault(); document.getElementById(id).scrollIntoView(); }, text: `${title} (${count})`});
  jump.replaceChildren(sec("b-procs", "Procedures", d.procedures.length), sec("b-tables", "Tables", d.tables.length),
    sec("b-stacks", "Modifier stacks", d.stacks.length), sec("b-cats", "Catalogues", d.catalogues.length));
  const root = $("#browse");
  root.replaceChildren(
    h("div", {class: "card", id: "b-procs"}, h("h2", {text: "Procedures"}),
      d.procedures.map(p => h("div", {class: "proc"},
        h("div", {class: "sig"}, h("code", {text: p.name}), p.cite ? h("span", {class: "cite", text: p.cite}) : null),
        p.doc ? h("p", {class: "small", text: p.doc}) : null,
        p.params.length ? h("ul", {class: "params"}, p.params.map(a => h("li", {},
          h("code", {text: a.name}), h("span", {class: "type", text: a.type}),
          a.default !== null ? h("span", {class: "muted", text: ` = ${a.default}`}) : h("span", {class: "req", text: "required"})))) :
          h("p", {class: "muted small", text: "no inputs"}),
        h("button", {class: "link small", text: "build a situation for it", onclick: () => {
          showTab("run"); showSource("form"); $("#form-procedure").value = p.name; buildForm(p.name); }})))),
    h("div", {class: "card", id: "b-tables"}, h("h2", {text: "Tables"}),
      h("p", {class: "muted small"}, "Hover a cell for its source. ", h("span", {class: "cell unknown inline", text: "?"}),
        " marks a cell the rulebook does not print; ", h("span", {class: "cell overlay inline", text: "x"}), " a cell an overlay filled."),
      d.tables.map(t => h("details", {class: "tbl", open: d.tables.length <= 3},
        h("summary", {}, h("strong", {text: t.title}), t.cite ? h("span", {class: "cite", text: t.cite}) : null,
          h("span", {class: "muted small", text: ` ${t.known} of ${t.cells} cells known`})),
        h("p", {class: "muted small", text: `${t.name}` + (t.player_aid ? ` — printed on ${t.player_aid}` : "")}),
        gridView(t, null),
        t.results.length ? h("details", {class: "small"}, h("summary", {text: "result codes"}),
          h("ul", {}, t.results.map(r => h("li", {}, h("code", {text: r.pattern}), r.means ? ` — ${r.means}` : "")))) : null))),
    h("div", {class: "card", id: "b-stacks"}, h("h2", {text: "Modifier stacks"}),
      d.stacks.map(s => h("div", {class: "stack"},
        h("h3", {}, `${s.name}(${s.params.join(", ")})`, s.cite ? h("span", {class: "cite", text: s.cite}) : null),
        h("p", {class: "small"}, s.title, " — ", s.combine === "product" ? "multiplied" : "summed",
          s.limits[0] !== null || s.limits[1] !== null ? `; capped to ${s.limits[0] ?? "−∞"} … ${s.limits[1] ?? "+∞"}` : "",
          s.refuse_below !== null ? `; refused below ${s.refuse_below}` : "",
          s.refuse_above !== null ? `; refused above ${s.refuse_above}` : "",
          Object.keys(s.groups).length ? `; groups: ${Object.entries(s.groups).map(([g, k]) => `${g} (${k === "min" ? "lowest" : "highest"} only)`).join(", ")}` : ""),
        h("div", {class: "table-wrap"}, h("table", {class: "mods"},
          h("thead", {}, h("tr", {}, ["modifier", "value", "when", "times", "group", "rule"].map(c => h("th", {text: c})))),
          h("tbody", {}, s.modifiers.map(m => h("tr", {class: m.from ? "overlay" : null},
            h("td", {}, h("code", {text: m.id})), h("td", {}, h("code", {text: m.value})),
            h("td", {}, m.when ? h("code", {text: m.when}) : h("span", {class: "muted", text: "always"})),
            h("td", {text: m.times || ""}), h("td", {text: m.group || ""}),
            h("td", {}, m.cite ? h("span", {class: "cite", text: m.cite}) : null,
              m.from ? h("span", {class: "from", text: `from ${m.from}`}) : null))))))))),
    h("div", {class: "card", id: "b-cats"}, h("h2", {text: "Catalogues"}),
      d.catalogues.map(c => {
        const names = Object.keys(c.entries);
        const cols = [...new Set(names.flatMap(n => Object.keys(c.entries[n])))].filter(k => k !== "source");
        return h("details", {class: "cat"}, h("summary", {}, h("strong", {text: c.title || c.name}),
            ` — ${names.length} entries`, c.cite ? h("span", {class: "cite", text: c.cite}) : null),
          h("div", {class: "table-wrap"}, h("table", {class: "records"},
            h("thead", {}, h("tr", {}, h("th", {text: "entry"}), cols.map(k => h("th", {text: k})))),
            h("tbody", {}, names.map(n => h("tr", {title: c.entries[n].source ? `source: ${c.entries[n].source}` : null},
              h("th", {text: n}), cols.map(k => h("td", {text: k in c.entries[n] ? scalar(c.entries[n][k]) : ""}))))))));
      })));
}

function gridView(t, inputs) {
  // inputs: null to show; a Map to collect edits (chart filling)
  const cols = t.columns ? t.columns.headings : [""];
  const table = h("table", {class: "grid", "data-table": t.name},
    h("thead", {}, h("tr", {}, h("th", {class: "corner", text: t.columns ? `${t.rows.title} \\ ${t.columns.title}` : t.rows.title}),
      cols.map(c => h("th", {text: c ?? "?", title: c === null ? "a column the rulebook shows but does not name" : null})))),
    h("tbody", {}, t.rows.headings.map((r, ri) => h("tr", {}, h("th", {text: r}),
      cols.map((_, ci) => {
        const cell = t.grid[ri][ci];
        if (inputs && !(t.columns && t.columns.headings[ci] === null)) {
          const inp = h("input", {value: cell ? cell.value : "", placeholder: "?", "aria-label": `row ${r} column ${cols[ci]}`,
            title: cell ? `${cell.value} — ${cell.source || "rulebook"}` : "not in the rulebook: type your chart's value",
            dataset: {row: ri, column: ci, original: cell ? cell.value : ""}});
          inp.addEventListener("input", () => inp.classList.toggle("edited", inp.value.trim() !== inp.dataset.original));
          return h("td", {class: cell ? (cell.from ? "cell overlay" : "cell known") : "cell unknown"}, inp);
        }
        if (!cell) return h("td", {class: "cell unknown", title: "not printed in the rulebook", text: "?"});
        return h("td", {class: cell.from ? "cell overlay" : "cell known", title: `${cell.value} — ${cell.source || "rulebook"}` +
          (cell.from ? ` (${cell.from})` : ""), text: cell.value});
      })))));
  return h("div", {class: "table-wrap"}, table);
}

// ---------------------------------------------------------------- the form built from the inputs schema

let formRequest = 0;  // only the latest procedure choice may draw the form (answers can arrive out of order)

async function buildForm(name) {
  const box = $("#form-fields");
  const mine = ++formRequest;
  box.replaceChildren(h("p", {class: "muted", text: "loading…"}));
  try {
    const schema = await api("/api/schema", {ruleset: state.rid, procedure: name, overlays: await overlaysNow()});
    if (mine !== formRequest) return;
    const proc = state.info.procedures.find(p => p.name === name);
    $("#form-doc").textContent = proc ? [proc.doc, proc.cite && `[${proc.cite}]`].filter(Boolean).join(" ") : "";
    const defaults = Object.fromEntries((proc ? proc.params : []).map(p => [p.name, p.default]));
    const widget = objectWidget(schema, defaults, true);
    state.form = {name, widget};
    box.replaceChildren(widget.el);
  } catch (e) { if (mine === formRequest) { box.replaceChildren(); showError($("#run-error"), e); } }
}

function widgetFor(schema, label, placeholder) {
  if (schema.enum) {
    const sel = h("select", {"aria-label": label}, h("option", {value: "", text: placeholder ? `(default: ${placeholder})` : "—"}),
      schema.enum.map(v => h("option", {value: JSON.stringify(v), text: String(v)})));
    return {el: sel, get: () => sel.value === "" ? undefined : JSON.parse(sel.value)};
  }
  if (schema.type === "boolean") {
    const sel = h("select", {"aria-label": label}, h("option", {value: "", text: placeholder ? `(default: ${placeholder})` : "—"}),
      h("option", {value: "true", text: "yes"}), h("option", {value: "false", text: "no"}));
    return {el: sel, get: () => sel.value === "" ? undefined : sel.value === "true"};
  }
  if (schema.type === "array") {
    const item = schema.items || {};
    if (item.type === "object" && item.properties) return listWidget(item, label);
    const inp = h("input", {"aria-label": label, placeholder: `comma-separated${placeholder ? `; default ${placeholder}` : ""}`});
    const isNum = item.type === "integer" || item.type === "number";
    return {el: inp, get: () => inp.value.trim() === "" ? undefined :
      inp.value.split(",").map(s => s.trim()).filter(Boolean).map(s => isNum && /^-?\d+$/.test(s) ? parseInt(s, 10) : parseLoose(s))};
  }
  if (schema.type === "object" && schema.properties) return objectWidget(schema, {}, false, label);
  const listId = schema.examples ? `dl-${Math.random().toString(36).slice(2)}` : null;
  const inp = h("input", {"aria-label": label, list: listId, placeholder: placeholder ?? (schema.default !== undefined ? `default ${scalar(schema.default)}` : "")});
  const numeric = schema.type === "integer" || (schema.anyOf && schema.anyOf.some(s => s.type === "number"));
  let el = inp;
  if (listId) {
    // a catalogue key: its entries offered as the player types, each with its values; the chosen one's shown below
    const entries = catalogueEntries(schema.examples);
    const shown = h("span", {class: "entry-values small", "data-testid": `entry-values-${label}`});
    const show = () => {
      const v = inp.value.trim();
      const entry = entries[v];
      shown.classList.toggle("refused", !entry && v !== "");
      shown.textContent = entry ? entrySummary(entry) : v === "" ? "" :
        `not an entry of the catalogue${nearest(v, schema.examples).length ? `; did you mean ${nearest(v, schema.examples).join(" or ")}?` : ""}`;
    };
    inp.addEventListener("input", show);
    el = h("span", {class: "with-list"}, inp,
      h("datalist", {id: listId}, schema.examples.map(x => h("option", {value: x, label: entries[x] ? entrySummary(entries[x]) : x}))),
      shown);
  }
  return {el, input: inp, get: () => {
    const v = inp.value.trim();
    if (v === "") return undefined;
    if (schema.type === "integer" && /^-?\d+$/.test(v)) return parseInt(v, 10);
    if (numeric && /^-?\d+(\.\d+)?$/.test(v)) return Number(v);
    if (numeric) return v;                        // "7/2": fractions stay text; a wrong one is reported
    if (Array.isArray(schema.type) && schema.type.includes("string")) return v;
    return parseLoose(v);
  }};
}

function catalogueEntries(names) {
  // the catalogue (from /api/describe) whose entries these names are
  const wanted = new Set(names);
  for (const c of (state.info && state.info.catalogues) || []) {
    if (Object.keys(c.entries).some(n => wanted.has(n))) return c.entries;
  }
  return {};
}

function entrySummary(entry) {
  return Object.entries(entry).filter(([k, v]) => k !== "source" && v !== null && typeof v !== "object")
    .map(([k, v]) => `${k.replace(/_/g, " ")} ${v === true ? "yes" : v === false ? "no" : v}`).join(" · ");
}

function nearest(v, names) {
  // the few names closest to what was typed (edit distance), as the CLI's did-you-mean offers
  const dist = (a, b) => {
    const d = Array.from({length: b.length + 1}, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      let prev = d[0]; d[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const t = d[j];
        d[j] = Math.min(d[j] + 1, d[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
        prev = t;
      }
    }
    return d[b.length];
  };
  const lower = v.toLowerCase();
  return names.map(n => [dist(lower, n.toLowerCase()), n]).filter(([d, n]) => d <= Math.max(2, n.length / 3))
    .sort((a, b) => a[0] - b[0]).slice(0, 3).map(([, n]) => n);
}

function parseLoose(v) {
  if (v === "true") return true;
  if (v === "false") return false;
  if (v === "null") return null;
  if (/^-?\d+$/.test(v)) return parseInt(v, 10);
  if (/^[[{]/.test(v)) { try { return JSON.parse(v); } catch (e) { return v; } }
  return v;
}

function objectWidget(schema, defaults, top, label) {
  const props = Object.entries(schema.properties || {});
  const required = new Set(schema.required || []);
  const fields = [];
  const main = h("div", {class: top ? "form-top" : "form-obj"});
  const more = h("div", {class: "form-obj"});
  // a catalogue-backed record: its key and id first, the rest (filled from the catalogue) folded away
  const keyName = props.find(([, s]) => s.examples)?.[0];
  for (const [name, s] of props) {
    const ph = defaults[name] !== undefined && defaults[name] !== null ? defaults[name] : undefined;
    const w = widgetFor(s, name, ph);
    fields.push([name, w]);
    const row = h("label", {class: `field${s.type === "array" && s.items && s.items.properties ? " wide" : ""}`},
      h("span", {class: "fname"}, name, required.has(name) ? h("span", {class: "req", text: " *"}) : null), w.el);
    if (!top && keyName && name !== keyName && name !== "id") more.append(row);
    else main.append(row);
  }
  const el = h("div", {}, main);
  if (more.childElementCount) el.append(h("details", {class: "more"}, h("summary", {text: "more fields (the catalogue entry fills them)"}), more));
  return {el, get: () => {
    const out = {};
    for (const [name, w] of fields) { const v = w.get(); if (v !== undefined) out[name] = v; }
    return out;
  }};
}

function listWidget(item, label) {
  const rows = [];
  const box = h("div", {class: "list"});
  const add = h("button", {class: "secondary small", type: "button", text: `+ add ${label.replace(/s$/, "")}`});
  const el = h("div", {class: "list-wrap"}, box, add);
  const addRow = () => {
    const w = objectWidget(item, {}, false, label);
    const n = rows.length + 1;
    const rowEl = h("div", {class: "list-row"}, h("div", {class: "row-head"}, h("span", {class: "muted small", text: `#${n}`}),
      h("button", {class: "link small", type: "button", text: "remove", onclick: () => { rows.splice(rows.indexOf(entry), 1); rowEl.remove(); }})), w.el);
    const entry = {w, rowEl};
    rows.push(entry);
    box.append(rowEl);
  };
  add.addEventListener("click", addRow);
  return {el, get: () => rows.length ? rows.map(r => r.w.get()) : undefined};
}

function formText() {
  if (!state.form) throw new ApiError(400, {text: "error: choose a procedure in the form first", diagnostics: []});
  const dice = $("#form-dice").value.split(/[,\s]+/).filter(Boolean).map(s => /^\d+$/.test(s) ? parseInt(s, 10) : s);
  const sit = {ruleset: "..", procedure: state.form.name, title: `${state.form.name}, built in the workbench`,
               inputs: state.form.widget.get()};
  if (dice.length) sit.dice = dice;
  return JSON.stringify(sit, null, 2) + "\n";
}

function formToText() {
  try {
    $("#situation-text").value = formText();
    $("#text-name").value = "built-situation.yaml";
    showSource("text");
  } catch (e) { showError($("#run-error"), e); }
}

// ---------------------------------------------------------------- overlays and diff

function drawOverlayList() {
  const r = state.rulesets.find(x => x.id === state.rid);
  const list = $("#overlay-list");
  list.replaceChildren();
  if (!r.house_rules.length) list.append(h("p", {class: "muted small", text: "This ruleset ships no house rules."}));
  for (const name of r.house_rules) {
    const box = h("input", {type: "checkbox", value: name, "data-testid": `overlay-${name}`});
    box.addEventListener("change", syncOverlays);
    list.append(h("label", {class: "check block"}, box, " ", h("code", {text: name}),
      h("button", {class: "link small", type: "button", text: "view", onclick: ev => { ev.preventDefault(); viewOverlay(name, ev.target); }})));
  }
  drawUserOverlays();
}

async function viewOverlay(name, button) {
  const label = button.closest("label");
  const next = label.nextElementSibling;
  if (next && next.classList.contains("overlay-text")) { next.remove(); return; }
  try {
    const src = await api("/api/source", {ruleset: state.rid, kind: "overlay", name});
    label.after(h("pre", {class: "overlay-text", text: src.text}));
  } catch (e) { showError($("#diff-error"), e); }
}

function drawUserOverlays() {
  const box = $("#user-overlays");
  box.replaceChildren(...state.userOverlays.map((o, i) => h("div", {class: "check block"},
    h("code", {text: o.name}), " ",
    (state.refused || []).includes(o.name) ? h("span", {class: "refused", text: "not applied "}) : null,
    h("button", {class: "link small", type: "button", text: "download", onclick: () => download(o.name, o.text)}),
    h("button", {class: "link small", type: "button", text: "remove", onclick: () => {
      state.userOverlays.splice(i, 1); drawUserOverlays(); syncOverlays(); }}))));
}

function addUserOverlay(o) {
  state.userOverlays = state.userOverlays.filter(x => x.name !== o.name).concat([o]);
  drawUserOverlays();
  syncOverlays();
}

function syncOverlays() {
  // every request waits for the latest check (overlaysNow), so a click right after a change uses it
  state.syncing = checkOverlays();
  return state.syncing;
}

async function overlaysNow() {
  if (state.syncing) await state.syncing;
  return state.overlays;
}

async function checkOverlays() {
  // applied only once the server has checked them: an overlay it refuses is shown as not applied
  const shipped = $$("#overlay-list input:checked").map(b => ({shipped: b.value}));
  const wanted = shipped.concat(state.userOverlays.map(o => ({text: o.text, name: o.name})));
  const name = o => o.shipped || o.name;
  clearError($("#diff-error"));
  try {
    state.info = await api("/api/describe", {ruleset: state.rid, overlays: wanted});
    state.overlays = wanted;
    state.refused = [];
    drawBrowse();
    drawChartTables();
  } catch (e) {
    showError($("#diff-error"), e);
    const kept = new Set(state.overlays.map(name));
    state.refused = wanted.map(name).filter(n => !kept.has(n));
  }
  const names = state.overlays.map(name);
  $("#applied-overlays").replaceChildren(names.length ? names.join(", ") : "none",
    ...(state.refused.length ? [" ", h("span", {class: "refused", "data-testid": "refused-overlays",
      text: `· not applied (refused, see the error below): ${state.refused.join(", ")}`})] : []));
  drawUserOverlays();
}

async function diff() {
  const box = $("#diff-error");
  clearError(box);
  busy($("#btn-diff"), true);
  try {
    if (!(await overlaysNow()).length) throw new ApiError(400, {text: "error: choose at least one overlay to compare", diagnostics: []});
    const data = await api("/api/diff", {ruleset: state.rid, overlays: state.overlays, situation: situationSpec(),
                                         by: byFields(), keep_dice: $("#keep-dice").checked});
    drawDiff(data);
  } catch (e) { showError(box, e); $("#out-diff").hidden = true; }
  finally { busy($("#btn-diff"), false); }
}

function frac(s) { const [n, d] = String(s).split("/").map(Number); return d ? n / d : n; }

function drawDiff(d) {
  const out = $("#out-diff");
  out.hidden = false;
  const groups = Object.entries(d.changes);
  const rows = d.outcomes || [];
  const max = Math.max(...rows.map(r => Math.max(frac(r.before), frac(r.after))), 0.0001);
  out.replaceChildren(h("h2", {text: "What the overlays change"}),
    groups.length ? h("div", {class: "changes"}, groups.map(([g, cs]) => h("div", {},
      h("h3", {text: g}), h("ul", {}, cs.map(c => h("li", {}, h("code", {text: c.name}), ": ", c.text,
        h("span", {class: "from", text: c.from}))))))) : h("p", {class: "muted", text: "The overlays change nothing."}),
    rows.length ? h("h3", {text: `Outcome shares before and after${d.by && d.by.length ? "" : ""}`}) : null,
    rows.length ? h("div", {class: "table-wrap"}, h("table", {class: "diff", "data-testid": "diff-table"},
      h("thead", {}, h("tr", {}, h("th", {text: "outcome"}), h("th", {text: "before"}), h("th", {text: "after"}), h("th", {text: "change"}))),
      h("tbody", {}, rows.map(r => {
        const b = frac(r.before), a = frac(r.after);
        return h("tr", {class: r.stop ? "stop" : null},
          h("td", {class: "label", text: r.outcome}),
          h("td", {}, h("div", {class: "mini"}, h("div", {class: "fill before", style: `width:${100 * b / max}%`})), pct(b)),
          h("td", {}, h("div", {class: "mini"}, h("div", {class: "fill after", style: `width:${100 * a / max}%`})), pct(a)),
          h("td", {class: r.change > 0 ? "up" : r.change < 0 ? "down" : "", text: `${r.change >= 0 ? "+" : "−"}${Math.abs(r.change * 100).toFixed(2)}`}));
      })))) : null);
}

function download(name, text) {
  const a = h("a", {href: URL.createObjectURL(new Blob([text], {type: "application/x-yaml"})), download: name});
  document.body.append(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

start();
