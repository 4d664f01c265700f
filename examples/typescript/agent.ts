// An agent of mcp-bridge in TypeScript: REST through the client generated from the bridge's
// OpenAPI document (openapi-fetch over the types in schema.d.ts, which openapi-typescript writes:
// scripts/gen-clients.sh), and a hand-written SSE reader for the event stream (generated clients
// do not do server-sent events).
//
// It opens its event stream (GET /v1/events) first, lists the registered servers, registers
// server-everything over stdio as `ts-example`, calls `ts-example__echo`, calls a tool that does
// not exist and reads the error answer (404 `mcp_tool_not_found`) through the generated types,
// then calls `ts-example__trigger-sampling-request` and, while that call is in flight, answers
// the `mcp/sample/req` the server sends back through the bridge (POST /v1/sampling/responses).
// Last, it unregisters the server.
//
// Needs openapi-fetch (`npm install` in examples/typescript, see package.json; scripts/examples.sh
// links the pinned copy of tests/peers instead). Run with Node 22.18 or later, which strips the
// types itself:  node examples/typescript/agent.ts  (Node 22.6 to 22.17: add
// --experimental-strip-types.) Only erasable TypeScript is used here: type annotations,
// interfaces and type aliases; no enums, namespaces or parameter properties. It type-checks with
// `tsc -p examples/typescript` (strict; scripts/openapi-check.sh runs it).
//
// Environment:
//   MCP_BRIDGE_URL     the bridge, e.g. http://127.0.0.1:8080
//   MCP_BRIDGE_TOKEN   an admin token (registering a stdio server runs a command on the host):
//                      mcp-bridge token --sub me --admin
//   EVERYTHING_BIN     the server-everything executable (run as `$EVERYTHING_BIN stdio`)
//
// Exits 0 when every step worked, 1 with a message on stderr otherwise (2 for a missing variable).

import createClient from "openapi-fetch";
import type { Client } from "openapi-fetch";

import type { components, paths } from "./schema.d.ts";

type ErrorBody = components["schemas"]["ErrorBody"];
type ToolCallResponse = components["schemas"]["ToolCallResponse"];

const SERVER_ID = "ts-example";
const ANSWER_TEXT = "Hello from the TypeScript agent";

// Every wait is bounded (milliseconds).
const REQUEST_TIMEOUT = 60_000; // one REST request (registration connects the server: up to ~30 s)
const STREAM_OPEN_TIMEOUT = 10_000; // until the event stream's response headers arrive
const SAMPLING_WAIT = 30_000; // until the mcp/sample/req event arrives
const CALL_TIMEOUT = 30_000; // the sampling call, once answered
const SERVER_TIMEOUT = 60; // the server's own `timeout` (seconds): bounds each call upstream

class ExampleError extends Error {}

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

// ---------------------------------------------------------------------------------------------
// Server-sent events
// ---------------------------------------------------------------------------------------------

interface SseEvent {
  event: string; // the `event:` field ("message" when absent); for the bridge, the A2E type
  data: string; // the `data:` lines, joined with "\n"
  id: string | undefined; // the last `id:` seen on the stream (for Last-Event-ID)
}

