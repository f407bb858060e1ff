// The floor grid: every table, what needs attention first, live.
import { clear, connect, el } from "/common/live.js";

const $ = (id) => document.getElementById(id);
const PHASES = {
  idle: "Idle", shuffled: "Shuffled", dealing: "Dealing", preflop: "Pre-flop", flop: "Flop",
  turn: "Turn", river: "River", showdown: "Showdown", misdeal: "Misdeal",
};
const tables = new Map(); // id -> summary
const tiles = new Map(); // id -> <li>
let consoleState = null;
let connected = false;
const page = (window.floorConsole = { updates: 0, connected: false });

function tile(summary) {
  const item = el("li");
  item.dataset.table = summary.id;
  const link = el("a", "tile");
  link.href = `/tables/${encodeURIComponent(summary.id)}`;
  const head = el("div", "tile-head");
  head.append(el("span", "tile-name", summary.id), el("span", "pill status"));
  link.append(head, el("p", "facts muted"), el("p", "counts"), el("p", "worst"));
  item.append(link);
  return item;
}

function fill(item, summary) {
  const link = item.firstChild;
  const attention = summary.attention.replace(/ /g, "-");
  link.className = `tile attention-${attention}`;
  item.dataset.attention = summary.attention;
  const state = summary.controller?.state ?? "unknown";
  const status = link.querySelector(".status");
  status.className = `pill status state-${state}`;
  status.textContent = state;
  const facts = [];
  if (summary.hand !== null) facts.push(`Hand ${summary.hand}`);
  if (summary.phase) facts.push(PHASES[summary.phase] ?? summary.phase);
  if (summary.tracking === false) facts.push("not tracked");
  link.querySelector(".facts").textContent = facts.join(" · ") || "no state yet";
  const counts = link.querySelector(".counts");
  clear(counts);
  for (const severity of ["critical", "warning", "info"]) {
    const count = summary.counts[severity];
    if (count) counts.append(el("span", `pill sev-${severity}`, `${count} ${severity}`));
  }
  const worst = link.querySelector(".worst");
  clear(worst);
  if (summary.worst) {
    const w = summary.worst;
    worst.className = `worst sev-${w.severity}`;
    worst.append(el("span", "code", w.code), document.createTextNode(
      `${w.seat !== null ? ` seat ${w.seat}` : ""}${w.status === "acknowledged" ? " (acknowledged)" : ""}: ${w.message}`));
  } else {
    worst.className = "worst muted";
    worst.textContent = state === "online" ? "No active alerts." : (summary.controller?.detail ?? "");
  }
}

function compare(a, b) {
  for (let i = 0; i < a.rank.length; i += 1) {
    if (a.rank[i] !== b.rank[i]) return a.rank[i] - b.rank[i];
  }
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

let scheduled = false;
function render() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    const grid = $("grid");
    const ordered = [...tables.values()].sort(compare);
    ordered.forEach((summary, index) => {
      const item = tiles.get(summary.id);
      if (grid.children[index] !== item) grid.insertBefore(item, grid.children[index] ?? null);
    });
    $("empty").hidden = tables.size > 0;
    renderHeader();
  });
}

function renderHeader() {
  const banners = $("banners");
  clear(banners);
  if (!connected) {
    banners.append(el("p", "banner sev-critical", "The console has lost its server; reconnecting…"));
  } else if (consoleState && !consoleState.connected) {
    banners.append(el("p", "banner sev-critical", `Not connected to the broker: ${consoleState.detail ?? ""}`));
  }
  if (consoleState?.history_error) {
    banners.append(el("p", "banner sev-warning", `History not saved: ${consoleState.history_error}`));
  }
  if (consoleState?.rejected) {
    banners.append(el("p", "banner sev-warning",
      `${consoleState.rejected} message${consoleState.rejected === 1 ? "" : "s"} rejected; last: ${consoleState.last_rejected}`));
  }
  if (!consoleState) return;
  const c = consoleState.counts;
  $("summary").textContent = `${consoleState.tables} tables · ${c.critical} critical · ` +
    `${c.warning} warning · ${c.offline} offline · root ${consoleState.root}`;
}

connect("/events", {
  onUpdate(item) {
    page.updates += 1;
    if (item.kind === "console") {
      consoleState = item;
    } else if (item.kind === "table") {
      let element = tiles.get(item.id);
      if (!element) {
        element = tile(item);
        tiles.set(item.id, element);
      }
      tables.set(item.id, item);
      fill(element, item);
      page.onTable?.(item); // a hook for measurements (benchmarks/floor_load.py --browser)
    } else if (item.kind === "gone") {
      tiles.get(item.id)?.remove();
      tiles.delete(item.id);
      tables.delete(item.id);
    }
    render();
  },
  onConnection(up) {
    connected = up;
    page.connected = up;
    renderHeader();
  },
});
