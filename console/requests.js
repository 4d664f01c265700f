// Requests servers make of this agent and wait on: sampling (`mcp/sample/req`, answered with
// POST /v1/sampling/responses) and elicitation (`mcp/elicit/req`, POST /v1/elicitation/responses,
// its form built from `requested_schema`). Prompts and messages come from servers: shown as text.

import { api } from "./api.js";
import { busy, content, fill, h, json, link, say, time } from "./dom.js";
import { schemaForm } from "./forms.js";

export function create(root, ctx) {
  const pending = new Map();
  const list = h("div", { class: "requests" });
  fill(
    root,
    h("h2", {}, "Requests"),
    h("p", { class: "muted" }, "Servers ask the agent whose call caused it (else the server's owner) to sample a model or to fill in a form. The server waits until you answer, refuse, or its timeout."),
    list,
  );

  const cards = new Map();
  const empty = h("p", { class: "muted" }, "Nothing waits for an answer.");

  /** Adds the cards of new requests and drops answered ones, keeping what is typed in the rest. */
  function render() {
    ctx.pending(pending.size);
    for (const [id, card] of cards) {
      if (!pending.has(id)) {
        card.remove();
        cards.delete(id);
      }
    }
    for (const [id, r] of pending) {
      if (cards.has(id)) continue;
      const card = r.type === "mcp/sample/req" ? sampling(r) : elicitation(r);
      cards.set(id, card);
      list.append(card);
    }
    if (pending.size === 0) list.append(empty);
    else empty.remove();
  }

  /** Posts an answer; the request leaves the list once answered, or when it no longer waits. */
  async function answer(r, path, body, note) {
    try {
      await api("POST", path, { req_id: r.message.id, ...body });
    } catch (error) {
      if (error.status === 404 || error.status === 409) {
        pending.delete(r.message.id);
        render();
      }
      throw error;
    }
    pending.delete(r.message.id);
    say(note, "Answered.");
    render();
  }

  function header(r, what) {
    return h("div", { class: "event-head" }, h("strong", {}, what), h("span", { class: "tag" }, String(r.message.server_id ?? "")), h("time", {}, time(r.at)));
  }

  function sampling(r) {
    const m = r.message;
    const note = h("p", { class: "note" });
    const id = `s-${m.id}`;
    const text = h("textarea", { id: `${id}-text`, name: "text", rows: 3, required: true });
    const model = h("input", { id: `${id}-model`, name: "model", value: "operator" });
    const send = h("button", { type: "submit", class: "primary" }, "Send answer");
    const refuse = h("button", { type: "button", class: "danger" }, "Refuse");
    const form = h(
      "form",
      { class: "sampling-form" },
      h("div", { class: "field" }, h("label", { for: text.id }, "Answer (as the model; Ctrl+Enter sends)"), text),
      h("div", { class: "field" }, h("label", { for: model.id }, "Model name"), model),
      h("div", { class: "row" }, send, refuse),
      note,
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      busy(send, note, () =>
        answer(r, "/v1/sampling/responses", { server_id: m.server_id, mcp_request_id: m.mcp_request_id, role: "assistant", content: { type: "text", text: text.value }, model: model.value || "operator", stop_reason: "endTurn" }, note),
      );
    });
    refuse.addEventListener("click", () => busy(refuse, note, () => answer(r, "/v1/sampling/responses", { error: "refused by the operator" }, note)));
    const messages = Array.isArray(m.messages) ? m.messages : [];
    return h(
      "article",
      { class: "card request", dataset: { request: m.id, kind: "sampling" } },
      header(r, "Sampling request"),
      m.system_prompt ? h("p", {}, h("span", { class: "kind" }, "system"), String(m.system_prompt)) : null,
      h("ol", { class: "messages" }, messages.map((msg) => h("li", {}, h("span", { class: "kind" }, String(msg.role ?? "")), content(Array.isArray(msg.content) ? msg.content : [msg.content])))),
      h("p", { class: "muted" }, `max tokens ${m.max_tokens ?? "—"}`, typeof m.temperature === "number" ? ` · temperature ${Number(m.temperature.toPrecision(3))}` : ""),
      m.model_preferences ? h("details", {}, h("summary", {}, "Model preferences"), json(m.model_preferences)) : null,
      form,
    );
  }

  function elicitation(r) {
    const m = r.message;
    const note = h("p", { class: "note" });
    const isUrl = m.mode === "url";
    const fields = isUrl ? null : schemaForm(m.requested_schema || {});
    const accept = h("button", { type: "submit", class: "primary" }, "Accept");
    const decline = h("button", { type: "button" }, "Decline");
    const cancel = h("button", { type: "button" }, "Cancel");
    const form = h("form", { class: "elicitation-form" }, isUrl ? h("p", {}, "Open ", link(m.url || ""), ", then accept.") : fields.el, h("div", { class: "row" }, accept, decline, cancel), note);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      busy(accept, note, () => answer(r, "/v1/elicitation/responses", isUrl ? { action: "accept" } : { action: "accept", content: fields.read() }, note));
    });
    decline.addEventListener("click", () => busy(decline, note, () => answer(r, "/v1/elicitation/responses", { action: "decline" }, note)));
    cancel.addEventListener("click", () => busy(cancel, note, () => answer(r, "/v1/elicitation/responses", { action: "cancel" }, note)));
    return h("article", { class: "card request", dataset: { request: m.id, kind: "elicitation" } }, header(r, "Elicitation request"), h("p", { class: "message" }, String(m.message ?? "")), form);
  }

  ctx.onEvent((event) => {
    if (event.type !== "mcp/sample/req" && event.type !== "mcp/elicit/req") return;
    if (!event.message || typeof event.message.id !== "string" || pending.has(event.message.id)) return;
    pending.set(event.message.id, { type: event.type, message: event.message, at: event.at });
    render();
  });

  render();
  return { show: render };
}
