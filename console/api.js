// The bridge's public REST API and its event stream, with the token the person pasted. The token
// lives in sessionStorage (this tab only, gone when it closes) and travels only in the
// Authorization header, never in a URL.

const KEY = "mcp-bridge.token";

export function token() {
  return sessionStorage.getItem(KEY) || "";
}

export function setToken(value) {
  if (value) sessionStorage.setItem(KEY, value);
  else sessionStorage.removeItem(KEY);
}

/** What the token says of its holder (display only: the bridge decides what it may do). */
export function claims() {
  try {
    const part = token().split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const json = JSON.parse(atob(part.padEnd(part.length + ((4 - (part.length % 4)) % 4), "=")));
    return json && typeof json === "object" ? json : {};
  } catch {
    return {};
  }
}

export function isAdmin() {
  const roles = claims().roles;
  return Array.isArray(roles) ? roles.includes("admin") : roles === "admin";
}

/** An answer the bridge refused: its status and the A2E error body. */
export class ApiError extends Error {
  constructor(status, body) {
    const why = body && typeof body.error === "string" ? body.error : `HTTP ${status}`;
    super(body && body.code ? `${why} (${body.code})` : why);
    this.status = status;
    this.body = body;
  }
}

let onUnauthorized = () => {};
/** Called when the bridge answers 401: the token expired or was never good. */
export function whenUnauthorized(callback) {
  onUnauthorized = callback;
}

/** Calls the API; resolves with the JSON body of a 2xx, rejects with an ApiError otherwise. */
export async function api(method, path, body, { signal } = {}) {
  const headers = { Authorization: `Bearer ${token()}`, Accept: "application/json" };
  const init = { method, headers, signal, cache: "no-store", credentials: "omit" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  let json = null;
  try {
    json = await resp.json();
  } catch {
    json = null;
  }
  if (resp.status === 401) onUnauthorized();
  if (!resp.ok) throw new ApiError(resp.status, json);
  return json;
}

/** A query string from the entries of `params` that have a value. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** A fresh request id (crypto.randomUUID needs a secure context; this works on plain http too). */
export function newId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The agent's event stream, `GET /v1/events`, read with fetch: EventSource cannot send an
 * Authorization header. Parses the SSE framing itself, reconnects with a growing delay and
 * resumes with `Last-Event-ID`, so nothing the bridge still buffers is missed.
 */
export class EventStream {
  constructor(onEvent, onState) {
    this.onEvent = onEvent;
    this.onState = onState;
    this.lastId = "";
    this.delay = 500;
    this.abort = null;
    this.stopped = true;
  }

  start() {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop();
  }

  stop() {
    this.stopped = true;
    if (this.abort) this.abort.abort();
    this.onState("off");
  }

  async loop() {
    while (!this.stopped) {
      this.abort = new AbortController();
      try {
        await this.read(this.abort.signal);
      } catch (error) {
        if (this.stopped) return;
        if (error instanceof ApiError && error.status === 401) {
          onUnauthorized();
          return;
        }
      }
      if (this.stopped) return;
      this.onState("reconnecting");
      await new Promise((resolve) => setTimeout(resolve, this.delay));
      this.delay = Math.min(this.delay * 2, 15000);
    }
  }

  async read(signal) {
    const headers = { Authorization: `Bearer ${token()}`, Accept: "text/event-stream" };
    if (this.lastId) headers["Last-Event-ID"] = this.lastId;
    const resp = await fetch("/v1/events", { headers, signal, cache: "no-store", credentials: "omit" });
    if (!resp.ok || !resp.body) throw new ApiError(resp.status, null);
    this.onState("live");
    this.delay = 500;
    const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let event = { data: [], type: "", id: null };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop();
      for (const line of lines) event = this.line(line, event);
    }
  }

  /** One line of the SSE framing (https://html.spec.whatwg.org/#event-stream-interpretation). */
  line(line, event) {
    if (line === "") {
      if (event.id !== null) this.lastId = event.id;
      if (event.data.length) this.dispatch(event.type || "message", event.data.join("\n"));
      return { data: [], type: "", id: null };
    }
    if (line.startsWith(":")) return event;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") event.data.push(value);
    else if (field === "event") event.type = value;
    else if (field === "id" && !value.includes("\0")) event.id = value;
    return event;
  }

  dispatch(type, data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      message = { raw: data };
    }
    this.onEvent({ type, id: this.lastId, message, at: new Date() });
  }
}
