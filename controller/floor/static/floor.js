// The floor overview: every table, grouped by what it needs (critical, warning, offline, device
// trouble, acknowledged, quiet), the most urgent first within each group, live; filters by group
// and by table id, kept in the address (?hide=quiet&table=t1) so that a view can be linked.
import { clear, connect, el, plural } from "/common/live.js";

const $ = (id) => document.getElementById(id);
const PHASES = {
  idle: "Idle", shuffled: "Shuffled", dealing: "Dealing", preflop: "Pre-flop", flop: "Flop",
  turn: "Turn", river: "River", showdown: "Showdown", misdeal: "Misdeal",
};
// The groups in the order the floor shows them (controller/floor/board.py's GROUPS); the quiet
// tables as small chips, so that hundreds of them take little room below the others.
const GROUPS = [
  ["critical", "Critical"], ["warning", "Warning"], ["offline", "Offline"],
  ["devices", "Devices or tracking"], ["handled", "Acknowledged or information"], ["quiet", "Quiet"],
];
const tables = new Map(); // id -> summary
const tiles = new Map(); // id -> <li>
const sections = new Map(); // group -> { section, list, count, button }
let consoleState = null;
let connected = false;
const page = (window.floorConsole = { updates: 0, connected: false });

// ---- filters (in the address: a view can be linked and survives a reload) ---------------------
const params = new URLSearchParams(location.search);
const hidden = new Set((params.get("hide") ?? "").split(",").filter(Boolean));
$("search").value = params.get("table") ?? "";

function saveFilters() {
  const query = new URLSearchParams();
  if (hidden.size) query.set("hide", [...hidden].join(","));
  if ($("search").value) query.set("table", $("search").value);
  const search = query.toString();
  history.replaceState(null, "", search ? `?${search}` : location.pathname);
}

for (const [group, title] of GROUPS) {
  const section = el("section", `group group-${group}`);
  section.dataset.group = group;
  const heading = el("h2");
  const count = el("span", "group-count");
  heading.append(el("span", "group-name", title), " ", count);
  const list = el("ol", group === "quiet" ? "tiles chips" : "tiles");
  list.setAttribute("aria-label", title);
  section.append(heading, list);
  $("grid").append(section);
  const button = el("button", `group-filter group-${group}`);
  button.type = "button";
  button.dataset.group = group;
  button.append(el("span", "", title), " ", el("span", "n", "0"));
  button.addEventListener("click", () => {
    if (hidden.has(group)) hidden.delete(group);
    else hidden.add(group);
    saveFilters();
    render();
  });
  $("group-filters").append(button);
  sections.set(group, { section, list, count, button });
}
$("search").addEventListener("input", () => {
  saveFilters();
  render();
});

// ---- tiles ---------------------------------------------------------------------------------
function tile(summary) {
  const item = el("li");
  item.dataset.table = summary.id;
  const link = el("a", "tile");
  link.href = `/tables/${encodeURIComponent(summary.id)}`;
  // One line: the id, the hand and phase, the controller's state when it is not online.
  const head = el("div", "tile-head");
  head.append(el("span", "tile-name", summary.id), el("span", "facts muted"), el("span", "pill status"));
  link.append(head, el("p", "counts"), el("p", "worst"));
  item.append(link);
  return item;
}

