// Calls a policy holds for a person (GET /v1/approvals: those the signed-in agent may decide on),
// each with its caller, tool and exact arguments, and Approve / Deny (POST /v1/approvals/{task_id}
// with the call's args_sha256, so the decision is on exactly what is shown). Listed again on each
// `bridge/approval_required` push and when the page is shown.

import { api } from "./api.js";
import { busy, fill, h, json, say, when } from "./dom.js";

export function create(root, ctx) {
  const note = h("p", { class: "note" });
  const list = h("div", { class: "approvals" });
  const reload = h("button", { type: "button" }, "Refresh");
  reload.addEventListener("click", () => busy(reload, note, refresh));
  fill(
    root,
    h("h2", {}, "Approvals"),
    h("p", { class: "muted" }, "Calls a policy holds until an approver decides. Approve runs the call once, with exactly these arguments; Deny ends it failed. You cannot approve your own calls."),
    h("div", { class: "row" }, reload),
    note,
    list,
  );

  async function decide(approval, decision, reason) {
    const body = { decision, args_sha256: approval.args_sha256 };
    if (reason) body.reason = reason;
    await api("POST", `/v1/approvals/${encodeURIComponent(approval.task_id)}`, body);
    say(note, `${approval.tool} for ${approval.caller}: ${decision === "approve" ? "approved" : "denied"}.`);
    await refresh();
  }

  function card(approval) {
    const approve = h("button", { type: "button", class: "primary" }, "Approve");
    const deny = h("button", { type: "button", class: "danger" }, "Deny");
    const id = `why-${approval.task_id}`;
    const reason = h("input", { id, name: "reason", placeholder: "optional" });
    approve.addEventListener("click", () => busy(approve, note, () => decide(approval, "approve")));
    deny.addEventListener("click", () => busy(deny, note, () => decide(approval, "deny", reason.value.trim())));
    return h(
      "article",
      { class: "card request", dataset: { approval: approval.task_id } },
      h("div", { class: "event-head" }, h("strong", {}, String(approval.tool)), h("span", { class: "tag" }, String(approval.caller)), h("span", { class: "muted" }, `until ${when(approval.expires_at)}`)),
      h("p", { class: "muted" }, `policy ${approval.policy} (${approval.policy_version}) · task ${approval.task_id}`),
      json(approval.arguments ?? {}),
      h("p", { class: "muted" }, `args_sha256 ${approval.args_sha256}`),
      h("div", { class: "field" }, h("label", { for: id }, "Reason (for a denial)"), reason),
      h("div", { class: "row" }, approve, deny),
    );
  }

  async function refresh() {
    const body = await api("GET", "/v1/approvals");
    const approvals = Array.isArray(body?.approvals) ? body.approvals : [];
    fill(list, approvals.length ? approvals.map(card) : h("p", { class: "muted" }, "No call waits for your decision."));
  }

  ctx.onEvent((event) => {
    if (event.message?.method === "bridge/approval_required") busy(null, note, refresh);
  });

  return { show: () => busy(null, note, refresh) };
}
