// Umpire workbench: the chart editor (House rules & charts tab). Each table is drawn as its card: the
// rulebook's cells locked (hover: their source), the unknown cells editable, the headings of open axes
// editable; a block pasted from a spreadsheet (tab-separated) fills the grid from the focused cell. The
// server (/api/chart_check) checks every value against the table's result codes and the rulebook's cells,
// and builds the chart overlay; problems are shown on the cells they concern. Uses app.js's helpers.
"use strict";

const chartEd = {rid: null, book: null, grids: {}, problems: [], timer: null};

function chartGrid(t) {
  // the editor's state of one table: heading slots (null: empty) and a value per slot
  if (chartEd.grids[t.name]) return chartEd.grids[t.name];
  const slots = (axis) => {
    const hs = axis.headings.slice();
    if (!axis.open) return hs;
    return axis.match === "exact" ? hs.concat([null, null]) : [null].concat(hs, [null, null]);
  };
  const rows = slots(t.rows);
  const columns = t.columns ? slots(t.columns) : null;
  const g = {table: t, rows, columns, bookRows: t.rows.headings, bookColumns: t.columns ? t.columns.headings : [null],
             values: rows.map(() => (columns || [null]).map(() => null))};
  chartEd.grids[t.name] = g;
  return g;
}

function bookCell(g, i, j) {
  // the rulebook's cell under row slot i, column slot j (null when the rulebook does not print one)
  const ri = g.rows[i] === null ? -1 : g.bookRows.indexOf(g.rows[i]);
  const cj = g.columns ? (g.columns[j] === null ? -1 : g.bookColumns.indexOf(g.columns[j])) : 0;
  if (ri < 0 || cj < 0) return null;
  const cell = g.table.grid[ri][cj];
  return cell && !cell.from ? cell : null;
}

function headingLocked(g, axis, i) {
  // a heading the rulebook prints stays; a slot it leaves empty (or a new slot on an open axis) is editable
  const book = axis === "rows" ? g.bookRows : g.bookColumns;
  const h = (axis === "rows" ? g.rows : g.columns)[i];
  return h !== null && book.includes(h) && (g._typed || {})[`${axis}${i}`] === undefined;
}

function chartCounts(g) {
  let book = 0, filled = 0, unknown = 0;
  g.rows.forEach((r, i) => (g.columns || [null]).forEach((c, j) => {
    if (bookCell(g, i, j)) book++;
    else if (g.values[i][j] !== null) filled++;
    else if (r !== null && (!g.columns || c !== null)) unknown++;
  }));
  return {book, filled, unknown};
}

async function chartEditorDraw() {
  // called by app.js whenever the ruleset (or its overlays) changes
  if (chartEd.rid !== state.rid) {
    chartEd.rid = state.rid;
    chartEd.grids = {};
    chartEd.problems = [];
    try {
      chartEd.book = await api("/api/describe", {ruleset: state.rid, overlays: []});
    } catch (e) { showError($("#chart-error"), e); return; }
  }
  const sel = $("#chart-table");
  const keep = sel.value;
  const tables = chartEd.book.tables.filter(t => t.rows.headings.length || t.rows.open);
  sel.replaceChildren(...tables.map(t => h("option", {value: t.name,
    text: `${t.title} (${t.cells - t.known} unknown${t.rows.open || (t.columns && t.columns.open) ? ", open" : ""})`})));
  if (keep && tables.some(t => t.name === keep)) sel.value = keep;
  chartDrawGrid();
}

function chartTable() {
  return chartEd.book && chartEd.book.tables.find(x => x.name === $("#chart-table").value);
}