/** Splits a byte stream into lines: "\n", "\r\n" and "\r" all end a line. */
async function* readLines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8");
  const reader = body.getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (;;) {
        const end = buffer.search(/\r\n|\r|\n/);
        // A "\r" at the very end may be the first half of "\r\n": wait for the next chunk.
        if (end < 0 || (end === buffer.length - 1 && buffer[end] === "\r" && !done)) break;
        const width = buffer.startsWith("\r\n", end) ? 2 : 1;
        yield buffer.slice(0, end);
        buffer = buffer.slice(end + width);
      }
      if (done) {
        if (buffer !== "") yield buffer;
        return;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * Turns the lines of a text/event-stream into events.
 *
 * An event is a run of `field: value` lines ended by a blank line. `data:` lines accumulate
 * (joined with newlines), `event:` names the event, `id:` sets the last event id; a line that
 * starts with `:` is a comment (the bridge's keep-alives) and is ignored, as are unknown fields.
 * One space after the colon is not part of the value. A block with no data is not dispatched.
 */
async function* parseSse(lines: AsyncIterable<string>): AsyncGenerator<SseEvent> {
  let eventType = "";
  let dataLines: string[] = [];
  let lastId: string | undefined = undefined;
  for await (const line of lines) {
    if (line === "") {
      if (dataLines.length > 0) {
        yield { event: eventType || "message", data: dataLines.join("\n"), id: lastId };
      }
      eventType = "";
      dataLines = [];
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "event") eventType = value;
    else if (name === "data") dataLines.push(value);
    else if (name === "id" && !value.includes("\0")) lastId = value;
    // `retry:` and anything else: nothing to do here.
  }
}

/** The agent's GET /v1/events, read in the background into a queue. */
class EventStream {
  private readonly queue: Array<SseEvent | Error> = [];
  private wake: (() => void) | undefined = undefined;
  private readonly abort = new AbortController();
  private reading: Promise<void> = Promise.resolve();
  private readonly bridgeUrl: string;
  private readonly headers: Record<string, string>;

  constructor(bridgeUrl: string, headers: Record<string, string>) {
    this.bridgeUrl = bridgeUrl;
    this.headers = headers;
  }

  /** Resolves once the bridge has answered 200 (from then on, every event for this agent
   * reaches the stream); the events are then read in the background. */
  async open(): Promise<void> {
    const timer = setTimeout(() => this.abort.abort(new ExampleError("timeout")), STREAM_OPEN_TIMEOUT);
    let response: Response;
    try {
      response = await fetch(`${this.bridgeUrl}/v1/events`, {
        headers: { ...this.headers, accept: "text/event-stream" },
        signal: this.abort.signal,
      });
    } catch (error) {
      clearTimeout(timer);
      if (this.abort.signal.aborted) {
        throw new ExampleError(`the event stream did not open within ${STREAM_OPEN_TIMEOUT / 1000} s`);
      }
      throw new ExampleError(`the event stream could not be opened: ${describeError(error)}`);
    }
    if (response.status !== 200 || response.body === null) {
      const text = await response.text().catch(() => "(no body)"); // still under the timer
      clearTimeout(timer);
      throw new ExampleError(`GET /v1/events answered ${response.status}: ${text}`);
    }
    clearTimeout(timer);
    // No timeout on the stream itself: it is quiet between events (keep-alive comments come
    // every MCP_BRIDGE_KEEPALIVE_SECS); the waits on the queue are bounded.
    this.reading = this.read(response.body);
  }

  close(): Promise<void> {
    this.abort.abort();
    return this.reading;
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const event of parseSse(readLines(body))) {
        describeEvent(event);
        this.push(event);
      }
      this.push(new ExampleError("the event stream ended"));
    } catch (error) {
      if (!this.abort.signal.aborted) this.push(new ExampleError(`the event stream failed: ${describeError(error)}`));
    }
  }

  private push(item: SseEvent | Error): void {
    this.queue.push(item);
    this.wake?.();
  }

  /** The next event that `matches`, within `timeoutMs`. When the promise `unless` settles first
   * (say, the call that should cause the event failed), gives up at once. */
  async waitFor(
    matches: (event: SseEvent) => boolean,
    timeoutMs: number,
    what: string,
    unless?: Promise<unknown>,
  ): Promise<SseEvent> {
    const deadline = Date.now() + timeoutMs;
    const call: { ended?: string } = {}; // set when `unless` settles
    unless?.then(
      (value) => { call.ended = `a result: ${JSON.stringify(value)}`; this.wake?.(); },
      (error) => { call.ended = describeError(error); this.wake?.(); },
    );
    for (;;) {
      const item = this.queue.shift();
      if (item instanceof Error) throw new ExampleError(`while waiting for ${what}: ${item.message}`);
      if (item !== undefined) {
        if (matches(item)) return item;
        continue;
      }
      if (call.ended !== undefined) throw new ExampleError(`no ${what}: the call ended first with ${call.ended}`);
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new ExampleError(`no ${what} within ${timeoutMs / 1000} s`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.wake = () => { clearTimeout(timer); resolve(); };
      });
      this.wake = undefined;
    }
  }
}

