// Forms built from JSON Schemas: a tool's input schema and an elicitation's requestedSchema.
// Names, titles and descriptions come from upstream servers and are shown as text.

import { h } from "./dom.js";

let counter = 0;

/** The first type of a schema that is not "null" (`["string", "null"]` is a string). */
function typeOf(schema) {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (type) return type;
  if (Array.isArray(schema.enum)) return "string";
  if (Array.isArray(schema.oneOf) && schema.oneOf.every((o) => o && "const" in o)) return "string";
  return "json";
}

/** The choices of an enum, or of a oneOf of consts with titles, as [value, label]. */
function choices(schema) {
  if (Array.isArray(schema.enum)) {
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
    return schema.enum.map((v, i) => [v, names[i] ?? v]);
  }
  if (Array.isArray(schema.oneOf) && schema.oneOf.every((o) => o && "const" in o)) {
    return schema.oneOf.map((o) => [o.const, o.title ?? o.const]);
  }
  return null;
}

/** The choices of an array of enum values (`items.enum`, or `items.anyOf`/`oneOf` of consts). */
function multiChoices(schema) {
  if (typeOf(schema) !== "array" || !schema.items || typeof schema.items !== "object") return null;
  const items = schema.items;
  const consts = items.anyOf || items.oneOf;
  if (Array.isArray(consts) && consts.every((o) => o && "const" in o)) return consts.map((o) => [o.const, o.title ?? o.const]);
  return Array.isArray(items.enum) ? items.enum.map((v) => [v, v]) : null;
}

/** A group of checkboxes for a multiple choice. */
function multiField(id, name, title, hint, schema, options) {
  const defaults = Array.isArray(schema.default) ? schema.default : [];
  const boxes = options.map(([value, label], i) => {
    const box = h("input", { id: `${id}-${i}`, type: "checkbox", name });
    box.checked = defaults.includes(value);
    return { value, el: h("span", { class: "choice" }, box, h("label", { for: box.id }, String(label))), box };
  });
  const el = h("fieldset", { class: "field" }, h("legend", {}, title), boxes.map((b) => b.el), hint ? h("small", { class: "hint" }, hint) : null);
  return { name, el, read: () => boxes.filter((b) => b.box.checked).map((b) => b.value) };
}

function field(name, schema, required) {
  const id = `f${++counter}`;
  const type = typeOf(schema);
  const options = choices(schema);
  const multi = multiChoices(schema);
  const title = typeof schema.title === "string" && schema.title ? schema.title : name;
  const hint = typeof schema.description === "string" ? schema.description : "";
  if (multi) return multiField(id, name, title, hint, schema, multi);
  let input;
  let read;
  if (options) {
    input = h("select", { id, name });
    if (!required) input.append(h("option", { value: "" }, "—"));
    options.forEach(([value, label], i) => {
      const option = h("option", { value: String(i) }, String(label));
      if (schema.default !== undefined && value === schema.default) option.selected = true;
      input.append(option);
    });
    read = () => (input.value === "" ? undefined : options[Number(input.value)][0]);
  } else if (type === "boolean") {
    const box = h("input", { id, name, type: "checkbox" });
    box.checked = schema.default === true;
    const el = h("div", { class: "field" }, h("span", { class: "choice" }, box, h("label", { for: id }, title)), hint ? h("small", { class: "hint" }, hint) : null);
    return { name, el, read: () => box.checked };
  } else if (type === "number" || type === "integer") {
    input = h("input", { id, name, type: "number", step: type === "integer" ? "1" : "any", required });
    if (typeof schema.default === "number") input.value = String(schema.default);
    if (typeof schema.minimum === "number") input.min = String(schema.minimum);
    if (typeof schema.maximum === "number") input.max = String(schema.maximum);
    read = () => (input.value === "" ? undefined : Number(input.value));
  } else if (type === "string") {
    // An input, not a textarea, so Enter submits (long text pastes into an input as well).
    input = h("input", { id, name, type: inputType(schema.format), required });
    if (typeof schema.default === "string") input.value = schema.default;
    read = () => (input.value === "" && !required ? undefined : input.value);
  } else {
    input = h("textarea", { id, name, rows: 3, class: "mono", required, placeholder: "JSON" });
    if (schema.default !== undefined) input.value = JSON.stringify(schema.default);
    read = () => {
      if (input.value.trim() === "") return undefined;
      try {
        return JSON.parse(input.value);
      } catch {
        throw new Error(`${name}: not valid JSON`);
      }
    };
  }
  const label = h("label", { for: id }, title, required ? h("span", { class: "req", title: "required" }, " *") : null);
  const el = h("div", { class: "field" }, label, input, hint ? h("small", { class: "hint" }, hint) : null);
  return { name, el, read };
}

