// Card faces as text: rank and suit symbol, coloured by suit (a four-colour deck).
const SUITS = { s: "♠", h: "♥", d: "♦", c: "♣" };
const SUIT_NAMES = { s: "spades", h: "hearts", d: "diamonds", c: "clubs" };
const RANK_NAMES = { A: "ace", K: "king", Q: "queen", J: "jack", T: "ten" };

/** "Td" -> "10♦" */
export function cardText(code) {
  const rank = code[0] === "T" ? "10" : code[0];
  return rank + (SUITS[code[1]] ?? code[1]);
}

/** A <span class="card suit-d">10♦</span>, coloured by suit, with its name ("ten of diamonds")
 * as its accessible text and tooltip. Every page draws cards with it: one notation everywhere. */
export function cardElement(code) {
  const element = document.createElement("span");
  element.className = `card suit-${code[1]}`;
  element.textContent = cardText(code);
  const rank = RANK_NAMES[code[0]] ?? code[0];
  const name = `${rank} of ${SUIT_NAMES[code[1]] ?? code[1]}`;
  element.title = name;
  element.setAttribute("role", "img");
  element.setAttribute("aria-label", name);
  return element;
}

/** Cards in a row (a board), each a :func:`cardElement`. */
export function cardsElement(codes, className = "cards") {
  const element = document.createElement("span");
  element.className = className;
  element.append(...codes.map(cardElement));
  return element;
}
