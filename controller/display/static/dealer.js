// The dealer's display: renders the controller's picture of the table (server-sent events) and
// sends Acknowledge. Only public data ever reaches this page: card counts, the board, alerts,
// and the last hand's result (hole cards only of hands tabled face up at showdown).
import { cardElement } from "/common/cards.js";
import { handElement, handSummary } from "/common/hand.js";
import { clear, connect, el } from "/common/live.js";

const $ = (id) => document.getElementById(id);
const PHASES = {
  idle: "Idle", shuffled: "Shuffled", dealing: "Dealing", preflop: "Pre-flop", flop: "Flop",
  turn: "Turn", river: "River", showdown: "Showdown", misdeal: "Misdeal",
};
const SEVERITY = { critical: "Critical", warning: "Warning", info: "Info" };

// Read by tests and by the kiosk's watchdog: what the page has done so far.
const page = (window.dealerDisplay = { connected: false, views: 0, beeps: 0, flashes: 0 });
let view = null;
const seen = new Set(); // alert ids already shown: a new one flashes and sounds
let primed = false; // the first picture after loading shows what is there without a fanfare

// ---- sound -----------------------------------------------------------------------------
let audio = null;
function beep(critical) {
  page.beeps += 1;
  try {
    audio ??= new AudioContext();
    if (audio.state === "suspended") audio.resume();
    const tones = critical ? [880, 660, 880] : [740];
    tones.forEach((frequency, index) => {
      const oscillator = audio.createOscillator();
      const gain = audio.createGain();
      oscillator.frequency.value = frequency;
      gain.gain.value = 0.25;
      oscillator.connect(gain).connect(audio.destination);
      const start = audio.currentTime + index * 0.18;
      oscillator.start(start);
      oscillator.stop(start + 0.14);
    });
  } catch {
    // No audio output: the flash still shows.
  }
}
// Browsers start audio only after a touch unless the kiosk allows autoplay.
document.addEventListener("pointerdown", () => {
  audio ??= new AudioContext();
  audio.resume();
}, { once: true });

// ---- alerts ----------------------------------------------------------------------------
async function acknowledge(id, article) {
  const button = article.querySelector("button.ack");
  const error = article.querySelector(".error");
  button.disabled = true;
  button.textContent = "Acknowledging…";
  error.textContent = "";
  try {
    const response = await fetch(`/api/alerts/${encodeURIComponent(id)}/ack`, { method: "POST" });
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      throw new Error(body.error ?? `HTTP ${response.status}`);
    }
    // The acknowledged alert comes back from the engine through the live stream.
  } catch (failure) {
    error.textContent = `Not acknowledged: ${failure.message}. Try again or use the keypad.`;
    button.disabled = false;
    button.textContent = "Acknowledge";
  }
}

function alertArticle(alert) {
  const article = el("article", "alert");
  article.dataset.alertId = alert.id;
  const head = el("header", "alert-head");
  head.append(el("span", `pill severity sev-${alert.severity}`), el("span", "code muted"),
    el("span", "where"), el("span", "status"));
  const actions = el("div", "actions");
  const button = el("button", "ack", "Acknowledge");
  button.type = "button";
  button.addEventListener("click", () => acknowledge(alert.id, article));
  actions.append(button, el("span", "acked", "Acknowledged"));
  article.append(head, el("p", "message"), el("ol", "remedy"), el("p", "rule muted"), actions,
    el("p", "error"));
  article.querySelector(".error").setAttribute("role", "alert");
  return article;
}

function fillAlert(article, alert) {
  article.className = `alert sev-${alert.severity} status-${alert.status}` +
    (article.classList.contains("arrived") ? " arrived" : "");
  article.dataset.severity = alert.severity;
  article.dataset.status = alert.status;
  article.dataset.code = alert.code;
  article.querySelector(".severity").textContent = SEVERITY[alert.severity] ?? alert.severity;
  article.querySelector(".code").textContent = alert.code;
  const where = [];
  if (alert.seat !== null) where.push(`Seat ${alert.seat}`);
  if (alert.device) where.push(`Device ${alert.device}`);
  article.querySelector(".where").textContent = where.join(" · ");
  article.querySelector(".status").textContent = alert.status;
  article.querySelector(".message").textContent = alert.message;
  const remedy = article.querySelector(".remedy");
  const steps = alert.remedy.join("\n");
  if (remedy.dataset.steps !== steps) {
    clear(remedy);
    for (const step of alert.remedy) remedy.append(el("li", "", step));
    remedy.dataset.steps = steps;
  }
  article.querySelector(".rule").textContent = alert.rule ? `Rule: ${alert.rule}` : "";
  const acknowledged = alert.status === "acknowledged";
  const button = article.querySelector("button.ack");
  button.hidden = acknowledged;
  if (acknowledged) button.disabled = false;
  article.querySelector(".acked").hidden = !acknowledged;
}

function renderAlerts(alerts) {
  const box = $("alerts");
  const existing = new Map([...box.children].map((child) => [child.dataset.alertId, child]));
  let fanfare = null;
  alerts.forEach((alert, index) => {
    let article = existing.get(alert.id);
    if (!article) {
      article = alertArticle(alert);
      if (primed && !seen.has(alert.id)) {
        article.classList.add("arrived");
        article.addEventListener("animationend", () => article.classList.remove("arrived"),
          { once: true });
        page.flashes += 1;
        fanfare = fanfare === "critical" ? fanfare : alert.severity;
      }
    }
    existing.delete(alert.id);
    seen.add(alert.id);
    fillAlert(article, alert);
    if (box.children[index] !== article) box.insertBefore(article, box.children[index] ?? null);
  });
  for (const gone of existing.values()) gone.remove();
  if (fanfare !== null) beep(fanfare === "critical");
  const takeover = alerts.some((a) => a.severity === "critical" && a.status !== "acknowledged");
  document.body.classList.toggle("takeover", takeover);
  document.body.classList.toggle("quiet", alerts.length === 0);
}

