// The console's shell: signing in and out, the pages (one module each, built once and kept, so a
// call in flight on one page goes on while another is shown), the hash route, and the one event
// stream every page listens to.

import { api, claims, EventStream, isAdmin, setToken, token, whenUnauthorized } from "./api.js";
import { fill, h } from "./dom.js";
import * as servers from "./servers.js";
import * as catalogue from "./catalogue.js";
import * as events from "./events.js";
import * as requests from "./requests.js";
import * as approvals from "./approvals.js";
import * as agents from "./agents.js";
import * as admin from "./admin.js";

const MODULES = { servers, catalogue, events, requests, approvals, agents, admin };
const $ = (id) => document.getElementById(id);

const pages = {};
const listeners = [];
let stream = null;

/** What every page gets: the event stream, the route, and the pending-request count. */
const ctx = {
  admin: false,
  onEvent(callback) {
    listeners.push(callback);
  },
  go(page) {
    location.hash = page;
  },
  pending(count) {
    const badge = $("pending-count");
    badge.hidden = count === 0;
    badge.textContent = String(count);
    const banner = $("pending-banner");
    banner.hidden = count === 0 || location.hash === "#requests";
    if (count) {
      const a = h("a", {}, "Answer on the Requests page");
      a.href = "#requests";
      fill(banner, `${count} request${count === 1 ? "" : "s"} from servers wait${count === 1 ? "s" : ""} for your answer. `, a);
    }
  },
};

function show(name) {
  if (!token()) return;
  if (!MODULES[name] || (name === "admin" && !ctx.admin)) name = "servers";
  for (const key of Object.keys(MODULES)) {
    const section = $(`page-${key}`);
    section.hidden = key !== name;
  }
  for (const a of document.querySelectorAll("#nav a")) {
    if (a.dataset.page === name) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (!pages[name]) pages[name] = MODULES[name].create($(`page-${name}`), ctx);
  pages[name].show();
  $("pending-banner").hidden = name === "requests" || $("pending-count").hidden;
  document.title = `${name[0].toUpperCase()}${name.slice(1)} · mcp-bridge console`;
}

function route() {
  show(location.hash.replace(/^#/, "") || "servers");
}

function signedIn() {
  ctx.admin = isAdmin();
  $("sign-in").hidden = true;
  $("nav").hidden = false;
  $("who").hidden = false;
  document.querySelector("[data-admin]").hidden = !ctx.admin;
  const who = claims();
  $("who-name").textContent = `${String(who.sub ?? "?")}${ctx.admin ? " (admin)" : ""}`;
  // These two listen from the start: a request or an event that arrives on another page counts.
  pages.requests = requests.create($("page-requests"), ctx);
  pages.events = events.create($("page-events"), ctx);
  stream = new EventStream(
    (event) => listeners.forEach((listener) => listener(event)),
    (state) => {
      const el = $("stream-state");
      el.textContent = `stream: ${state}`;
      el.dataset.state = state;
    },
  );
  stream.start();
  route();
}

function signOut(message = "") {
  if (stream) stream.stop();
  setToken("");
  // A fresh page forgets every page's state with the token.
  sessionStorage.setItem("mcp-bridge.message", message);
  location.hash = "";
  location.reload();
}

async function signIn(event) {
  event.preventDefault();
  const input = $("token");
  const value = input.value.trim().replace(/^Bearer\s+/i, "");
  const error = $("sign-in-error");
  error.textContent = "";
  setToken(value);
  try {
    await api("GET", "/v1/servers");
  } catch (e) {
    setToken("");
    error.textContent = e.status === 401 ? "The bridge does not accept this token." : e.message;
    return;
  }
  input.value = "";
  signedIn();
}

function main() {
  $("sign-in-form").addEventListener("submit", signIn);
  $("sign-out").addEventListener("click", () => signOut());
  whenUnauthorized(() => signOut("Your token expired or was refused: sign in again."));
  window.addEventListener("hashchange", route);
  // Enter submits a form from any input; in a text area, where Enter is a new line, Ctrl+Enter does.
  document.addEventListener("keydown", (event) => {
    const area = event.target;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && area instanceof HTMLTextAreaElement && area.form) {
      event.preventDefault();
      area.form.requestSubmit();
    }
  });
  const message = sessionStorage.getItem("mcp-bridge.message");
  sessionStorage.removeItem("mcp-bridge.message");
  if (message) $("sign-in-error").textContent = message;
  if (token()) signedIn();
  else $("token").focus();
}

main();