function describeEvent(event: SseEvent): void {
  let data: Json;
  try {
    data = JSON.parse(event.data);
  } catch {
    console.log(`  [event ${event.event}] ${event.data.slice(0, 120)}`);
    return;
  }
  let detail: string = data.method ?? data.id ?? "";
  if (data.method === "bridge/server_status") detail += ` -> ${data.params?.status}`;
  console.log(`  [event ${event.event}] server=${data.server_id ?? ""} ${detail}`);
}

// ---------------------------------------------------------------------------------------------
// REST calls
// ---------------------------------------------------------------------------------------------

function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}

type Bridge = Client<paths>;

/** What an openapi-fetch call resolves to: the answer's body as `data` (typed after the 2XX
 * response of the operation) or as `error` (an ErrorBody: every error answer of the API is one). */
interface Answer<T> {
  data?: T;
  error?: ErrorBody;
  response: Response;
}

/** Awaits a REST call; anything but the `expected` status is an ExampleError naming the bridge's
 * `code` and `error`. */
async function expect<T>(what: string, expected: number, call: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await call;
  } catch (error) {
    throw new ExampleError(`${what} failed: ${describeError(error)}`);
  }
  const { data, error, response } = answer;
  if (response.status !== expected || data === undefined) {
    throw new ExampleError(
      `${what} answered HTTP ${response.status} (expected ${expected}): ${error?.code ?? ""} ${error?.error ?? ""}`.trimEnd(),
    );
  }
  return data;
}

async function callTool(
  bridge: Bridge,
  name: string,
  args: Record<string, unknown>,
  timeoutMs = REQUEST_TIMEOUT,
): Promise<ToolCallResponse> {
  const answer = await expect(
    `POST /v1/tools/call ${name}`,
    200,
    bridge.POST("/v1/tools/call", { body: { name, arguments: args }, signal: AbortSignal.timeout(timeoutMs) }),
  );
  // Without `task` the answer is the result itself (with it, a 202 task/create/resp).
  if (answer.type !== "tool/call/resp") throw new ExampleError(`${name} answered ${answer.type}`);
  const result: ToolCallResponse = answer;
  if (result.is_error) throw new ExampleError(`${name} answered a tool error: ${toolText(result)}`);
  return result;
}

/** The text blocks of a tool result (MCP content blocks: `{"type": "text", "text": ...}`). */
function toolText(result: ToolCallResponse): string {
  return result.content
    .filter((block) => block.type === "text")
    .map((block) => String(block.text))
    .join("\n");
}

// ---------------------------------------------------------------------------------------------
// The agent
// ---------------------------------------------------------------------------------------------

