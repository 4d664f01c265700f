// The operator console (/ui) in a real browser: Debian's Chromium, headless, driven by
// playwright-core. Run by tests/api/console.rs against the real service:
//
//   node tests/browser/console.mjs BASE_URL ADMIN_TOKEN SCREENSHOT_DIR [OAUTH_MCP_URL [AGENT_TOKEN]]
//
// OAUTH_MCP_URL: an MCP endpoint behind OAuth whose authorization server approves at once
// (tests/peers/oauth_server.py); the bridge's public URL must be BASE_URL. AGENT_TOKEN: a token
// without the admin role.
// Prints one JSON line per step ({"step", "ok", ...}) and a last line {"done": true, "ok", "errors"};
// exits 0 only when every step passed and the browser logged no error (console errors, uncaught
// exceptions and CSP violations all count).

import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const here = path.dirname(fileURLToPath(import.meta.url));
const peers = path.join(here, "..", "peers");
const { chromium } = createRequire(path.join(peers, "package.json"))("playwright-core");

const [base, adminToken, shots, oauthUrl, agentToken] = process.argv.slice(2);
if (!base || !adminToken || !shots) {
  console.error("usage: console.mjs BASE_URL ADMIN_TOKEN SCREENSHOT_DIR");
  process.exit(2);
}
const everything = path.join(peers, "node_modules/.bin/mcp-server-everything");
const python = path.join(peers, ".venv/bin/python");
const hostile = path.join(peers, "hostile_server.py");
const WAIT = 20000;

const errors = [];
let failed = false;
const report = (line) => console.log(JSON.stringify(line));

async function step(name, body) {
  const started = Date.now();
  try {
    const extra = (await body()) || {};
    report({ step: name, ok: true, ms: Date.now() - started, ...extra });
  } catch (error) {
    failed = true;
    // What the page looked like, outside the screenshot dir (whose pictures are committed).
    const picture = path.join(tmpdir(), `console-failure-${process.pid}.png`);
    await page.screenshot({ path: picture, fullPage: true }).catch(() => {});
    const text = await page.evaluate(() => document.body.innerText.slice(0, 3000)).catch(() => "");
    report({ step: name, ok: false, ms: Date.now() - started, error: String(error && error.stack ? error.stack : error), screenshot: picture, text });
    throw error;
  }
}

