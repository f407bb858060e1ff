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
const FLASH_MS = 1850;

// Read by tests and by the kiosk's watchdog: what the page has done so far.
const page = (window.dealerDisplay = {
  connected: false, views: 0, beeps: 0, flashes: 0, hiddenAlerts: 0, omitted: 0,
});
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
  // The rule beside the button: one line less above the alerts under it.
  actions.append(button, el("span", "acked", "Acknowledged"), el("span", "rule muted"));
  article.append(head, el("p", "message"), el("ol", "remedy"), actions, el("p", "error"));
  article.querySelector(".error").setAttribute("role", "alert");
  return article;
}

// How an alert is shown (``role``): the headline in full ("lead"), a "follow-up" under it, the
// others one row each ("compact").
function fillAlert(article, alert, role) {
  article.className = `alert sev-${alert.severity} status-${alert.status} ${role}` +
    (article.classList.contains("arrived") ? " arrived" : "");
  article.dataset.severity = alert.severity;
  article.dataset.status = alert.status;
  article.dataset.code = alert.code;
  article.dataset.role = role;
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

// The groups of the picture (each alert with its follow-ups, the headline first); a picture
// without them (an older controller) is one group per alert, in its order.
function groupsOf(current) {
  if (Array.isArray(current.groups)) return current.groups;
  return current.alerts.map((alert) => ({ lead: alert.id, follow_ups: [] }));
}

function renderAlerts(current) {
  const alerts = current.alerts;
  const byId = new Map(alerts.map((alert) => [alert.id, alert]));
  const existing = new Map([...document.querySelectorAll("#alerts article.alert")]
    .map((article) => [article.dataset.alertId, article]));
  let fanfare = null;
  const place = (alert, role, container, index) => {
    let article = existing.get(alert.id);
    if (!article) {
      article = alertArticle(alert);
      if (primed && !seen.has(alert.id)) {
        article.classList.add("arrived");
        // Four flashes of 0.45 s; by time, not animationend: one counted under "+N more" is
        // not displayed, so its animation never ends.
        setTimeout(() => article.classList.remove("arrived"), FLASH_MS);
        page.flashes += 1;
        fanfare = fanfare === "critical" ? fanfare : alert.severity;
      }
    }
    existing.delete(alert.id);
    seen.add(alert.id);
    fillAlert(article, alert, role);
    if (container.children[index] !== article) container.insertBefore(article, container.children[index] ?? null);
    return article;
  };
  const groups = groupsOf(current).filter((group) => byId.has(group.lead));
  const headline = $("headline");
  const under = $("follow-ups");
  const others = $("others");
  let lead = null;
  let row = 0;
  groups.forEach((group, index) => {
    const followUps = group.follow_ups.filter((id) => byId.has(id)).map((id) => byId.get(id));
    if (index === 0) {
      // The headline in full, its follow-ups under it.
      lead = place(byId.get(group.lead), "lead", headline, 0);
      followUps.forEach((alert, position) => place(alert, "follow-up", under, position));
      for (const child of [...under.children].slice(followUps.length)) child.remove();
    } else {
      // Another alert and its follow-ups: one row each, in that order.
      for (const alert of [byId.get(group.lead), ...followUps]) place(alert, "compact", others, row++);
    }
  });
  if (!groups.length) clear(under);
  // "+N more" sits in the headline's row of buttons: it takes no line of its own.
  const more = $("more");
  const slot = lead ? lead.querySelector(".actions") : $("alerts");
  if (more.parentElement !== slot) slot.append(more);
  for (const gone of existing.values()) gone.remove();
  for (const child of [...headline.children]) if (child !== lead && child !== under) child.remove();
  headline.append(under); // always after the lead
  for (const child of [...others.children].slice(row)) child.remove();
  if (fanfare !== null) beep(fanfare === "critical");
  const takeover = alerts.some((a) => a.severity === "critical" && a.status !== "acknowledged");
  document.body.classList.toggle("takeover", takeover);
  document.body.classList.toggle("quiet", alerts.length === 0);
  page.omitted = current.state?.alerts_omitted ?? 0;
  fit();
}

// Never more alerts than fit without scrolling: the follow-ups and the other alerts that would
// overflow the room left to the alerts are hidden, the least severe and last first, and counted
// ("+2 more alerts", with the alerts the state itself left out). The headline alert itself is
// always shown whole.
const RANK = { critical: 0, warning: 1, info: 2 };

function fit() {
  const box = $("alerts");
  const more = $("more");
  const items = [...$("follow-ups").children, ...$("others").children];
  for (const item of items) item.classList.remove("overflow");
  more.hidden = true;
  page.hiddenAlerts = 0;
  delete document.body.dataset.fit;
  if (document.body.classList.contains("quiet")) return;
  const limit = () => box.getBoundingClientRect().bottom -
    parseFloat(getComputedStyle(box).paddingBottom) + 0.5;
  const fits = () => {
    const bottom = limit();
    return items.every((item) => item.classList.contains("overflow") ||
      item.getBoundingClientRect().bottom <= bottom) &&
      (more.hidden || more.getBoundingClientRect().bottom <= bottom);
  };
  if (fits() && !page.omitted) return;
  // Not all of them fit: the headline in smaller (still large) type first, then count.
  document.body.dataset.fit = "tight";
  if (fits() && !page.omitted) return;
  // The headline alone does not fit above the table (a small screen, banners): the alert
  // first, the table gives way.
  const lead = $("headline").querySelector("article.alert");
  if (lead && lead.getBoundingClientRect().bottom > limit()) document.body.dataset.fit = "cramped";
  more.hidden = false; // it takes its room: what fits is measured with it
  // The most severe (then the first) shown first, each as long as it fits; a smaller one
  // further down may still fit where a bigger one did not.
  const order = items.map((item, index) => [RANK[item.dataset.severity] ?? 3, index, item])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([, , item]) => item);
  for (const item of order) item.classList.add("overflow");
  let hidden = order.length;
  for (const item of order) {
    item.classList.remove("overflow");
    if (fits()) hidden -= 1;
    else item.classList.add("overflow");
  }
  const counted = hidden + page.omitted;
  page.hiddenAlerts = counted;
  more.textContent = `+${counted} more alert${counted === 1 ? "" : "s"}`;
  more.hidden = counted === 0;
}
window.addEventListener("resize", () => { if (view) fit(); });

