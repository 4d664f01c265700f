// For admins: the audit log (who registered, changed or removed which server or agent) and the
// access policies, with a JSON editor to create, replace or remove one.

import { api } from "./api.js";
import { busy, fill, h, json, say, when } from "./dom.js";

export function create(root) {
  const note = h("p", { class: "note" });
  const audit = h("tbody");
  const older = h("button", { type: "button", hidden: true }, "Older entries");
  const policies = h("div", {});
  const defaults = h("p", { class: "muted" });
  let before = null;

  const name = h("input", { id: "policy-name", required: true, pattern: "[A-Za-z0-9._\\-]{1,64}" });
  const text = h("textarea", { id: "policy-json", rows: 6, class: "mono", required: true });
  text.value = JSON.stringify({ match: { subs: ["team-a-*"] }, deny: { tools: ["*__delete_*"] } }, null, 2);
  const editor = h(
    "form",
    { class: "card", "aria-labelledby": "policy-title" },
    h("h3", { id: "policy-title" }, "Create or replace a policy"),
    h("div", { class: "field" }, h("label", { for: "policy-name" }, "Name"), name),
    h("div", { class: "field" }, h("label", { for: "policy-json" }, "Policy (match, allow, deny)"), text),
    h("button", { type: "submit", class: "primary" }, "Save"),
  );
  editor.addEventListener("submit", (event) => {
    event.preventDefault();
    busy(editor.querySelector("button"), note, async () => {
      let body;
      try {
        body = JSON.parse(text.value);
      } catch {
        throw new Error("The policy is not valid JSON.");
      }
      await api("PUT", `/v1/policies/${encodeURIComponent(name.value.trim())}`, body);
      say(note, `Policy ${name.value.trim()} saved.`);
      await loadPolicies();
    });
  });
  older.addEventListener("click", () => busy(older, note, () => loadAudit(false)));

  fill(
    root,
    h("h2", {}, "Audit log and policies"),
    note,
    h("h3", {}, "Audit log"),
    h("div", { class: "scroll" }, h("table", {}, h("thead", {}, h("tr", {}, ["When", "Who", "Action", "Target", "Detail"].map((c) => h("th", { scope: "col" }, c)))), audit)),
    older,
    h("h3", {}, "Policies"),
    defaults,
    policies,
    editor,
  );

  async function loadAudit(first) {
    const answer = await api("GET", `/v1/audit?limit=50${!first && before ? `&before=${before}` : ""}`);
    const rows = (answer.entries || []).map((e) => h("tr", {}, h("td", {}, when(e.at)), h("td", {}, e.actor), h("td", {}, h("span", { class: "tag" }, e.action)), h("td", {}, e.target), h("td", { class: "mono" }, e.detail)));
    if (first) fill(audit, rows.length ? rows : h("tr", {}, h("td", { colspan: 5, class: "muted" }, "Nothing yet.")));
    else audit.append(...rows);
    before = answer.next_cursor ?? null;
    older.hidden = before === null;
  }

  function policy(p) {
    const remove = h("button", { type: "button", class: "danger", hidden: p.defined_in === "config" }, "Remove");
    remove.addEventListener("click", () => busy(remove, note, async () => {
      if (!confirm(`Remove the policy ${p.name}?`)) return;
      await api("DELETE", `/v1/policies/${encodeURIComponent(p.name)}`);
      await loadPolicies();
    }));
    const edit = h("button", { type: "button" }, "Edit");
    edit.addEventListener("click", () => {
      name.value = p.name;
      const { match, allow, deny } = p;
      text.value = JSON.stringify({ match, allow: allow ?? undefined, deny: deny ?? undefined }, null, 2);
      text.focus();
    });
    return h("article", { class: "card" }, h("div", { class: "event-head" }, h("strong", {}, p.name), h("span", { class: "tag" }, `from ${p.defined_in}`)), json({ match: p.match, allow: p.allow, deny: p.deny }), h("div", { class: "row" }, edit, remove));
  }

  async function loadPolicies() {
    const answer = await api("GET", "/v1/policies");
    defaults.textContent = `Access default: ${answer.access_default} (what a caller no allow rule matches sees).`;
    const list = answer.policies || [];
    fill(policies, list.length ? list.map(policy) : h("p", { class: "muted" }, "No policies."));
  }

  return {
    show: () => busy(null, note, async () => {
      await loadAudit(true);
      await loadPolicies();
    }),
  };
}