function chartDrawGrid(focus) {
  const t = chartTable();
  const box = $("#chart-grid");
  if (!t) { box.replaceChildren(h("p", {class: "muted", text: "This ruleset has no tables."})); return; }
  const g = chartGrid(t);
  const mine = chartEd.problems.filter(p => p.table === t.name);
  const problemAt = (i, j) => mine.find(p => p.row === i && (p.column === j || (p.column === null && j === null)));
  const headInput = (axis, i) => {
    const list = axis === "rows" ? g.rows : g.columns;
    const title = axis === "rows" ? t.rows.title : t.columns.title;
    if (headingLocked(g, axis, i)) return h("span", {text: list[i]});
    const inp = h("input", {class: "heading", value: list[i] ?? "", placeholder: "+",
      "aria-label": `${axis === "rows" ? "row" : "column"} heading ${i + 1}`,
      title: `a ${title} heading your card shows (the rulebook leaves this one open)`,
      dataset: {axis, slot: i}});
    inp.addEventListener("change", () => {
      list[i] = inp.value.trim() || null;
      (g._typed = g._typed || {})[`${axis}${i}`] = true;
      chartChanged();
    });
    inp.addEventListener("paste", e => chartPaste(e, g, axis === "rows" ? i : -1, axis === "rows" ? -1 : i));
    return inp;
  };
  const headProblem = mine.find(p => p.row === null);
  const bodyCell = (r, i, c, j) => {
    const book = bookCell(g, i, j);
    const p = problemAt(i, g.columns ? j : 0) || (!g.columns && problemAt(i, null));
    const label = `row ${r ?? i + 1} column ${g.columns ? (c ?? j + 1) : "value"}`;
    const inp = h("input", {value: g.values[i][j] ?? (book ? book.value : ""), placeholder: book ? "" : "?",
      "aria-label": label, readonly: book && g.values[i][j] === null ? true : null,
      title: p ? [p.message, p.hint].filter(Boolean).join(" — ") :
        book ? `${book.value} — ${book.source || "rulebook"} (from the rulebook: locked)` :
        "not in the rulebook: type your card's value",
      dataset: {row: i, column: j}});
    inp.addEventListener("change", () => {
      const v = inp.value.trim();
      g.values[i][j] = !v || (book && v === book.value) ? null : v;
      chartChanged();
    });
    inp.addEventListener("paste", e => chartPaste(e, g, i, j));
    return h("td", {class: `cell ${book ? "known" : g.values[i][j] !== null ? "overlay" : "unknown"}` +
      (p ? " refused" : "")}, inp);
  };
  const rowHead = (i) => {
    const p = problemAt(i, null);
    return h("th", {class: p ? "refused" : null, title: p ? p.message : null}, headInput("rows", i));
  };
  const head = h("tr", {},
    h("th", {class: "corner" + (headProblem ? " refused" : ""), title: headProblem ? headProblem.message : null,
      text: t.columns ? `${t.rows.title} \\ ${t.columns.title}` : t.rows.title}),
    (g.columns || [null]).map((c, j) => h("th", {}, g.columns ? headInput("columns", j) : "value")));
  const bodyRows = g.rows.map((r, i) => h("tr", {}, rowHead(i),
    (g.columns || [null]).map((c, j) => bodyCell(r, i, c, j))));
  const table = h("table", {class: "grid chart-editor", "data-table": t.name},
    h("thead", {}, head), h("tbody", {}, bodyRows));
  const c = chartCounts(g);
  $("#chart-counts").textContent = `${t.title}: ${c.book} from the rulebook, ${c.filled} filled by you, ${c.unknown} unknown` +
    (t.rows.open || (t.columns && t.columns.open) ? " (open: type the card's other headings into the empty slots)" : "");
  const extra = [];
  if (t.rows.open) extra.push(h("button", {class: "link", text: "+ row", onclick: () => {
    g.rows.push(null); g.values.push((g.columns || [null]).map(() => null)); chartDrawGrid(); }}));
  if (t.columns && t.columns.open) extra.push(h("button", {class: "link", text: "+ column", onclick: () => {
    g.columns.push(null); g.values.forEach(v => v.push(null)); chartDrawGrid(); }}));
  const list = mine.length ? h("ul", {class: "diags", "data-testid": "chart-problems"}, mine.map(p => h("li", {},
    `${p.row === null ? "headings" : `row ${g.rows[p.row] ?? p.row + 1}` +
      (g.columns && p.column !== null ? `, column ${g.columns[p.column] ?? p.column + 1}` : "")}: ${p.message}`,
    p.hint ? h("span", {class: "hint", text: ` (${p.hint})`}) : null))) : null;
  const active = document.activeElement;
  const was = active && box.contains(active) ? active.dataset : null;   // redrawn, the focus stays put
  box.replaceChildren(h("div", {class: "table-wrap"}, table), h("div", {class: "action"}, extra), list || "");
  const at = focus ? `input[data-row="${focus[0]}"][data-column="${focus[1]}"]` :
    was && was.row !== undefined ? `input[data-row="${was.row}"][data-column="${was.column}"]` :
    was && was.axis ? `input[data-axis="${was.axis}"][data-slot="${was.slot}"]` : null;
  const el = at && box.querySelector(at);
  if (el) el.focus();
}