function fill(item, summary) {
  const link = item.firstChild;
  const attention = summary.attention.replace(/ /g, "-");
  const group = summary.group ?? "quiet";
  link.className = `tile attention-${attention}${group === "quiet" ? " chip" : ""}`;
  item.dataset.attention = summary.attention;
  item.dataset.group = group;
  const state = summary.controller?.state ?? "unknown";
  const status = link.querySelector(".status");
  status.className = `pill status state-${state}`;
  status.textContent = state;
  const facts = [];
  if (summary.hand !== null) facts.push(`Hand ${summary.hand}`);
  if (summary.phase) facts.push(PHASES[summary.phase] ?? summary.phase);
  if (summary.tracking === false) facts.push("not tracked");
  facts.push(...sessionFacts(summary));
  link.querySelector(".facts").textContent = facts.join(" · ") || "no state yet";
  const counts = link.querySelector(".counts");
  clear(counts);
  for (const [severity, one, many] of [["critical", "critical", "critical"], ["warning", "warning", "warnings"],
    ["info", "info", "info"]]) {
    const count = summary.counts[severity];
    if (count) counts.append(el("span", `pill sev-${severity}`, `${count} ${count === 1 ? one : many}`));
  }
  const worst = link.querySelector(".worst");
  clear(worst);
  link.title = "";
  if (summary.worst) {
    const w = summary.worst;
    worst.className = `worst sev-${w.severity}`;
    const where = w.seat !== null ? `Seat ${w.seat}` : (w.device ? `Device ${w.device}` : "");
    const head = el("span", "worst-head");
    head.append(el("span", "code", w.code));
    if (w.status === "acknowledged") counts.append(el("span", "pill acked", "acknowledged"));
    const message = el("span", "worst-message");
    if (where) message.append(el("span", "where", where), " — ");
    message.append(w.message);
    worst.append(head, message);
    link.title = `${w.code}: ${w.message}`;
  } else {
    worst.className = "worst muted";
    worst.textContent = state === "online" ? "No active alerts." : (summary.controller?.detail ?? "");
  }
}

// The session (docs/rules.md): a tournament's level and its time left (the level's end is the
// engine's, by event time; this page counts down), the last hands, the seats away.
function timeLeft(ends) {
  const seconds = Math.max(0, Math.round((Date.parse(ends) - Date.now()) / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

function sessionFacts(summary) {
  const facts = [];
  const level = summary.level;
  if (level) {
    facts.push(`Level ${level.level} ${level.small_blind}/${level.big_blind}` +
      (level.ends ? ` ${timeLeft(level.ends)} left` : " (last)"));
  }
  if (summary.hands_left !== null && summary.hands_left !== undefined) {
    facts.push(summary.hands_left === 0 ? "game over" : `${summary.hands_left} hands left`);
  }
  if (summary.away?.length) facts.push(`away: seat ${summary.away.join(", ")}`);
  return facts;
}

// The levels' time left runs between updates.
setInterval(() => {
  for (const [id, summary] of tables) {
    if (summary.level?.ends) fill(tiles.get(id), summary);
  }
}, 1000);

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
    const wanted = $("search").value.trim().toLowerCase();
    const ordered = [...tables.values()].sort(compare);
    const placed = new Map(GROUPS.map(([group]) => [group, 0]));
    const shown = new Map(GROUPS.map(([group]) => [group, 0]));
    for (const summary of ordered) {
      const group = sections.has(summary.group) ? summary.group : "quiet";
      const { list } = sections.get(group);
      const item = tiles.get(summary.id);
      const index = placed.get(group);
      if (list.children[index] !== item) list.insertBefore(item, list.children[index] ?? null);
      placed.set(group, index + 1);
      const match = !wanted || summary.id.toLowerCase().includes(wanted);
      item.hidden = !match;
      if (match) shown.set(group, shown.get(group) + 1);
    }
    for (const [group, { section, list, count, button }] of sections) {
      // Tiles that moved to another group have left this list by insertBefore already.
      const n = placed.get(group);
      while (list.children.length > n) list.lastChild.remove();
      const visible = shown.get(group);
      count.textContent = visible === n ? plural(n, "table") : `${visible} of ${plural(n, "table")}`;
      section.hidden = n === 0 || hidden.has(group) || visible === 0;
      button.querySelector(".n").textContent = String(n);
      button.setAttribute("aria-pressed", String(!hidden.has(group)));
      button.hidden = n === 0;
    }
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
      `${plural(consoleState.rejected, "message")} rejected; last: ${consoleState.last_rejected}`));
  }
  if (!consoleState) return;
  const c = consoleState.counts;
  $("summary").textContent = `${plural(consoleState.tables, "table")} · ` +
    `${plural(c.critical, "critical alert")} · ${plural(c.warning, "warning")} · ` +
    `${c.offline} offline · root ${consoleState.root}`;
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