// ---- the table ---------------------------------------------------------------------------
function renderTable(state, alerts) {
  const seats = $("seats");
  clear(seats);
  $("board").replaceChildren(...(state?.board ?? []).map(cardElement));
  if (!state) return;
  $("burns").textContent = `Burns ${state.burns}`;
  const pots = state.pots ?? [];
  $("pots").textContent = pots.map((pot, index) =>
    `${index === 0 ? "Pot" : `Side pot ${index}`} ${pot.amount}`).join(" · ");
  $("to-act").textContent = state.to_act ? `Seat ${state.to_act} to act` : "";
  const bets = new Map((state.bets ?? []).map((bet) => [bet.seat, bet.amount]));
  const alerted = new Set(alerts.filter((a) => a.seat !== null).map((a) => a.seat));
  for (const seat of state.seats) {
    const item = el("li", "seat");
    item.dataset.seat = seat.seat;
    item.dataset.inHand = seat.in_hand;
    item.dataset.cards = seat.cards;
    item.classList.toggle("empty", !seat.occupied);
    item.classList.toggle("in-hand", seat.in_hand);
    item.classList.toggle("to-act", state.to_act === seat.seat);
    item.classList.toggle("has-alert", alerted.has(seat.seat));
    item.append(el("span", "seat-no", String(seat.seat)));
    if (state.button === seat.seat) {
      const marker = el("span", "button-marker", "D");
      marker.title = "Dealer button";
      item.append(marker);
    }
    const backs = el("span", "backs");
    for (let i = 0; i < Math.min(seat.cards, 6); i += 1) backs.append(el("i", "back"));
    item.append(backs);
    let count = "empty";
    if (seat.occupied || seat.cards) {
      count = seat.cards === 1 ? "1 card" : `${seat.cards} cards`;
      if (!seat.in_hand && !seat.cards) count = "not in hand";
    }
    item.append(el("span", "count", count));
    const spoken = [`Seat ${seat.seat}`, seat.in_hand ? "in the hand" : (seat.occupied ? "not in the hand" : "empty"),
      `${seat.cards} cards`];
    if (state.button === seat.seat) spoken.push("dealer button");
    item.setAttribute("aria-label", spoken.join(", "));
    if (bets.has(seat.seat)) item.append(el("span", "bet", `Bet ${bets.get(seat.seat)}`));
    if (state.to_act === seat.seat) item.append(el("span", "note", "To act"));
    if (state.shows_first === seat.seat) item.append(el("span", "note", "Shows first"));
    seats.append(item);
  }
}

function renderBar(current) {
  const { table, state } = current;
  $("table-name").textContent = table.name ? `${table.name} (${table.id})` : `Table ${table.id}`;
  $("hand").textContent = state ? `Hand ${state.hand}` : "Hand —";
  $("phase").textContent = state ? (PHASES[state.phase] ?? state.phase) : "—";
  $("deck").textContent = state?.deck ? `Deck ${state.deck}` : "";
  const health = $("health");
  clear(health);
  const controllerState = page.connected ? (current.controller?.state ?? "unknown") : "offline";
  health.append(el("span", `pill state-${controllerState}`, `controller ${controllerState}`));
  for (const device of current.devices) {
    health.append(el("span", `pill state-${device.state}`, `${device.id} ${device.state}`));
  }
}

function renderBanners(current) {
  const banners = $("banners");
  clear(banners);
  const add = (severity, text) => banners.append(el("p", `banner sev-${severity}`, text));
  if (!page.connected) {
    add("critical", "Controller offline: the display has lost it and reconnects by itself.");
  } else if (current && current.controller && current.controller.state !== "online") {
    const detail = current.controller.detail ? `: ${current.controller.detail}` : "";
    add("critical", `Controller ${current.controller.state}${detail}.`);
  }
  if (!current) return;
  for (const device of current.devices) {
    if (device.state === "offline" || device.state === "fault") {
      const detail = device.detail ? ` (${device.detail})` : "";
      add("critical", `Device ${device.id} ${device.state}${detail}.`);
    }
  }
  if (current.state && current.state.tracking === false) {
    add("warning", "The hand is not being tracked while a reader is offline.");
  }
}

// The last hand, for a dispute at the table: a line, opened into the whole hand (the detail
// keeps its open/closed state while new pictures arrive).
let lastShown = null;
function renderLastHand(last) {
  $("last-hand-view").hidden = !last;
  if (!last) {
    $("last-hand").textContent = "";
    return;
  }
  $("last-hand").textContent = handSummary(last, "Last hand");
  const key = JSON.stringify(last);
  if (key === lastShown) return;
  lastShown = key;
  $("last-hand-detail").replaceChildren(handElement(last));
}

function render() {
  renderBanners(view);
  if (!view) return;
  renderBar(view);
  renderAlerts(view.alerts);
  renderTable(view.state, view.alerts);
  renderLastHand(view.last_hand);
  primed = true;
}

connect("/events", {
  onUpdate(item) {
    if (item.kind !== "view") return;
    view = item;
    page.views += 1;
    render();
  },
  onConnection(up) {
    if (up === page.connected) return;
    page.connected = up;
    render();
  },
});
