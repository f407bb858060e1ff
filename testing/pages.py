"""What a person checks on a page, checked in the browser: for the page tests' screenshots.

:func:`page_problems` lists, one line each:

- a page wider than the window (a horizontal scroll bar), and, when asked, one taller (the
  dealer's touchscreen never scrolls);
- a word broken inside ("Han d", "acknowledge d", "misdeal_out_of_sequen ce"): every visible
  text node is measured word by word (a ``Range`` per word); a word laid out on two lines is
  reported with the element that holds it;
- a text cut or spilling out of its box ("Table disp"): an element holding text whose content is
  wider than its box (``scrollWidth`` over ``clientWidth``), e.g. a header or a code.
"""

from __future__ import annotations

from typing import Final

from playwright.async_api import Page

_CHECK: Final = """
(tallOk) => {
  const problems = [];
  const root = document.documentElement;
  if (root.scrollWidth > window.innerWidth + 1) {
    problems.push(`page wider than the window: ${root.scrollWidth} > ${window.innerWidth}`);
  }
  if (!tallOk && root.scrollHeight > window.innerHeight + 1) {
    problems.push(`page taller than the window: ${root.scrollHeight} > ${window.innerHeight}`);
  }
  const name = (element) => {
    const id = element.id ? `#${element.id}` : "";
    const cls = typeof element.className === "string" && element.className
      ? "." + element.className.trim().split(/\\s+/).join(".") : "";
    return `${element.tagName.toLowerCase()}${id}${cls}`;
  };
  const visible = (element) => {
    if (!element.getClientRects().length) return false;
    const style = getComputedStyle(element);
    return style.visibility !== "hidden" && style.display !== "none";
  };
  // Words broken inside: each word of each visible text node, laid out on one line.
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || !visible(parent) || ["SCRIPT", "STYLE", "OPTION"].includes(parent.tagName)) continue;
    const text = node.textContent;
    const words = /\\S+/g;
    for (let match = words.exec(text); match; match = words.exec(text)) {
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const lines = new Set([...range.getClientRects()]
        .filter((r) => r.width > 0 && r.height > 0).map((r) => Math.round(r.top)));
      if (lines.size > 1) problems.push(`word broken inside: ${JSON.stringify(match[0])} in ${name(parent)}`);
    }
  }
  // Text wider than its box: cut (overflow hidden, an ellipsis) or spilling over its neighbours.
  for (const element of document.body.querySelectorAll("*")) {
    if (!visible(element)) continue;
    const holdsText = [...element.childNodes]
      .some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
    if (!holdsText) continue;
    const style = getComputedStyle(element);
    if (style.display === "inline") continue; // an inline box has no width of its own to exceed
    if (element.scrollWidth > element.clientWidth + 1) {
      const text = JSON.stringify(element.textContent.trim().slice(0, 60));
      problems.push(`text wider than its box: ${name(element)} ${text} ` +
        `(${element.scrollWidth} > ${element.clientWidth})`);
    }
  }
  return problems;
}
"""


async def page_problems(page: Page, *, scrolls: bool = False) -> list[str]:
    """What is wrong with the page as shown now (``scrolls``: it may be taller than the window)."""
    problems: list[str] = await page.evaluate(_CHECK, scrolls)
    return problems