/** The REST API from outside the page (what another agent or the operator's script would do). */
async function rest(method, route, body) {
  const resp = await fetch(base + route, {
    method,
    headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: resp.status, body: await resp.json().catch(() => null) };
}

/**
 * The browser reaches the bridge through this TCP relay, so the test can cut its connections as a
 * network drop would (Chromium's offline emulation leaves a stream that is already open alone).
 */
const relay = await new Promise((resolve) => {
  const target = new URL(base);
  const pairs = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    const pair = [client, upstream];
    pairs.add(pair);
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", close).on("close", close);
    upstream.on("error", close).on("close", close);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.listen(0, "127.0.0.1", () =>
    resolve({
      url: `http://127.0.0.1:${server.address().port}`,
      cut: () => pairs.forEach(([client, upstream]) => (client.destroy(), upstream.destroy())),
      close: () => server.close(),
    }),
  );
});
const ui = relay.url;

const profile = mkdtempSync(path.join(tmpdir(), "console-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  viewport: { width: 1280, height: 800 },
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
const page = context.pages()[0] || (await context.newPage());
page.setDefaultTimeout(WAIT);
page.on("console", (msg) => {
  if (msg.type() === "error" || msg.type() === "warning") errors.push(`console ${msg.type()}: ${msg.text()}`);
});
page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
page.on("dialog", (dialog) => dialog.accept());

const shot = async (name) => {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(shots, `${name}.png`) });
};
const nav = async (name) => {
  await page.click(`#nav a[data-page="${name}"]`);
  await page.waitForSelector(`#page-${name}:not([hidden])`);
};
const pwned = () => page.evaluate(() => ({ pwned: window.__pwned ?? null, title: document.title }));

/** Opens a tool of the catalogue by searching for it. */
async function openTool(q, name) {
  await nav("catalogue");
  await page.fill("#tool-search", q);
  await page.press("#tool-search", "Enter");
  await page.click(`button[data-tool="${name}"]`);
  await page.waitForSelector(`.tool-detail h3:text-is("${name}")`);
}

async function callAndWait() {
  await page.click("#call-form button[type=submit]");
  await page.waitForSelector(".result[data-done]");
}

try {
  await step("load /ui with a strict CSP and no token", async () => {
    const resp = await page.goto(`${ui}/ui`);
    const csp = resp.headers()["content-security-policy"] || "";
    for (const part of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"]) {
      if (!csp.includes(part)) throw new Error(`CSP lacks ${part}: ${csp}`);
    }
    if (resp.headers()["x-content-type-options"] !== "nosniff") throw new Error("no nosniff");
    await page.waitForSelector("#sign-in-form");
    await shot("sign-in");
    return { csp };
  });

  await step("sign in with the keyboard: Tab shows focus, Enter submits", async () => {
    let focus = null;
    for (let i = 0; i < 15 && (!focus || focus.id !== "token"); i++) {
      await page.keyboard.press("Tab");
      focus = await page.evaluate(() => {
        const el = document.activeElement;
        const style = getComputedStyle(el);
        return { id: el.id, tag: el.tagName, outline: style.outlineStyle, width: parseFloat(style.outlineWidth) };
      });
      if (focus.tag === "BODY") continue;
      if (focus.outline === "none" || !(focus.width > 0)) throw new Error(`focus not visible on ${JSON.stringify(focus)}`);
    }
    if (focus.id !== "token") throw new Error(`Tab never reached the token field: ${JSON.stringify(focus)}`);
    await page.keyboard.type(adminToken);
    await page.keyboard.press("Enter");
    await page.waitForSelector("#nav:not([hidden])");
    await page.waitForSelector('#stream-state[data-state="live"]');
    const stored = await page.evaluate(() => sessionStorage.getItem("mcp-bridge.token") === document.querySelector("#token").value || !!sessionStorage.getItem("mcp-bridge.token"));
    if (!stored) throw new Error("the token is not in sessionStorage");
    if (page.url().includes(adminToken)) throw new Error("the token is in the URL");
  });

  await step("register server-everything from the form and see it ready", async () => {
    await page.fill("#reg-server_id", "ev");
    await page.selectOption("#reg-transport", "stdio");
    await page.fill("#reg-command", everything);
    await page.fill("#reg-args", "stdio");
    await page.press("#reg-server_id", "Enter");
    await page.waitForSelector('tr[data-server="ev"] [data-status="ready"]');
  });

  await step("register the hostile fixture from the form", async () => {
    await page.fill("#reg-server_id", "hostile");
    await page.fill("#reg-command", python);
    await page.fill("#reg-args", hostile);
    await page.click("#register-form button[type=submit]");
    await page.waitForSelector('tr[data-server="hostile"] [data-status="ready"]');
    if (!oauthUrl) await shot("servers");
  });

  if (oauthUrl) {
    await step("register an OAuth server and authorize it from its link", async () => {
      await page.fill("#reg-server_id", "guarded");
      await page.selectOption("#reg-transport", "http");
      await page.fill("#reg-url", oauthUrl);
      await page.press("#reg-url", "Enter");
      await page.waitForSelector('tr[data-server="guarded"] [data-status="auth_required"]');
      const item = page.locator('li[data-auth-server="guarded"]');
      await item.locator("button").click();
      const link = item.locator("a");
      await link.waitFor();
      const href = await link.getAttribute("href");
      if (!href.startsWith(new URL(oauthUrl).origin)) throw new Error(`not the authorization server's: ${href}`);
      await shot("servers");
      const [consent] = await Promise.all([context.waitForEvent("page"), link.click()]);
      await consent.waitForLoadState();
      await page.waitForSelector('tr[data-server="guarded"] [data-status="ready"]');
      const landed = consent.url();
      await consent.close();
      return { callback: landed.split("?")[0] };
    });
  }

  await step("search the catalogue", async () => {
    await nav("catalogue");
    await page.fill("#tool-search", "echo back the message");
    await page.press("#tool-search", "Enter");
    await page.waitForSelector('button[data-tool="ev__echo"]');
    return { shown: await page.locator(".tools li").count() };
  });

  await step("call echo from its form and see the text", async () => {
    await openTool("echo", "ev__echo");
    await page.fill('#call-form [name="message"]', "hello from the console");
    await page.press('#call-form [name="message"]', "Enter");
    await page.waitForSelector('.result[data-done="ok"] .block.text pre:has-text("hello from the console")');
  });

  await step("call the image tool and see the image", async () => {
    await openTool("tiny image", "ev__get-tiny-image");
    await callAndWait();
    await page.waitForSelector('.result .block.image img[src^="data:image/png;base64,"]');
    const width = await page.$eval(".result .block.image img", (img) => img.naturalWidth);
    if (!(width > 0)) throw new Error("the image did not decode");
    await page.waitForSelector(".result .block.text");
    await shot("catalogue");
    return { naturalWidth: width };
  });

  await step("answer a sampling request while the call waits", async () => {
    await openTool("sampling request", "ev__trigger-sampling-request");
    await page.fill('#call-form [name="prompt"]', "Write a haiku about gateways");
    await page.click("#call-form button[type=submit]");
    await page.waitForSelector("#pending-count:not([hidden])");
    await page.waitForSelector("#pending-banner:not([hidden])");
    await nav("requests");
    const card = page.locator('article[data-kind="sampling"]');
    await card.locator('pre:has-text("Write a haiku about gateways")').waitFor();
    await card.locator("textarea[name=text]").fill("Packets cross the bridge");
    await shot("requests");
    await card.locator("textarea[name=text]").press("Control+Enter");
    await page.waitForSelector("#pending-count[hidden]", { state: "attached" });
    await nav("catalogue");
    await page.waitForSelector('.result[data-done="ok"] pre:has-text("Packets cross the bridge")');
  });

  await step("answer an elicitation from the form its requestedSchema makes", async () => {
    await openTool("elicitation request", "ev__trigger-elicitation-request");
    await page.click("#call-form button[type=submit]");
    await page.waitForSelector("#pending-count:not([hidden])");
    await nav("requests");
    const card = page.locator('article[data-kind="elicitation"]');
    await card.locator('input[name="name"]').fill("Ada Lovelace");
    await card.locator('fieldset:has(legend:text-is("Untitled Multiple Select Enum")) label:text-is("Piano")').click();
    if ((await card.locator('input[name="integer"]').inputValue()) !== "42") throw new Error("the default is not filled in");
    await shot("elicitation");
    await card.locator('input[name="name"]').press("Enter");
    await page.waitForSelector("#pending-count[hidden]", { state: "attached" });
    await nav("catalogue");
    await page.waitForSelector('.result[data-done="ok"] pre:has-text("Name: Ada Lovelace")');
    const raw = await page.textContent(".result");
    if (!raw.includes('"Piano"') || !raw.includes('"Guitar"')) throw new Error(`the multiple choice did not arrive: ${raw}`);
  });

  await step("see a tools list_changed arrive live on the events page", async () => {
    await nav("events");
    const grown = await rest("POST", "/v1/tools/call", { name: "hostile__grow", arguments: { name: "sprout" } });
    if (grown.status !== 200) throw new Error(`grow: ${grown.status} ${JSON.stringify(grown.body)}`);
    await page.waitForSelector('li.event[data-method="notifications/tools/list_changed"]');
    await page.waitForSelector('li.event[data-method="bridge/server_status"]');
    await shot("events");
  });

  await step("the stream reconnects and resumes with Last-Event-ID", async () => {
    const streams = [];
    const seen = (request) => {
      if (new URL(request.url()).pathname === "/v1/events") streams.push(request.headers()["last-event-id"] || "");
    };
    page.on("request", seen);
    const pushes = () => page.locator('li.event[data-method="notifications/tools/list_changed"]').count();
    const before = await pushes();
    const quiet = errors.length;
    relay.cut();
    await page.waitForSelector('#stream-state[data-state="reconnecting"]');
    // What happens while the page is cut off is replayed from the bridge's buffer.
    const grown = await rest("POST", "/v1/tools/call", { name: "hostile__grow", arguments: { name: "sprout2" } });
    if (grown.status !== 200) throw new Error(`grow: ${grown.status}`);
    await page.waitForSelector('#stream-state[data-state="live"]');
    await page.waitForFunction((n) => document.querySelectorAll('li.event[data-method="notifications/tools/list_changed"]').length > n, before);
    page.off("request", seen);
    // The cut itself is logged as failed loads: expected here, and only here.
    const during = errors.splice(quiet);
    const cut = during.filter((e) => !/net::ERR_|network error/i.test(e));
    errors.push(...cut);
    const resumed = streams.filter(Boolean);
    if (!resumed.length) throw new Error(`no reconnect sent Last-Event-ID: ${JSON.stringify(streams)}`);
    return { reconnects: streams.length, last_event_id: resumed.at(-1), replayed: (await pushes()) - before, expected_network_errors: during.length - cut.length };
  });

  await step("the hostile server's markup is shown as text and never runs", async () => {
    await openTool("innocent helper", "hostile__pwn");
    const description = await page.textContent(".tool-detail .desc");
    if (!description.includes("<img src=x onerror=") || !description.includes("<script>")) throw new Error(`not literal: ${description}`);
    const label = await page.textContent("#call-form label");
    if (!label.includes("<script>")) throw new Error(`label not literal: ${label}`);
    await callAndWait();
    const text = await page.textContent(".result .block.text pre");
    if (!text.includes("<img src=x onerror=") || !text.includes("<script>window.__pwned=2")) throw new Error(`result not literal: ${text}`);
    await page.waitForSelector('.result [data-kind="image-refused"]');
    await page.waitForSelector('.result .block.audio audio[src^="data:audio/wav;base64,"]', { state: "attached" });
    const anchors = await page.$$eval(".result a", (as) => as.map((a) => a.href));
    if (anchors.length) throw new Error(`a javascript: link became an anchor: ${anchors}`);
    await page.waitForTimeout(300);
    const state = await pwned();
    if (state.pwned !== null || state.title === "pwned") throw new Error(`payload ran: ${JSON.stringify(state)}`);
    const injected = await page.$$eval("img[src='x'], main script, svg", (els) => els.length);
    if (injected) throw new Error(`${injected} injected elements in the DOM`);
    await shot("hostile");
    return state;
  });

  await step("A2A agents page", async () => {
    await nav("agents");
    await page.waitForSelector("#page-agents .agents p, #page-agents .agents article");
    await shot("agents");
  });

  if (agentToken) {
    await step("approve a held call from the approvals page", async () => {
      // The agent's sums wait for an admin; the console (the admin) approves the one held.
      const hold = { match: { subs: ["alice"] }, approve: { tools: ["ev__get-sum"], approvers: { roles: ["admin"] }, expires: "10m" } };
      const put = await rest("PUT", "/v1/policies/sums-wait", hold);
      if (put.status >= 300) throw new Error(`policy: ${put.status} ${JSON.stringify(put.body)}`);
      const asAgent = (method, route, body) => fetch(base + route, {
        method,
        headers: { Authorization: `Bearer ${agentToken}`, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (resp) => ({ status: resp.status, body: await resp.json().catch(() => null) }));
      const held = await asAgent("POST", "/v1/tools/call", { name: "ev__get-sum", arguments: { a: 2, b: 3 } });
      if (held.status !== 202 || held.body.status !== "input_required") throw new Error(`held: ${held.status} ${JSON.stringify(held.body)}`);
      const taskId = held.body.task_id;
      await nav("approvals");
      const card = `#page-approvals article[data-approval="${taskId}"]`;
      await page.waitForSelector(card);
      await shot("approvals");
      await page.click(`${card} button.primary`);
      await page.waitForSelector(card, { state: "detached" });
      for (let i = 0; ; i++) {
        const task = await asAgent("GET", `/v1/tasks/${taskId}/result`);
        if (task.status === 200) {
          if (!JSON.stringify(task.body.content).includes("5")) throw new Error(`result: ${JSON.stringify(task.body)}`);
          break;
        }
        if (i > 100) throw new Error(`the approved call did not finish: ${task.status} ${JSON.stringify(task.body)}`);
        await page.waitForTimeout(100);
      }
      const removed = await rest("DELETE", "/v1/policies/sums-wait");
      if (removed.status >= 300) throw new Error(`policy delete: ${removed.status}`);
      return { task_id: taskId };
    });
  }

  await step("audit log and policies (admin)", async () => {
    const put = await rest("PUT", "/v1/policies/no-deletes", { match: { subs: ["team-a-*"] }, deny: { tools: ["*__delete_*"] } });
    if (put.status >= 300) throw new Error(`policy: ${put.status}`);
    await nav("admin");
    await page.waitForSelector('#page-admin td span.tag:text-is("server.register")');
    await page.waitForSelector('#page-admin strong:text-is("no-deletes")');
    await shot("admin");
  });

  await step("unregister from the servers page", async () => {
    await nav("servers");
    await page.click('tr[data-server="hostile"] button.danger');
    await page.waitForSelector('tr[data-server="hostile"]', { state: "detached" });
  });

  await step("a 400 px window: no horizontal overflow on any page", async () => {
    await page.setViewportSize({ width: 400, height: 800 });
    const overflow = {};
    for (const name of ["servers", "catalogue", "events", "requests", "approvals", "agents", "admin"]) {
      await nav(name);
      await page.waitForTimeout(150);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      if (width > 400) overflow[name] = width;
    }
    await nav("servers");
    await shot("narrow");
    if (Object.keys(overflow).length) throw new Error(`wider than 400 px: ${JSON.stringify(overflow)}`);
  });

  if (agentToken) {
    await step("an agent without the admin role sees no admin page", async () => {
      // Another tab: sessionStorage, and so the token, is per tab.
      const tab = await context.newPage();
      tab.on("console", (msg) => msg.type() === "error" && errors.push(`agent tab: ${msg.text()}`));
      tab.on("pageerror", (error) => errors.push(`agent tab: ${error.message}`));
      await tab.goto(`${ui}/ui#admin`);
      await tab.fill("#token", agentToken);
      await tab.press("#token", "Enter");
      await tab.waitForSelector("#page-servers:not([hidden])");
      if (await tab.isVisible('#nav a[data-page="admin"]')) throw new Error("the admin link shows");
      if (!(await tab.isHidden("#page-admin"))) throw new Error("the admin page shows");
      const who = await tab.textContent("#who-name");
      await tab.close();
      return { who };
    });
  }

  await step("no errors in the browser", async () => {
    const state = await pwned();
    if (state.pwned !== null) throw new Error(`payload ran: ${JSON.stringify(state)}`);
    if (errors.length) throw new Error(errors.join("\n"));
  });
} catch {
  // Reported by its step.
} finally {
  await context.close();
  relay.close();
  rmSync(profile, { recursive: true, force: true });
}
report({ done: true, ok: !failed && errors.length === 0, errors });
process.exit(!failed && errors.length === 0 ? 0 : 1);
