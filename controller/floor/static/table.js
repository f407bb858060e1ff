// A table's page on the floor console: status, device health, active alerts, the alert history
// (from the console's SQLite, filtered by code, severity and time), its hands (a list, and one
// hand in full in a panel beside it on a click, linkable as #hand-12), all live.
import { cardsElement } from "/common/cards.js";
import { handElement, handSummary } from "/common/hand.js";
import { clear, connect, el, plural } from "/common/live.js";

const $ = (id) => document.getElementById(id);
const tableId = decodeURIComponent(location.pathname.split("/")[2] ?? "");
const PHASES = {
  idle: "Idle", shuffled: "Shuffled", dealing: "Dealing", preflop: "Pre-flop", flop: "Flop",
  turn: "Turn", river: "River", showdown: "Showdown", misdeal: "Misdeal",
};
const page = (window.tablePage = {
  historyLoads: 0, liveRows: 0, summary: null, handLoads: 0, shownHand: null,
});
let historyLoaded = false;
const pendingLive = [];

document.title = `Table ${tableId}`;
$("title").textContent = `Table ${tableId}`;

// ---- the table's picture -------------------------------------------------------------------
function renderSummary(summary) {
  page.summary = summary;
  const state = summary.controller?.state ?? "unknown";
  const status = $("status");
  status.className = `pill state-${state}`;
  status.textContent = summary.controller?.detail ? `${state} (${summary.controller.detail})` : state;
  const facts = [];
  if (summary.hand !== null) facts.push(`Hand ${summary.hand}`);
  if (summary.phase) facts.push(PHASES[summary.phase] ?? summary.phase);
  if (summary.deck) facts.push(`Deck ${summary.deck}`);
  if (summary.profile) facts.push(`Profile ${summary.profile}`);
  if (summary.heard) facts.push(`last heard ${new Date(summary.heard).toLocaleTimeString()}`);
  $("facts").textContent = facts.join(" · ");

  const health = $("health");
  clear(health);
  health.append(el("li", "", `Controller ${state}` +
    (summary.controller ? `, session ${summary.controller.session}` : "") +
    (summary.controller?.detail ? ` (${summary.controller.detail})` : "")));
  if (summary.tracking === false) {
    health.append(el("li", "note", "The hand is not being tracked: a reader is offline."));
  } else if (summary.tracking === true) {
    health.append(el("li", "", "The hand is tracked."));
  }
  for (const device of summary.devices) {
    health.append(el("li", "", `${device.device ?? "a device"}: ${device.code} (${device.status}) — ${device.message}`));
  }
  if (!summary.devices.length) health.append(el("li", "muted", "No device alert."));

  const active = $("active");
  clear(active);
  for (const alert of summary.alerts) {
    const item = el("li", `sev-${alert.severity}`);
    item.dataset.alertId = alert.id;
    item.append(el("span", `pill sev-${alert.severity}`, alert.severity), document.createTextNode(" "),
      el("span", "code", alert.code), document.createTextNode(
        `${alert.seat !== null ? ` · seat ${alert.seat}` : ""} · ${alert.status} · hand ${alert.hand}`),
      el("p", "message", alert.message));
    const steps = el("ol");
    for (const step of alert.remedy) steps.append(el("li", "", step));
    item.append(steps);
    active.append(item);
  }
  $("no-alerts").hidden = summary.alerts.length > 0;

  const last = summary.last_hand;
  $("last-hand").textContent = last ? handSummary(last) : "No hand result yet.";
  const lastKey = last ? `${last.hand}|${last.ts}` : null;
  if (lastKey !== shownLast) {
    shownLast = lastKey;
    if (last) loadHands();
  }
}

// ---- hands ------------------------------------------------------------------------------------
let shownLast = null;

const HAND_HASH = /^#hand-(\d+)$/;

async function showHand(number) {
  const detail = $("hand-detail");
  const panel = $("hand-panel");
  $("hand-panel-title").textContent = `Hand ${number}`;
  const link = $("hand-link");
  link.href = `#hand-${number}`;
  link.textContent = `${location.origin}${location.pathname}#hand-${number}`;
  panel.hidden = false;
  for (const item of $("hands").children) item.classList.toggle("selected", item.dataset.hand === String(number));
  try {
    const response = await fetch(`/api/tables/${encodeURIComponent(tableId)}/hands/${number}`);
    const body = await response.json();
    if (!response.ok) throw new Error(body.error ?? `HTTP ${response.status}`);
    detail.replaceChildren(handElement(body));
  } catch (failure) {
    detail.replaceChildren(el("p", "note", `Hand ${number} not available: ${failure.message}`));
  }
  page.shownHand = number;
}

function closeHand() {
  $("hand-panel").hidden = true;
  clear($("hand-detail"));
  page.shownHand = null;
  for (const item of $("hands").children) item.classList.remove("selected");
  if (HAND_HASH.test(location.hash)) history.replaceState(null, "", location.pathname + location.search);
}

// The address says which hand is open: a click sets it, a link or Back opens it.
function followHash() {
  const found = HAND_HASH.exec(location.hash);
  if (found) showHand(Number(found[1]));
  else if (!$("hand-panel").hidden) closeHand();
}
window.addEventListener("hashchange", followHash);
$("hand-close").addEventListener("click", closeHand);
document.addEventListener("keydown", (event) => { if (event.key === "Escape") closeHand(); });

