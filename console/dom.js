// Building the DOM safely. Everything shown here may come from an upstream server (names,
// descriptions, schemas, results, prompts), so text only ever goes in as text nodes: nothing in
// nothing in this console parses HTML, and attributes are set one by one (never an event
// handler attribute, never href or src: link() and the media blocks check those URLs).

/**
 * An element: `h("button", {type: "submit", class: "primary", onclick: fn}, "Send")`.
 * Strings among the children become text nodes; null, undefined and false are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) {
      if (typeof value !== "function") throw new Error(`${key} takes a function`);
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.className = value;
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key === "href" || key === "src") {
      throw new Error(`use link() or dataImage() for ${key}`);
    } else if (key in el && typeof value !== "string") {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A link only when the URL is http(s); anything else (javascript:, data:, …) is shown as text. */
export function link(url, text = url) {
  let parsed = null;
  try {
    parsed = new URL(String(url), location.href);
  } catch {
    parsed = null;
  }
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    return h("span", { class: "mono" }, String(text));
  }
  const a = h("a", { target: "_blank", rel: "noopener noreferrer" }, String(text));
  a.href = parsed.href;
  return a;
}

const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"];
const AUDIO_TYPES = ["audio/wav", "audio/x-wav", "audio/mpeg", "audio/mp3", "audio/ogg", "audio/webm", "audio/flac", "audio/aac", "audio/mp4"];
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A `data:` URL of a whitelisted type with valid base64, or null. SVG is not an image here: it can carry script. */
function dataUrl(mimeType, data, allowed) {
  const type = String(mimeType || "").toLowerCase().split(";")[0].trim();
  const body = String(data || "").replace(/\s+/g, "");
  if (!allowed.includes(type) || !BASE64.test(body) || body.length % 4 !== 0) return null;
  return `data:${type};base64,${body}`;
}

/** Pretty JSON in a <pre>, as text. */
export function json(value) {
  return h("pre", { class: "json" }, JSON.stringify(value, null, 2));
}

/** MCP content blocks, each shown as what it is: text, image, audio, a resource link or an embedded resource. */
export function content(blocks) {
  const list = Array.isArray(blocks) ? blocks : [];
  return h("div", { class: "blocks" }, list.map(block));
}

function block(b) {
  if (!b || typeof b !== "object") return h("pre", { class: "block" }, String(b));
  const label = (text) => h("span", { class: "kind" }, text);
  switch (b.type) {
    case "text":
      return h("div", { class: "block text", dataset: { kind: "text" } }, label("text"), h("pre", {}, String(b.text ?? "")));
    case "image": {
      const url = dataUrl(b.mimeType, b.data, IMAGE_TYPES);
      if (!url) return refused("image", b.mimeType);
      const img = h("img", { alt: `image (${b.mimeType})` });
      img.src = url;
      return h("div", { class: "block image", dataset: { kind: "image" } }, label(`image ${b.mimeType}`), img);
    }
    case "audio": {
      const url = dataUrl(b.mimeType, b.data, AUDIO_TYPES);
      if (!url) return refused("audio", b.mimeType);
      const audio = h("audio", { controls: true });
      audio.src = url;
      return h("div", { class: "block audio", dataset: { kind: "audio" } }, label(`audio ${b.mimeType}`), audio);
    }
    case "resource_link":
      return h(
        "div",
        { class: "block link", dataset: { kind: "resource_link" } },
        label("resource link"),
        link(b.uri, b.name || b.uri),
        b.name ? h("span", { class: "mono muted" }, ` ${b.uri}`) : null,
        b.description ? h("p", {}, String(b.description)) : null,
      );
    case "resource": {
      const r = b.resource || {};
      return h(
        "div",
        { class: "block resource", dataset: { kind: "resource" } },
        label(`resource ${r.mimeType || ""}`),
        h("div", { class: "mono" }, String(r.uri ?? "")),
        typeof r.text === "string" ? h("pre", {}, r.text) : h("span", { class: "muted" }, `(binary, ${String(r.blob || "").length} base64 characters)`),
      );
    }
    default:
      return h("div", { class: "block other" }, label(String(b.type)), json(b));
  }
}

function refused(kind, mimeType) {
  return h("div", { class: "block refused", dataset: { kind: `${kind}-refused` } }, `${kind} of type ${String(mimeType)} not shown (not an allowed ${kind} type or not base64)`);
}

/** A short, readable time: 14:03:21. */
export function time(date) {
  return date.toLocaleTimeString([], { hour12: false });
}

/** Seconds since the epoch as a local date and time, or a dash. */
export function when(seconds) {
  if (!seconds) return "—";
  return new Date(seconds * 1000).toLocaleString([], { hour12: false });
}

/** A message in `el` for a moment: what an action did, or why it failed. */
export function say(el, text, kind = "ok") {
  el.className = `note ${kind}`;
  el.textContent = text;
  el.setAttribute("role", kind === "error" ? "alert" : "status");
}

/** Runs an async action behind a button, disabling it meanwhile and reporting failures in `note`. */
export async function busy(button, note, action) {
  if (button) button.disabled = true;
  try {
    return await action();
  } catch (error) {
    if (note) say(note, error.message || String(error), "error");
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}
