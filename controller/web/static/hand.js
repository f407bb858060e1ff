// One hand as the pages show it for a dispute: board, actions street by street, what was tabled
// at showdown, pots, award and the hand's alerts. The hand is a published hand result (plus its
// alerts): it holds no hole card but those tabled face up, so none other can be drawn here.
import { cardElement } from "/common/cards.js";
import { el } from "/common/live.js";

const STREETS = [["preflop", "Pre-flop", 0, 0], ["flop", "Flop", 0, 3], ["turn", "Turn", 3, 4],
  ["river", "River", 4, 5]];
const VERBS = { fold: "folds", check: "checks", call: "calls", bet: "bets", raise: "raises to",
  all_in: "goes all in to", post: "posts" };

/** "Seat 3 raises to 12 (puts in 10)": ``put`` is what the seat has in this street so far. */
function actionText(action, put) {
  const verb = VERBS[action.action] ?? action.action;
  if (action.action === "fold" || action.action === "check") return `Seat ${action.seat} ${verb}`;
  if (action.action === "raise" || action.action === "all_in") {
    const extra = put !== action.amount ? ` (puts in ${action.amount})` : "";
    return `Seat ${action.seat} ${verb} ${put}${extra}`;
  }
  return `Seat ${action.seat} ${verb} ${action.amount}`;
}

const seatsText = (seats) => seats.join(" ") || "—";
/** "seats 2, 4" / "seat 4" / "no seat" */
const seatList = (seats) => seats.length ? `seat${seats.length === 1 ? "" : "s"} ${seats.join(", ")}` : "no seat";
/** "seat 4 wins 34, seat 2 wins 17" */
const wins = (shares) => shares.map((s) => `seat ${s.seat} wins ${s.amount}`).join(", ");

/** The one-line summary: "Hand 12: showdown — seat 3 wins 78, rake 3" (``label`` in place of
 * "Hand"). */
export function handSummary(hand, label = "Hand") {
  const outcome = hand.voided ? `voided (${hand.result})` : hand.result;
  const awarded = wins(hand.awarded);
  return `${label} ${hand.hand}: ${outcome}` + (awarded ? ` — ${awarded}` : "") +
    (hand.rake ? `, rake ${hand.rake}` : "");
}

/** The whole hand as an <article class="hand">. */
export function handElement(hand) {
  const article = el("article", `hand${hand.voided ? " voided" : ""}`);
  article.dataset.hand = hand.hand;
  article.dataset.result = hand.result;
  const when = el("time", "", new Date(hand.ts).toLocaleString());
  when.dateTime = hand.ts;
  const head = el("h3", "", handSummary(hand) + " · ");
  head.append(when);
  article.append(head,
    el("p", "meta", `Button seat ${hand.button ?? "—"} · seats dealt in: ${seatsText(hand.seats)}`));
  if (hand.voided) article.append(el("p", "note", "The hand was voided: no award."));

  for (const [street, title, first, end] of STREETS) {
    const actions = hand.actions.filter((a) => a.street === street);
    const cards = hand.board.slice(first, end);
    if (!actions.length && !cards.length) continue;
    const section = el("section", "street");
    section.dataset.street = street;
    const heading = el("h4", "", title);
    if (cards.length) {
      const board = el("span", "street-board");
      board.append(...cards.map(cardElement));
      heading.append(" ", board);
    }
    const list = el("ol", "actions");
    const put = new Map();
    for (const action of actions) {
      put.set(action.seat, (put.get(action.seat) ?? 0) + action.amount);
      list.append(el("li", `action act-${action.action}`, actionText(action, put.get(action.seat))));
    }
    section.append(heading, list);
    article.append(section);
  }

  if (hand.showdown.length) {
    const section = el("section", "street");
    section.dataset.street = "showdown";
    const list = el("ul", "shown");
    for (const shown of hand.showdown) {
      const item = el("li", "", `Seat ${shown.seat} shows `);
      item.dataset.seat = shown.seat;
      item.append(...shown.cards.map(cardElement), ` ${shown.rank.replaceAll("_", " ")}`);
      list.append(item);
    }
    section.append(el("h4", "", "Showdown"), list);
    article.append(section);
  }

  if (!hand.voided) {
    const award = el("section", "award");
    const pots = el("ul", "pots");
    hand.pots.forEach((pot, index) => {
      const name = index === 0 ? "Main pot" : `Side pot ${index}`;
      const shares = wins(pot.shares);
      pots.append(el("li", "pot",
        `${name} ${pot.amount} (${seatList(pot.eligible)} eligible): ` +
        (shares || `won by ${seatList(pot.winners)}`)));
    });
    if (hand.rake) pots.append(el("li", "rake", `Rake ${hand.rake}`));
    const pushed = hand.awarded.map((a) => `${a.amount} to seat ${a.seat}`).join(", ");
    pots.append(el("li", "pushed", pushed ? `Pushed: ${pushed}` : "Nothing pushed"));
    award.append(el("h4", "", "Award"), pots);
    article.append(award);
  }

  const alerts = el("section", "hand-alerts");
  alerts.append(el("h4", "", "Alerts"));
  if (!hand.alerts.length) alerts.append(el("p", "muted", "No alert in this hand."));
  const list = el("ol", "alert-changes");
  for (const alert of hand.alerts) {
    const item = el("li", `sev-${alert.severity}`,
      `${new Date(alert.ts).toLocaleTimeString()} ${alert.code}` +
      `${alert.seat !== null && alert.seat !== undefined ? ` seat ${alert.seat}` : ""} ${alert.status}: ${alert.message}`);
    item.dataset.code = alert.code;
    list.append(item);
  }
  alerts.append(list);
  article.append(alerts);
  return article;
}
