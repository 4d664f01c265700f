// The servers page: every registered server with its status, counts and last error, kept live by
// `bridge/server_status` events; register (fields per transport), import an `mcpServers` file,
// reconnect, unregister, and the link for servers waiting for an OAuth authorization.

import { api, ApiError } from "./api.js";
import { busy, fill, h, link, say, when } from "./dom.js";
import { list, pairs } from "./forms.js";

export function create(root, ctx) {
  const servers = new Map();
  const owners = new Map();
  const links = new Map();
  const note = h("p", { class: "note" });
  const body = h("tbody");
  const waiting = h("div", { class: "card", hidden: true });
  const refreshButton = h("button", { type: "button", onclick: () => busy(refreshButton, note, refresh) }, "Refresh");

  fill(
    root,
    h("div", { class: "heading" }, h("h2", {}, "Servers"), refreshButton),
    note,
    waiting,
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { class: "servers" },
        h("thead", {}, h("tr", {}, ["Server", "Status", "Transport", "Tools · resources · prompts", "Last ping", "Last error", "Owner", "Replica", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
        body,
      ),
    ),
    registerForm(),
    importForm(),
  );

  async function refresh() {
    const answer = await api("GET", "/v1/servers");
    servers.clear();
    for (const s of answer.servers || []) servers.set(s.server_id, s);
    if (ctx.admin) await loadOwners();
    render();
  }

  /** Who registered each server, from the audit log (admins only: the server list does not say). */
  async function loadOwners() {
    try {
      const audit = await api("GET", "/v1/audit?limit=1000");
      owners.clear();
      for (const entry of audit.entries || []) {
        if (entry.action === "server.register" && !owners.has(entry.target)) owners.set(entry.target, entry.actor);
      }
    } catch {
      // The owner column stays empty.
    }
  }

  function render() {
    const rows = [...servers.values()].sort((a, b) => a.server_id.localeCompare(b.server_id));
    fill(body, rows.length ? rows.map(row) : h("tr", {}, h("td", { colspan: 9, class: "muted" }, "No servers yet: register one below.")));
    const auth = rows.filter((s) => s.status === "auth_required");
    waiting.hidden = auth.length === 0;
    fill(
      waiting,
      h("h3", {}, "Waiting for authorization"),
      h("p", {}, "These servers need a person to approve the bridge's access at their authorization server. Open the link, approve, and the server becomes ready."),
      h("ul", {}, auth.map(authItem)),
    );
  }

  function authItem(s) {
    const out = h("span", {});
    if (links.has(s.server_id)) out.append(link(links.get(s.server_id), "Open the authorization page"));
    const button = h("button", { type: "button" }, "Get the link");
    button.addEventListener("click", () =>
      busy(button, note, async () => {
        const answer = await api("POST", `/v1/servers/${encodeURIComponent(s.server_id)}/authorize`);
        links.set(s.server_id, answer.authorization_url);
        render();
      }),
    );
    return h("li", { dataset: { authServer: s.server_id } }, h("strong", {}, s.server_id), " ", button, " ", out);
  }

  function row(s) {
    const reconnect = h("button", { type: "button" }, "Reconnect");
    reconnect.addEventListener("click", () =>
      busy(reconnect, note, async () => {
        say(note, `Reconnecting ${s.server_id}…`);
        const answer = await api("POST", `/v1/servers/${encodeURIComponent(s.server_id)}/reconnect`);
        if (answer.server) servers.set(s.server_id, answer.server);
        say(note, `${s.server_id}: ${answer.server ? answer.server.status : "reconnected"}`);
        render();
      }),
    );
    const remove = h("button", { type: "button", class: "danger" }, "Unregister");
    remove.addEventListener("click", () =>
      busy(remove, note, async () => {
        if (!confirm(`Unregister ${s.server_id}? Its tools leave the catalogue.`)) return;
        await api("DELETE", `/v1/servers/${encodeURIComponent(s.server_id)}`);
        servers.delete(s.server_id);
        say(note, `${s.server_id} unregistered.`);
        render();
      }),
    );
    const software = [s.server_name, s.server_version].filter(Boolean).join(" ");
    return h(
      "tr",
      { dataset: { server: s.server_id } },
      h("td", {}, h("strong", {}, s.server_id), s.name && s.name !== s.server_id ? h("div", {}, s.name) : null, software ? h("div", { class: "muted" }, software, s.mcp_version ? ` · MCP ${s.mcp_version}` : "") : null),
      h("td", {}, h("span", { class: `status ${s.status}`, dataset: { status: s.status } }, s.status)),
      h("td", {}, s.transport),
      h("td", { class: "num" }, `${s.tools_count} · ${s.resources_count} · ${s.prompts_count}`),
      h("td", { class: "num" }, s.last_ping_ms ? `${s.last_ping_ms.toFixed(1)} ms` : "—", h("div", { class: "muted" }, when(s.connected_at))),
      h("td", { class: "error-text" }, s.error || ""),
      h("td", {}, owners.get(s.server_id) || "—"),
      h("td", {}, s.replica || "—"),
      h("td", { class: "actions" }, reconnect, remove),
    );
  }

  function registerForm() {
    const form = h("form", { class: "card", id: "register-form", "aria-labelledby": "register-title" });
    const result = h("p", { class: "note" });
    const input = (name, label, attrs = {}) => {
      const id = `reg-${name}`;
      return h("div", { class: "field" }, h("label", { for: id }, label), h(attrs.rows ? "textarea" : "input", { id, name, ...attrs }));
    };
    const transport = h("select", { id: "reg-transport", name: "transport" }, ["stdio", "http", "sse", "ws"].map((t) => h("option", { value: t }, t)));
    const stdio = h("fieldset", { class: "grid" }, h("legend", {}, "Command (stdio, admins only)"), input("command", "Command", { placeholder: "npx" }), input("args", "Arguments, one per line", { rows: 2 }), input("cwd", "Working directory"), input("env", "Environment, NAME=value per line (stored secret)", { rows: 2, class: "mono" }));
    const remote = h("fieldset", { class: "grid", hidden: true }, h("legend", {}, "Address"), input("url", "URL", { type: "url", placeholder: "https://example.com/mcp" }), input("headers", "Headers, Name: value per line (stored secret)", { rows: 2, class: "mono" }));
    transport.addEventListener("change", () => {
      stdio.hidden = transport.value !== "stdio";
      remote.hidden = transport.value === "stdio";
    });
    const reconnect = h("input", { id: "reg-auto", name: "auto_reconnect", type: "checkbox", checked: true });
    fill(
      form,
      h("h3", { id: "register-title" }, "Register a server"),
      h("div", { class: "grid" }, input("server_id", "Server id", { required: true, pattern: "[A-Za-z0-9.\\-]+(_[A-Za-z0-9.\\-]+)*", placeholder: "everything" }), input("name", "Display name"), h("div", { class: "field" }, h("label", { for: "reg-transport" }, "Transport"), transport), input("timeout", "Timeout (s)", { type: "number", min: 1, placeholder: "60" })),
      stdio,
      remote,
      input("allow", "Tool allow list (comma separated, empty: all)"),
      h("div", { class: "field" }, h("span", { class: "choice" }, reconnect, h("label", { for: "reg-auto" }, "Reconnect on its own"))),
      h("button", { type: "submit", class: "primary" }, "Register"),
      result,
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const button = form.querySelector("button[type=submit]");
      busy(button, result, async () => {
        const v = (name) => form.elements[name].value.trim();
        const config = { server_id: v("server_id"), transport: transport.value, auto_reconnect: reconnect.checked };
        if (v("name")) config.name = v("name");
        if (v("timeout")) config.timeout = Number(v("timeout"));
        if (v("allow")) config.tool_allow_list = list(v("allow"));
        if (transport.value === "stdio") {
          config.cmd = [v("command"), ...form.elements.args.value.split("\n").map((a) => a.trim()).filter(Boolean)];
          if (v("cwd")) config.cwd = v("cwd");
          if (v("env")) config.env = pairs(form.elements.env.value, "=");
        } else {
          config.url = v("url");
          if (v("headers")) config.headers = pairs(form.elements.headers.value, ":");
        }
        say(result, `Registering ${config.server_id}…`);
        const answer = await api("POST", "/v1/servers", { config });
        if (answer.server) servers.set(answer.server.server_id, answer.server);
        say(result, `${config.server_id}: ${answer.server ? answer.server.status : "registered"}`);
        await refresh();
      });
    });
    return form;
  }

  function importForm() {
    const text = h("textarea", { id: "import-text", rows: 5, class: "mono", placeholder: '{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}' });
    const file = h("input", { id: "import-file", type: "file", accept: ".json,application/json" });
    file.addEventListener("change", async () => {
      if (file.files[0]) text.value = await file.files[0].text();
    });
    const result = h("div", {});
    const note2 = h("p", { class: "note" });
    const form = h(
      "form",
      { class: "card", "aria-labelledby": "import-title" },
      h("h3", { id: "import-title" }, "Import an mcpServers file"),
      h("p", { class: "muted" }, "The JSON of Claude Desktop or Cursor (mcpServers) or VS Code (servers). Each key becomes a server id; commands need an admin token."),
      h("div", { class: "field" }, h("label", { for: "import-file" }, "File"), file),
      h("div", { class: "field" }, h("label", { for: "import-text" }, "or paste it"), text),
      h("button", { type: "submit" }, "Import"),
      note2,
      result,
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      busy(form.querySelector("button[type=submit]"), note2, async () => {
        let parsed;
        try {
          parsed = JSON.parse(text.value);
        } catch {
          throw new Error("That is not valid JSON.");
        }
        const answer = await api("POST", "/v1/servers/import", parsed);
        say(note2, "Imported.");
        fill(result, h("ul", {}, (answer.results || []).map((r) => h("li", {}, h("strong", {}, r.server_id), ` ${r.action}`, r.error ? h("span", { class: "error-text" }, ` ${r.error}`) : null))));
        await refresh();
      });
    });
    return form;
  }

  let timer = null;
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(() => refresh().catch(() => {}), 300);
  };
  ctx.onEvent(({ type, message }) => {
    if (type !== "mcp/server/push") return;
    if (message.method === "bridge/server_status" && message.params && message.params.server_id) {
      servers.set(message.params.server_id, message.params);
      if (!root.hidden) render();
    } else if (message.method === "bridge/auth_required" && message.params) {
      if (message.params.authorization_url) links.set(message.params.server_id, message.params.authorization_url);
      later();
    } else if (/list_changed$/.test(message.method || "")) {
      later();
    }
  });

  return {
    show() {
      refresh().catch((e) => say(note, e instanceof ApiError ? e.message : String(e), "error"));
    },
  };
}
