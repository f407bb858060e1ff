// Card faces as text: rank and suit symbol, coloured by suit (a four-colour deck).
const SUITS = { s: "♠", h: "♥", d: "♦", c: "♣" };
const SUIT_NAMES = { s: "spades", h: "hearts", d: "diamonds", c: "clubs" };
const RANK_NAMES = { A: "ace", K: "king", Q: "queen", J: "jack", T: "ten" };

/** "Td" -> "10♦" */
export function cardText(code) {
  const rank = code[0] === "T" ? "10" : code[0];
  return rank + (SUITS[code[1]] ?? code[1]);
}

/** A <span class="card suit-d">10♦</span> with a spoken name for screen readers. */
export function cardElement(code) {
  const element = document.createElement("span");
  element.className = `card suit-${code[1]}`;
  element.textContent = cardText(code);
  const rank = RANK_NAMES[code[0]] ?? code[0];
  element.title = `${rank} of ${SUIT_NAMES[code[1]] ?? code[1]}`;
  return element;
}