// The list of every active alert, opened by the dealer from "+N more": it scrolls.
function openAllAlerts() {
  const list = $("all-alerts-list");
  clear(list);
  for (const alert of view?.alerts ?? []) {
    const row = el("article", `alert compact sev-${alert.severity} status-${alert.status}`);
    const head = el("header", "alert-head");
    head.append(el("span", `pill sev-${alert.severity}`, SEVERITY[alert.severity] ?? alert.severity),
      el("span", "code muted", alert.code),
      el("span", "", alert.seat !== null ? `Seat ${alert.seat}` : (alert.device ? `Device ${alert.device}` : "")),
      el("span", "", alert.status));
    row.append(head, el("p", "message", alert.message));
    list.append(row);
  }
  $("all-alerts").showModal();
}
$("more").addEventListener("click", openAllAlerts);
$("all-alerts-close").addEventListener("click", () => {
  $("all-alerts").close();
  clear($("all-alerts-list"));
});

// ---- the table ---------------------------------------------------------------------------
// Seats dealt in are green while they hold cards (and while the deal brings them); a seat left
// with no card (mucked at showdown) is not.
const DEALING = new Set(["shuffled", "dealing"]);

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
    const live = seat.in_hand && (seat.cards > 0 || DEALING.has(state.phase));
    item.dataset.seat = seat.seat;
    item.dataset.inHand = seat.in_hand;
    item.dataset.cards = seat.cards;
    item.classList.toggle("empty", !seat.occupied && !seat.cards);
    item.classList.toggle("in-hand", live);
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
    if (seat.cards) count = seat.cards === 1 ? "1 card" : `${seat.cards} cards`;
    else if (seat.in_hand) count = live ? "0 cards" : "no cards";
    else if (seat.occupied) count = "not in hand";
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

// The engine's phase, but "Hand over" rather than "Idle" while the cards of a hand whose result
// is in still lie on the table (between the award and the table cleared).
function phaseText(state, last) {
  const onTable = state.board.length > 0 || state.seats.some((seat) => seat.cards > 0);
  if (state.phase === "idle" && onTable && last?.hand === state.hand) return "Hand over";
  return PHASES[state.phase] ?? state.phase;
}

function renderBar(current) {
  const { table, state } = current;
  $("table-name").textContent = table.name ? `${table.name} (${table.id})` : `Table ${table.id}`;
  $("hand").textContent = state ? `Hand ${state.hand}` : "Hand —";
  $("phase").textContent = state ? phaseText(state, current.last_hand) : "—";
  $("deck").textContent = state?.deck ? `Deck ${state.deck}` : "";
  renderSession(state);
  const health = $("health");
  clear(health);
  const controllerState = page.connected ? (current.controller?.state ?? "unknown") : "offline";
  health.append(el("span", `pill state-${controllerState}`, `controller ${controllerState}`));
  for (const device of current.devices) {
    health.append(el("span", `pill state-${device.state}`, `${device.id} ${device.state}`));
  }
}

// The session (docs/rules.md, "The session"): the last hands announced, a tournament's level and
// its time left (the level's end is the engine's, by event time; the countdown is this page's).
function handsLeftText(left) {
  if (left === 0) return "Last hand dealt: the game is over";
  return left === 1 ? "Last hand: 1 left" : `Last hands: ${left} left`;
}

function timeLeft(ends) {
  const seconds = Math.max(0, Math.round((Date.parse(ends) - Date.now()) / 1000));
  const minutes = Math.floor(seconds / 60);
  return `${minutes}:${String(seconds % 60).padStart(2, "0")}`;
}

function levelText(level) {
  const ante = level.ante ? ` ante ${level.ante}` : "";
  const left = level.ends ? ` · ${timeLeft(level.ends)} left` : " · last level";
  return `Level ${level.level} · ${level.small_blind}/${level.big_blind}${ante}${left}`;
}

function renderSession(state) {
  const left = state?.hands_left;
  const hands = $("hands-left");
  hands.textContent = left === undefined || left === null ? "" : handsLeftText(left);
  hands.classList.toggle("ending", left !== undefined && left !== null);
  $("level").textContent = state?.level ? levelText(state.level) : "";
}

// The level's countdown runs between pictures.
setInterval(() => { if (view?.state?.level) $("level").textContent = levelText(view.state.level); }, 1000);

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
  // The devices in trouble on one line (each has its alert too): the alerts keep their room.
  const down = current.devices.filter((d) => d.state === "offline" || d.state === "fault");
  if (down.length) {
    add("critical", down.map((device) => `Device ${device.id} ${device.state}` +
      (device.detail && down.length === 1 ? ` (${device.detail})` : "")).join("; ") + ".");
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
  renderTable(view.state, view.alerts);
  renderLastHand(view.last_hand);
  renderAlerts(view); // last: what fits is measured with the table drawn
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