async function run(bridgeUrl: string, token: string, everythingBin: string): Promise<void> {
  const headers = { authorization: `Bearer ${token}` };
  const bridge: Bridge = createClient<paths>({ baseUrl: bridgeUrl, headers });
  const timeout = () => AbortSignal.timeout(REQUEST_TIMEOUT);
  const events = new EventStream(bridgeUrl, headers);
  let registered = false;
  const unregister = () =>
    bridge.DELETE("/v1/servers/{server_id}", { params: { path: { server_id: SERVER_ID } }, signal: timeout() });
  try {
    console.log("== 1. open the event stream: GET /v1/events");
    await events.open();
    console.log("   open");

    console.log("== 2. list the registered servers: GET /v1/servers");
    const list = await expect("GET /v1/servers", 200, bridge.GET("/v1/servers", { signal: timeout() }));
    const ids = list.servers.map((server) => `${server.server_id} (${server.status})`);
    console.log(`   ${list.servers.length} server(s)${ids.length > 0 ? ": " + ids.join(", ") : ""}`);

    console.log(`== 3. register server-everything over stdio as '${SERVER_ID}': POST /v1/servers`);
    const registration = await expect(
      "POST /v1/servers",
      201,
      bridge.POST("/v1/servers", {
        body: { config: { server_id: SERVER_ID, transport: "stdio", cmd: [everythingBin, "stdio"], timeout: SERVER_TIMEOUT } },
        signal: timeout(),
      }),
    );
    registered = true;
    const info = registration.server;
    if (info === undefined || info === null) throw new ExampleError("the registration answered no server");
    console.log(`   status=${info.status} tools=${info.tools_count} server_name=${info.server_name}`);

    console.log(`== 4. call ${SERVER_ID}__echo: POST /v1/tools/call`);
    const echo = await callTool(bridge, `${SERVER_ID}__echo`, { message: "hello from TypeScript" });
    console.log(`   result: ${toolText(echo)}`);
    if (!toolText(echo).includes("hello from TypeScript")) {
      throw new ExampleError(`the echo did not come back: ${JSON.stringify(echo)}`);
    }

    console.log(`== 5. call a tool that does not exist: POST /v1/tools/call ${SERVER_ID}__no-such-tool`);
    const missing = await bridge.POST("/v1/tools/call", {
      body: { name: `${SERVER_ID}__no-such-tool`, arguments: {} },
      signal: timeout(),
    });
    const refusal: ErrorBody | undefined = missing.error;
    if (missing.response.status !== 404 || refusal === undefined) {
      throw new ExampleError(`expected 404, got HTTP ${missing.response.status}: ${JSON.stringify(missing.data ?? missing.error)}`);
    }
    console.log(`   HTTP 404 code=${refusal.code} retryable=${refusal.retryable} error=${JSON.stringify(refusal.error)}`);
    if (refusal.code !== "mcp_tool_not_found" || refusal.retryable) {
      throw new ExampleError(`unexpected error answer: ${JSON.stringify(refusal)}`);
    }

    console.log(`== 6. call ${SERVER_ID}__trigger-sampling-request and answer its sampling request`);
    // The call resolves only once the sampling request is answered, so it is not awaited yet.
    const call = callTool(bridge, `${SERVER_ID}__trigger-sampling-request`, { prompt: "Say hello" }, SAMPLING_WAIT + CALL_TIMEOUT);
    call.catch(() => {}); // its failure is reported where it is awaited (or by waitFor)
    const sample = await events.waitFor(
      (e) => e.event === "mcp/sample/req" && JSON.parse(e.data).server_id === SERVER_ID,
      SAMPLING_WAIT,
      "mcp/sample/req event",
      call,
    );
    const request: Json = JSON.parse(sample.data);
    console.log(`   sampling request ${request.id}: ${JSON.stringify(request.messages[0]?.content?.text ?? "")}`);
    const ack = await expect(
      "POST /v1/sampling/responses",
      202,
      bridge.POST("/v1/sampling/responses", {
        body: {
          req_id: request.id,
          content: { type: "text", text: ANSWER_TEXT },
          model: "example-model",
          stop_reason: "endTurn",
        },
        signal: timeout(),
      }),
    );
    console.log(`   answered: POST /v1/sampling/responses -> 202 ok=${ack.ok}`);
    const result = await call;
    const text = toolText(result);
    console.log(`   result: ${text.replaceAll("\n", "\n           ")}`);
    if (!text.includes(ANSWER_TEXT)) {
      throw new ExampleError(`the sampling result does not carry the answer '${ANSWER_TEXT}': ${text}`);
    }

    console.log(`== 7. unregister ${SERVER_ID}: DELETE /v1/servers/${SERVER_ID}`);
    await expect(`DELETE /v1/servers/${SERVER_ID}`, 200, unregister());
    registered = false;
    console.log("   unregistered");
  } finally {
    if (registered) {
      // A step failed: do not leave the server behind.
      await unregister().catch(() => {});
    }
    await events.close();
  }
}

async function main(): Promise<number> {
  const missing = ["MCP_BRIDGE_URL", "MCP_BRIDGE_TOKEN", "EVERYTHING_BIN"].filter((name) => !process.env[name]);
  if (missing.length > 0) {
    console.error(`typescript agent: set ${missing.join(", ")} (see examples/README.md)`);
    return 2;
  }
  try {
    await run(process.env.MCP_BRIDGE_URL!.replace(/\/+$/, ""), process.env.MCP_BRIDGE_TOKEN!, process.env.EVERYTHING_BIN!);
  } catch (error) {
    if (error instanceof ExampleError) console.error(`typescript agent: FAILED: ${error.message}`);
    else console.error(`typescript agent: FAILED unexpectedly: ${error instanceof Error ? error.stack : String(error)}`);
    return 1;
  }
  console.log("typescript agent: OK");
  return 0;
}

// Exit at once: a request still in flight after a failure must not keep the process alive.
main().then((code) => process.exit(code));