async function loadHands() {
  const note = $("hands-note");
  try {
    const response = await fetch(`/api/tables/${encodeURIComponent(tableId)}/hands?limit=50`);
    const body = await response.json();
    if (!response.ok) throw new Error(body.error ?? `HTTP ${response.status}`);
    const list = $("hands");
    clear(list);
    for (const hand of body.hands) {
      const item = el("li", hand.voided ? "voided" : "");
      item.dataset.hand = hand.hand;
      item.classList.toggle("selected", page.shownHand === hand.hand);
      const codes = [...new Set(hand.alerts.map((a) => a.code))];
      const button = el("button", "hand-link", handSummary(hand));
      button.type = "button";
      button.addEventListener("click", () => {
        if (location.hash === `#hand-${hand.hand}`) showHand(hand.hand);
        else location.hash = `hand-${hand.hand}`;
      });
      item.append(button, el("span", "when", new Date(hand.ts).toLocaleTimeString()));
      if (hand.board.length) item.append(cardsElement(hand.board));
      if (codes.length) item.append(el("span", "alert-codes", `alerts ${codes.join(", ")}`));
      list.append(item);
    }
    note.textContent = body.hands.length
      ? `The last ${plural(body.hands.length, "hand")}, newest first; a click opens one beside the list.`
      : "No hand yet.";
    page.handLoads += 1;
  } catch (failure) {
    note.textContent = `Hands not available: ${failure.message}`;
  }
}

// ---- history ---------------------------------------------------------------------------------
const form = $("filters");
const rowKey = (row) => `${row.id}|${row.status}|${row.ts}`;

function filters() {
  const data = new FormData(form);
  const out = {};
  for (const name of ["code", "severity"]) if (data.get(name)) out[name] = data.get(name);
  for (const name of ["since", "until"]) {
    const value = data.get(name);
    if (value) out[name] = new Date(value).toISOString();
  }
  return out;
}

function matches(row, wanted) {
  if (wanted.code && row.code !== wanted.code) return false;
  if (wanted.severity && row.severity !== wanted.severity) return false;
  if (wanted.since && new Date(row.ts) < new Date(wanted.since)) return false;
  if (wanted.until && new Date(row.ts) > new Date(wanted.until)) return false;
  return true;
}

function historyRow(row, fresh) {
  const tr = el("tr", `sev-${row.severity}${fresh ? " fresh" : ""}`);
  tr.dataset.key = rowKey(row);
  tr.dataset.code = row.code;
  const time = el("td");
  const stamp = el("time", "", new Date(row.ts).toLocaleString());
  stamp.dateTime = row.ts;
  time.append(stamp);
  time.className = "time";
  tr.append(time, el("td", "hand-no", String(row.hand)), el("td", "code", row.code),
    el("td", "severity", row.severity), el("td", "seat", row.seat === null ? "" : String(row.seat)),
    el("td", "status", row.status), el("td", "message", row.message));
  return tr;
}

function addCode(code) {
  const select = form.elements.code;
  if ([...select.options].some((option) => option.value === code)) return;
  select.append(new Option(code, code));
}

async function loadHistory() {
  const wanted = filters();
  const query = new URLSearchParams(wanted);
  const note = $("history-note");
  try {
    const response = await fetch(`/api/tables/${encodeURIComponent(tableId)}/history?${query}`);
    const body = await response.json();
    if (!response.ok) throw new Error(body.error ?? `HTTP ${response.status}`);
    for (const code of body.codes) addCode(code);
    const tbody = $("history").tBodies[0];
    clear(tbody);
    for (const row of body.rows) tbody.append(historyRow(row, false));
    historyError = body.error;
    countRows();
    page.historyLoads += 1;
    historyLoaded = true;
    for (const row of pendingLive.splice(0)) addLive(row);
  } catch (failure) {
    note.textContent = `History not available: ${failure.message}`;
  }
}

let historyError = null;

function countRows() {
  const rows = $("history").tBodies[0].rows.length;
  const note = $("history-note");
  note.textContent = rows ? `${plural(rows, "change")}, newest first.` : "No alert change matches.";
  if (historyError) note.textContent += ` History not saved: ${historyError}`;
}

function addLive(row) {
  addCode(row.code);
  if (!matches(row, filters())) return;
  const tbody = $("history").tBodies[0];
  if ([...tbody.rows].some((tr) => tr.dataset.key === rowKey(row))) return;
  tbody.insertBefore(historyRow(row, true), tbody.firstChild);
  page.liveRows += 1;
  countRows();
}

form.addEventListener("change", loadHistory);
form.addEventListener("reset", () => setTimeout(loadHistory, 0));

connect(`/tables/${encodeURIComponent(tableId)}/events`, {
  onUpdate(item) {
    if (item.kind === "table" && item.id === tableId) renderSummary(item);
    else if (item.kind === "change" && item.table === tableId) {
      if (historyLoaded) addLive(item);
      else pendingLive.push(item);
    } else if (item.kind === "gone") {
      $("status").textContent = "taken out of service";
    }
  },
  onConnection(up) {
    const banners = $("banners");
    clear(banners);
    if (!up) banners.append(el("p", "banner sev-critical", "The console has lost its server; reconnecting…"));
  },
});
loadHistory();
loadHands();
followHash(); // opened from a link to a hand