function chartPaste(e, g, i0, j0) {
  // a tab-separated block (a spreadsheet's copy) fills the grid from the focused cell: on a row heading,
  // each line's first field is the row's heading; on a column heading, the first line gives headings
  const text = (e.clipboardData || window.clipboardData).getData("text/plain");
  if (!/[\t\n]/.test(text.replace(/\n$/, ""))) return;         // one value: the input takes it
  e.preventDefault();
  const lines = text.replace(/\r/g, "").replace(/\n+$/, "").split("\n").map(l => l.split("\t"));
  let outside = 0;
  const width = () => (g.columns || [null]).length;
  const grow = (i) => {
    while (i >= g.rows.length && g.table.rows.open) { g.rows.push(null); g.values.push(Array(width()).fill(null)); }
    return i < g.rows.length;
  };
  const growCol = (j) => {
    while (g.columns && j >= g.columns.length && g.table.columns.open) { g.columns.push(null); g.values.forEach(v => v.push(null)); }
    return j < width();
  };
  const setCell = (i, j, raw) => {
    const v = raw.trim();
    if (!grow(i) || !growCol(j)) { if (v) outside++; return; }
    const book = bookCell(g, i, j);
    g.values[i][j] = !v || (book && v === book.value) ? null : v;
  };
  const setHeading = (axis, k, raw) => {
    const list = axis === "rows" ? g.rows : g.columns;
    if (axis === "rows" ? !grow(k) : !growCol(k)) { if (raw.trim()) outside++; return; }
    if (headingLocked(g, axis, k)) return;
    list[k] = raw.trim() || null;
    (g._typed = g._typed || {})[`${axis}${k}`] = true;
  };
  let rowStart = i0, body = lines;
  if (i0 < 0) {                                  // on a column heading: the first line is headings
    lines[0].forEach((x, k) => setHeading("columns", j0 + k, x));
    body = lines.slice(1);
    rowStart = 0;
  }
  body.forEach((fields, a) => {
    let cells = fields, col = Math.max(j0, 0);
    if (j0 < 0) { setHeading("rows", rowStart + a, fields[0]); cells = fields.slice(1); col = 0; }
    cells.forEach((x, b) => setCell(rowStart + a, col + b, x));
  });
  chartChanged(outside ? `${outside} pasted value(s) fell outside the card's grid and were left out` : "");
  chartDrawGrid([Math.max(i0, 0), Math.max(j0, 0)]);
}

function chartChanged(note) {
  $("#chart-status").textContent = note || "";
  chartDrawGrid();
  clearTimeout(chartEd.timer);
  chartEd.timer = setTimeout(() => chartCheck(), 400);        // checked as you type or paste
}

function chartSpecs() {
  return Object.values(chartEd.grids).filter(g => g.values.some(v => v.some(x => x !== null)) || g._typed)
    .map(g => ({table: g.table.name, rows: g.rows, columns: g.columns, values: g.values}));
}

async function chartCheck() {
  clearError($("#chart-error"));
  const specs = chartSpecs();
  if (!specs.length) { chartEd.problems = []; chartDrawGrid(); return null; }
  try {
    const data = await api("/api/chart_check", {ruleset: state.rid, tables: specs, name: `${state.rid}-charts.yaml`});
    chartEd.problems = data.problems;
    const counts = Object.values(data.counts || {});
    $("#chart-status").textContent = data.ok
      ? `checked against the rulebook: ok — ${counts.reduce((a, c) => a + c.filled, 0)} cell(s) filled in ${counts.length} table(s)`
      : `${data.problems.length} problem(s): see the marked cells`;
    chartDrawGrid();
    return data;
  } catch (e) { showError($("#chart-error"), e); return null; }
}

async function chartFinish(apply) {
  clearTimeout(chartEd.timer);
  const data = await chartCheck();
  if (!data) {
    if (!chartSpecs().length) showError($("#chart-error"), new ApiError(400, {text: "error: type or paste a value into at least one cell first", diagnostics: []}));
    return;
  }
  if (!data.ok) return;
  if (apply) {
    addUserOverlay({text: data.text, name: data.name});
    $("#chart-status").textContent += ` — applied to this page's runs as ${data.name}`;
  } else download(data.name, data.text);
}

document.addEventListener("DOMContentLoaded", () => {
  $("#chart-table").addEventListener("change", () => chartDrawGrid());
  $("#btn-charts").addEventListener("click", () => chartFinish(false));
  $("#btn-charts-use").addEventListener("click", () => chartFinish(true));
});
