// A2A agents the bridge reaches through its agent-bridge tools: list, register by URL (the bridge
// fetches the card), refresh the card, forget. Names, descriptions and cards come from the agents.

import { api } from "./api.js";
import { busy, fill, h, json, link, say } from "./dom.js";

export function create(root) {
  const note = h("p", { class: "note" });
  const list = h("div", { class: "agents" });
  const url = h("input", { id: "agent-url", type: "url", required: true, placeholder: "https://agent.example.com" });
  const agentId = h("input", { id: "agent-id", placeholder: "generated when empty" });
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "agent-title" },
    h("h3", { id: "agent-title" }, "Register an A2A agent"),
    h("div", { class: "grid" }, h("div", { class: "field" }, h("label", { for: "agent-url" }, "Base URL"), url), h("div", { class: "field" }, h("label", { for: "agent-id" }, "Agent id"), agentId)),
    h("button", { type: "submit", class: "primary" }, "Register"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    busy(form.querySelector("button"), note, async () => {
      const body = { url: url.value.trim() };
      if (agentId.value.trim()) body.agent_id = agentId.value.trim();
      await api("POST", "/v1/a2a/agents", body);
      say(note, "Registered.");
      url.value = "";
      await refresh();
    });
  });
  fill(root, h("h2", {}, "A2A agents"), note, list, form);

  function card(agent) {
    const id = encodeURIComponent(agent.agent_id);
    const refreshCard = h("button", { type: "button" }, "Refresh card");
    refreshCard.addEventListener("click", () => busy(refreshCard, note, async () => {
      await api("POST", `/v1/a2a/agents/${id}/refresh`);
      say(note, `${agent.agent_id}: card fetched again.`);
      await refresh();
    }));
    const forget = h("button", { type: "button", class: "danger" }, "Forget");
    forget.addEventListener("click", () => busy(forget, note, async () => {
      if (!confirm(`Forget ${agent.agent_id}?`)) return;
      await api("DELETE", `/v1/a2a/agents/${id}`);
      await refresh();
    }));
    return h(
      "article",
      { class: "card", dataset: { agent: agent.agent_id } },
      h("div", { class: "event-head" }, h("strong", {}, agent.name || agent.agent_id), h("span", { class: "tag" }, agent.agent_id), h("span", { class: "muted" }, `A2A ${agent.protocol_version} · ${agent.version || ""}`)),
      h("p", { class: "desc" }, agent.description || ""),
      h("p", {}, "Card from ", link(agent.url), " · endpoint ", link(agent.endpoint)),
      (agent.skill_tags || []).length ? h("p", {}, agent.skill_tags.map((t) => h("span", { class: "tag" }, String(t)))) : null,
      h("p", { class: "muted" }, `Registered by ${agent.owner || "—"}`),
      h("details", {}, h("summary", {}, "Agent card"), json(agent.card || {})),
      h("div", { class: "row" }, refreshCard, forget),
    );
  }

  async function refresh() {
    const answer = await api("GET", "/v1/a2a/agents");
    const agents = answer.agents || [];
    fill(list, agents.length ? agents.map(card) : h("p", { class: "muted" }, "No A2A agents registered."));
  }

  return { show: () => busy(null, note, refresh) };
}
