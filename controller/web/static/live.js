// Live updates (server-sent events): reconnects by itself when the server goes away and comes
// back (a controller restart), and says whether the stream is up.
export function connect(url, { onUpdate, onConnection }) {
  let source = null;
  let retry = null;
  const open = () => {
    source = new EventSource(url);
    source.addEventListener("open", () => onConnection(true));
    source.addEventListener("update", (event) => {
      onConnection(true);
      for (const item of JSON.parse(event.data)) onUpdate(item);
    });
    source.addEventListener("error", () => {
      onConnection(false);
      // The browser retries a dropped stream itself; a refused one (CLOSED) we retry ourselves.
      if (source.readyState === EventSource.CLOSED) {
        source.close();
        clearTimeout(retry);
        retry = setTimeout(open, 1000);
      }
    });
  };
  open();
}

/** Remove every child of an element. */
export function clear(element) {
  while (element.firstChild) element.removeChild(element.firstChild);
}

/** A new element with a class and text. */
export function el(tag, className = "", text = "") {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text) element.textContent = text;
  return element;
}

/** "1 table", "2 tables" (``many``: the plural when it is not ``one`` + "s"). */
export function plural(count, one, many = `${one}s`) {
  return `${count} ${count === 1 ? one : many}`;
}
