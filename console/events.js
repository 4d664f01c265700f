// The signed-in agent's event stream as it arrives: pushes (status changes, list_changed,
// progress, log messages) and the requests servers make, newest first.

import { fill, h, json, time } from "./dom.js";

const KEEP = 300;

export function create(root, ctx) {
  const seen = [];
  const list = h("ol", { class: "events", reversed: true, "aria-live": "polite", "aria-label": "Events" });
  const filter = h("input", { id: "event-filter", type: "search", placeholder: "type, method or server" });
  const clear = h("button", { type: "button" }, "Clear");
  clear.addEventListener("click", () => {
    seen.length = 0;
    render();
  });
  filter.addEventListener("input", render);
  fill(
    root,
    h("h2", {}, "Events"),
    h("p", { class: "muted" }, "What GET /v1/events sends this agent, live. The stream resumes with Last-Event-ID after a drop."),
    h("div", { class: "toolbar" }, h("div", { class: "field" }, h("label", { for: "event-filter" }, "Filter"), filter), clear),
    list,
  );

  function entry({ type, id, message, at }) {
    const method = message.method ? String(message.method) : "";
    const server = message.server_id ? String(message.server_id) : "";
    return h(
      "li",
      { class: "event", dataset: { type, method } },
      h("div", { class: "event-head" }, h("time", {}, time(at)), h("span", { class: "tag" }, type), method ? h("strong", {}, method) : null, server ? h("span", { class: "muted" }, server) : null, h("span", { class: "muted mono" }, `#${id}`)),
      h("details", {}, h("summary", {}, "Message"), json(message)),
    );
  }

  function matches(event) {
    const f = filter.value.trim().toLowerCase();
    if (!f) return true;
    return [event.type, event.message.method, event.message.server_id].some((v) => typeof v === "string" && v.toLowerCase().includes(f));
  }

  function render() {
    const shown = seen.filter(matches);
    fill(list, shown.length ? shown.map(entry) : h("li", { class: "muted" }, "No events yet."));
  }

  ctx.onEvent((event) => {
    seen.unshift(event);
    if (seen.length > KEEP) seen.length = KEEP;
    if (!root.hidden && matches(event)) {
      if (list.firstElementChild && list.firstElementChild.classList.contains("muted")) list.replaceChildren();
      list.prepend(entry(event));
      while (list.children.length > KEEP) list.lastElementChild.remove();
    }
  });

  return { show: render };
}
