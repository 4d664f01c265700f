// The catalogue: search (`GET /v1/tools?q=`), filter by server, and a tool's input schema as a
// form that calls it and shows the result's content blocks as what they are.

import { api, newId, query } from "./api.js";
import { busy, content, fill, h, json, say } from "./dom.js";
import { schemaForm } from "./forms.js";

export function create(root, ctx) {
  const note = h("p", { class: "note" });
  const search = h("input", { id: "tool-search", type: "search", placeholder: "what should the tool do?" });
  const server = h("select", { id: "tool-server" }, h("option", { value: "" }, "every server"));
  const results = h("ul", { class: "tools", "aria-label": "Tools" });
  const detail = h("div", { class: "tool-detail", "aria-live": "polite" });
  const form = h(
    "form",
    { class: "toolbar", role: "search" },
    h("div", { class: "field" }, h("label", { for: "tool-search" }, "Search"), search),
    h("div", { class: "field" }, h("label", { for: "tool-server" }, "Server"), server),
    h("button", { type: "submit" }, "Search"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    busy(form.querySelector("button"), note, load);
  });
  server.addEventListener("change", () => busy(null, note, load));
  fill(root, h("h2", {}, "Catalogue"), form, note, h("div", { class: "split" }, results, detail));

  async function loadServers() {
    const answer = await api("GET", "/v1/servers");
    const chosen = server.value;
    fill(server, h("option", { value: "" }, "every server"), (answer.servers || []).map((s) => h("option", { value: s.server_id }, s.server_id)));
    server.value = [...server.options].some((o) => o.value === chosen) ? chosen : "";
  }

  // Searches may overlap (the page's own load when it is shown, a search asked meanwhile) and
  // answer out of order: only the last one asked is shown.
  let asked = 0;

  /** A ranked search with a query, else every tool of the chosen servers, page after page. */
  async function load() {
    const mine = ++asked;
    const q = search.value.trim();
    let tools = [];
    if (q) {
      const answer = await api("GET", `/v1/tools${query({ q, limit: 50, server_id: server.value })}`);
      tools = answer.tools || [];
    } else {
      let cursor = "";
      for (let page = 0; page < 20; page++) {
        const answer = await api("GET", `/v1/tools${query({ server_id: server.value, cursor })}`);
        tools.push(...(answer.tools || []));
        cursor = answer.next_cursor;
        if (!cursor) break;
      }
    }
    if (mine !== asked) return;
    say(note, `${tools.length} tool${tools.length === 1 ? "" : "s"}${q ? ` for “${q}”` : ""}.`);
    fill(results, tools.length ? tools.map(item) : h("li", { class: "muted" }, "Nothing found."));
  }

  function item(tool) {
    const open = h("button", { type: "button", class: "link-button", dataset: { tool: tool.name } }, tool.name);
    open.addEventListener("click", () => showTool(tool));
    return h(
      "li",
      {},
      open,
      tool.title ? h("span", { class: "muted" }, ` ${tool.title}`) : null,
      h("p", { class: "desc" }, tool.description || ""),
      h("span", { class: "tag" }, tool.source === "a2a" ? "A2A" : tool.server_id),
    );
  }

  function showTool(tool) {
    const args = schemaForm(tool.input_schema || {});
    const output = h("div", { class: "result", "aria-live": "polite" });
    const callNote = h("p", { class: "note" });
    const call = h("button", { type: "submit", class: "primary" }, "Call");
    const cancel = h("button", { type: "button", hidden: true }, "Cancel the call");
    const form = h("form", { class: "card", id: "call-form" }, args.el, h("div", { class: "row" }, call, cancel), callNote);
    let callId = "";
    cancel.addEventListener("click", () => busy(cancel, callNote, () => api("DELETE", `/v1/calls/${encodeURIComponent(callId)}`)));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      callId = newId();
      cancel.hidden = false;
      fill(output);
      say(callNote, "Calling… (a server may ask you something meanwhile: see Requests)");
      busy(call, callNote, async () => {
        try {
          const started = performance.now();
          const answer = await api("POST", "/v1/tools/call", { id: callId, name: tool.name, arguments: args.read() });
          const ms = Math.round(performance.now() - started);
          say(callNote, answer.is_error ? `The tool reported an error (${ms} ms).` : `Done in ${ms} ms.`, answer.is_error ? "error" : "ok");
          fill(output, content(answer.content), answer.structured_content ? h("details", { open: true }, h("summary", {}, "Structured content"), json(answer.structured_content)) : null);
          output.dataset.done = answer.is_error ? "error" : "ok";
        } finally {
          cancel.hidden = true;
        }
      });
    });
    fill(
      detail,
      h("h3", {}, tool.name),
      tool.title ? h("p", {}, tool.title) : null,
      h("p", { class: "desc" }, tool.description || ""),
      form,
      output,
      h("details", {}, h("summary", {}, "Input schema"), json(tool.input_schema || {})),
      tool.output_schema ? h("details", {}, h("summary", {}, "Output schema"), json(tool.output_schema)) : null,
      tool.annotations ? h("details", {}, h("summary", {}, "Annotations"), json(tool.annotations)) : null,
    );
    const first = form.querySelector("input, select, textarea, button");
    if (first) first.focus();
  }

  ctx.onEvent(({ type, message }) => {
    if (type === "mcp/server/push" && message.method === "notifications/tools/list_changed" && !root.hidden) {
      say(note, `The tools of ${message.server_id} changed: search again to see them.`);
    }
  });

  return {
    show() {
      busy(null, note, async () => {
        await loadServers();
        await load();
      });
    },
  };
}