function inputType(format) {
  return { email: "email", uri: "url", date: "date", "date-time": "datetime-local" }[format] || "text";
}

/** How many references deep, and how many nodes in all, resolveRefs follows (as the bridge's src/schema.rs). */
const MAX_REF_DEPTH = 8;
const MAX_NODES = 10000;

/**
 * The schema with its local `$ref`s (`#/$defs/…`, `#/definitions/…`, any `#/` pointer) replaced by
 * what they point at, keywords beside a `$ref` winning; a remote, dangling or cyclic reference,
 * or one past the bounds, stays as it is, and the top level's `$defs`/`definitions` are left out:
 * the same copy as the bridge's `schema::resolve` (tests/api/console.rs compares the two).
 */
export function resolveRefs(root) {
  let budget = MAX_NODES;
  const target = (ref) => {
    if (typeof ref !== "string" || !ref.startsWith("#")) return undefined;
    let node = root;
    for (const raw of ref.slice(1).split("/").slice(1)) {
      let key;
      try {
        key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
      } catch {
        return undefined;
      }
      if (!node || typeof node !== "object" || !Object.hasOwn(node, key)) return undefined;
      node = node[key];
    }
    return node;
  };
  const copy = (node, path, top = false) => {
    if (!node || typeof node !== "object") return node;
    if (budget <= 0) return Array.isArray(node) ? [] : node.$ref !== undefined ? { $ref: node.$ref } : {};
    budget -= 1;
    if (Array.isArray(node)) return node.map((item) => copy(item, path));
    const found = target(node.$ref);
    if (found !== undefined && path.length < MAX_REF_DEPTH && !path.includes(node.$ref)) {
      const resolved = copy(found, [...path, node.$ref]);
      if (!resolved || typeof resolved !== "object" || Array.isArray(resolved)) return resolved;
      for (const [key, value] of Object.entries(node)) {
        if (key !== "$ref" && !(top && (key === "$defs" || key === "definitions"))) resolved[key] = copy(value, path);
      }
      return resolved;
    }
    const out = {};
    for (const [key, value] of Object.entries(node)) {
      if (top && (key === "$defs" || key === "definitions")) continue;
      out[key] = copy(value, path);
    }
    return out;
  };
  return copy(root, [], true);
}

/**
 * A form for an object schema: `{el, read}`, where read() answers the arguments object (fields
 * left empty and not required are left out) or throws with the field that is wrong.
 */
export function schemaForm(schema) {
  schema = resolveRefs(schema);
  const props = schema && typeof schema.properties === "object" && schema.properties ? schema.properties : {};
  const required = Array.isArray(schema?.required) ? schema.required : [];
  // Required fields first: the bridge's JSON objects keep no order of their own.
  const entries = Object.entries(props).sort(([a], [b]) => Number(required.includes(b)) - Number(required.includes(a)));
  const fields = entries.map(([name, sub]) => field(name, sub && typeof sub === "object" ? sub : {}, required.includes(name)));
  const el = h("div", { class: "fields" }, fields.length ? fields.map((f) => f.el) : h("p", { class: "muted" }, "No arguments."));
  const read = () => {
    const out = {};
    for (const f of fields) {
      const value = f.read();
      if (value !== undefined) out[f.name] = value;
    }
    return out;
  };
  return { el, read };
}

/** "KEY=value" (or "Name: value") lines as an object; blank lines skipped. */
export function pairs(text, separator) {
  const out = {};
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const at = line.indexOf(separator);
    if (at < 1) throw new Error(`"${line.trim()}": expected NAME${separator}value`);
    out[line.slice(0, at).trim()] = line.slice(at + separator.length).trim();
  }
  return out;
}

/** A comma- or newline-separated list. */
export function list(text) {
  return text.split(/[,\n]/).map((s) => s.trim()).filter(Boolean);
}
