#!/usr/bin/env python3
"""Client under test for the MCP conformance suite's `client` mode: mcp-bridge, driven over its REST API.

    conformance client --scenario <name> --command "python client_driver.py <name>"

The suite starts a test MCP server, then runs the command with that server's URL appended, so this program is
called as `client_driver.py <scenario> <server-url>`. It does not speak MCP itself: it has mcp-bridge (the MCP
client being tested) register the URL as an http server, and then does over REST what the scenario expects
an MCP client to do; the suite's checks judge what the bridge sent to the test server.

Environment:
    MCP_BRIDGE_URL      the bridge's base URL, e.g. http://127.0.0.1:8080
    MCP_BRIDGE_TOKEN    a JWT the bridge accepts (an admin token is fine; registering http servers needs none)
    CONFORMANCE_DRIVER_TIMEOUT   seconds any one REST call may take (default 20; the suite's default client
                                 timeout is 30 s for the whole run)

Scenarios (read from the suite's own source, @modelcontextprotocol/conformance 0.1.16):
    initialize        the test server checks the initialize request (protocolVersion 2025-06-18 or 2025-11-25,
                      clientInfo name and version): registering it is the whole job; the tools are listed too
    tools_call        the server offers add_numbers(a, b); it must be called: calls <id>__add_numbers {a: 5, b: 3}
    elicitation-sep1034-client-defaults
                      calling test_client_elicitation_defaults makes the server send elicitation/create with a
                      schema whose five optional fields have defaults; the client must answer `accept` with every
                      default filled in. The driver opens GET /v1/events first, calls the tool, and answers the
                      mcp/elicit/req event with `content: {}` so that the defaults are the bridge's to fill in
                      (SEP-1034). CONFORMANCE_ELICIT_CONTENT (a JSON object) replaces that `{}`.
    sse-retry         calling test_reconnection gets an SSE stream with a priming event (`retry: 500`) that the
                      server closes after ~50 ms; the client must reconnect with GET and Last-Event-ID after
                      ~500 ms, where the result then arrives. The driver just calls the tool and waits.

Every run registers a fresh server id and unregisters it at the end (also on SIGTERM, which the suite sends
on its timeout). The exit status is 0 when the driver's own steps succeeded, 1 when a step failed and 2 on a
usage error; the suite's checks, not this status, decide whether a scenario passes.
"""

import json
import os
import queue
import re
import signal
import socket
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

SCENARIOS = ("initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry")


class StepFailed(Exception):
    """A step of the scenario did not do what it should; the message says what happened."""


def log(*parts) -> None:
    print(time.strftime("%H:%M:%S"), *parts, flush=True)


class Bridge:
    """The bridge's REST API, with the agent's bearer token."""

    def __init__(self, base_url: str, token: str, timeout: float) -> None:
        self.base = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def _request(self, method: str, path: str, body=None, timeout=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            req.add_header(name, value)
        return urllib.request.urlopen(req, timeout=timeout or self.timeout)

    def call(self, method: str, path: str, body=None, ok=(200, 201, 202, 204)):
        """One JSON request; returns (status, parsed body or None). Raises StepFailed on a status not in `ok`."""
        try:
            with self._request(method, path, body) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as err:
            status, raw = err.code, err.read()
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            raise StepFailed(f"{method} {path}: no answer from the bridge: {err}") from err
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode("utf-8", "replace")
        if status not in ok:
            raise StepFailed(f"{method} {path} -> HTTP {status}: {json.dumps(parsed)[:2000]}")
        return status, parsed

    def open_events(self):
        """GET /v1/events; returns the open response once its headers are in (the stream then exists)."""
        try:
            return self._request("GET", "/v1/events", headers={"Accept": "text/event-stream"}, timeout=3600)
        except urllib.error.HTTPError as err:
            raise StepFailed(f"GET /v1/events -> HTTP {err.code}: {err.read()[:2000]!r}") from err
        except (urllib.error.URLError, OSError) as err:
            raise StepFailed(f"GET /v1/events: no answer from the bridge: {err}") from err


class EventReader(threading.Thread):
    """Parses an SSE response into (event, data, id) tuples on a queue; None when the stream ends."""

    def __init__(self, response) -> None:
        super().__init__(daemon=True)
        self.response = response
        self.events: "queue.Queue" = queue.Queue()

    def run(self) -> None:
        event, data, event_id = "message", [], None
        try:
            for raw in self.response:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if not line:
                    if data:
                        self.events.put((event, "\n".join(data), event_id))
                    event, data = "message", []
                    continue
                if line.startswith(":"):
                    continue
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "event":
                    event = value
                elif name == "data":
                    data.append(value)
                elif name == "id":
                    event_id = value
        except Exception as err:  # the stream ended or was closed under us
            self.events.put(("driver/stream-error", str(err), None))
        finally:
            self.events.put(None)

    def close(self) -> None:
        # Shut the socket down first: close() alone waits for the reader thread's blocked read (until the
        # bridge's next keep-alive comment, up to MCP_BRIDGE_KEEPALIVE_SECS).
        try:
            self.response.fp.raw._sock.shutdown(socket.SHUT_RDWR)
        except Exception:
            pass
        try:
            self.response.close()
        except Exception:
            pass


def server_id_for(scenario: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", scenario).strip("-")[:30]
    return f"conf-{slug}-{uuid.uuid4().hex[:8]}"


def register(bridge: Bridge, server_id: str, url: str, deadline: float) -> dict:
    _, answer = bridge.call(
        "POST", "/v1/servers", {"config": {"server_id": server_id, "transport": "http", "url": url}}
    )
    log("registered:", json.dumps(answer))
    server = (answer or {}).get("server") or {}
    # A registration may come back still connecting; wait (briefly) for a final status.
    while server.get("status") == "connecting" and time.monotonic() < deadline:
        time.sleep(0.2)
        _, got = bridge.call("GET", f"/v1/servers/{server_id}")
        server = (got or {}).get("server") or {}
    if server.get("status") != "ready":
        raise StepFailed(
            f"server {server_id} is {server.get('status')!r}, not 'ready': error={server.get('error')!r}"
        )
    return server


def list_tools(bridge: Bridge, server_id: str) -> list:
    query = urllib.parse.urlencode({"server_id": server_id})
    _, answer = bridge.call("GET", f"/v1/tools?{query}")
    tools = (answer or {}).get("tools") or []
    log("tools:", [t.get("name") for t in tools])
    return tools


def call_tool(bridge: Bridge, server_id: str, tool: str, arguments: dict) -> dict:
    name = f"{server_id}__{tool}"
    log("calling", name, json.dumps(arguments))
    _, answer = bridge.call("POST", "/v1/tools/call", {"name": name, "arguments": arguments})
    log("call answer:", json.dumps(answer)[:2000])
    if (answer or {}).get("is_error"):
        raise StepFailed(f"{name} answered is_error=true: {json.dumps(answer)[:2000]}")
    return answer


def need_tool(tools: list, server_id: str, tool: str) -> None:
    if f"{server_id}__{tool}" not in [t.get("name") for t in tools]:
        raise StepFailed(f"{server_id}__{tool} is not in the catalogue")


def run_elicitation(bridge: Bridge, server_id: str, tools: list) -> None:
    need_tool(tools, server_id, "test_client_elicitation_defaults")
    content = json.loads(os.environ.get("CONFORMANCE_ELICIT_CONTENT") or "{}")
    reader = EventReader(bridge.open_events())  # before the call, so the request cannot be missed
    reader.start()
    outcome: dict = {}

    def call() -> None:
        try:
            outcome["answer"] = call_tool(bridge, server_id, "test_client_elicitation_defaults", {})
        except Exception as err:
            outcome["error"] = err

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    answered = False
    deadline = time.monotonic() + bridge.timeout
    try:
        while not answered and time.monotonic() < deadline and (caller.is_alive() or not reader.events.empty()):
            try:
                item = reader.events.get(timeout=0.2)
            except queue.Empty:
                continue
            if item is None:
                raise StepFailed("the event stream ended before the elicitation request came")
            event, data, event_id = item
            if event == "driver/stream-error":
                raise StepFailed(f"the event stream failed: {data}")
            try:
                message = json.loads(data)
            except ValueError:
                log("event", event, "(not JSON):", data[:500])
                continue
            if event != "mcp/elicit/req" or message.get("server_id") != server_id:
                log("event", event, "id", event_id, json.dumps(message)[:500])
                continue
            log("elicitation request:", json.dumps(message))
            if message.get("mode", "form") != "form":
                raise StepFailed(f"expected a form elicitation, got mode {message.get('mode')!r}")
            reply = {"req_id": message["id"], "action": "accept", "content": content}
            status, ack = bridge.call("POST", "/v1/elicitation/responses", reply)
            log("elicitation answered:", json.dumps(reply), "->", status, json.dumps(ack))
            answered = True
        caller.join(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        reader.close()
    if not answered:
        raise StepFailed("no mcp/elicit/req event for this server arrived on GET /v1/events")
    if caller.is_alive():
        raise StepFailed("the tool call did not finish after the elicitation was answered")
    if "error" in outcome:
        raise outcome["error"]


def run(scenario: str, server_url: str, bridge: Bridge, server_id: str) -> None:
    deadline = time.monotonic() + bridge.timeout
    register(bridge, server_id, server_url, deadline)
    tools = list_tools(bridge, server_id)
    if scenario == "initialize":
        return
    if scenario == "tools_call":
        need_tool(tools, server_id, "add_numbers")
        answer = call_tool(bridge, server_id, "add_numbers", {"a": 5, "b": 3})
        texts = [c.get("text", "") for c in answer.get("content") or [] if c.get("type") == "text"]
        if not any("8" in t for t in texts):
            raise StepFailed(f"add_numbers(5, 3) did not answer 8: {texts}")
    elif scenario == "elicitation-sep1034-client-defaults":
        run_elicitation(bridge, server_id, tools)
    elif scenario == "sse-retry":
        need_tool(tools, server_id, "test_reconnection")
        call_tool(bridge, server_id, "test_reconnection", {})


def main(argv: list) -> int:
    if len(argv) != 3 or argv[1] not in SCENARIOS:
        print(f"usage: {argv[0]} <{'|'.join(SCENARIOS)}> <server-url>", file=sys.stderr)
        return 2
    scenario, server_url = argv[1], argv[2]
    base, token = os.environ.get("MCP_BRIDGE_URL"), os.environ.get("MCP_BRIDGE_TOKEN")
    if not base or not token:
        print("MCP_BRIDGE_URL and MCP_BRIDGE_TOKEN must be set", file=sys.stderr)
        return 2
    bridge = Bridge(base, token, float(os.environ.get("CONFORMANCE_DRIVER_TIMEOUT") or 20))
    server_id = server_id_for(scenario)

    def on_term(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    log(f"scenario {scenario}: server {server_url} as {server_id} on {bridge.base}")
    status = 0
    try:
        run(scenario, server_url, bridge, server_id)
        log("driver: done")
    except StepFailed as err:
        log("driver: FAILED:", err)
        print(f"driver: {scenario}: {err}", file=sys.stderr)
        status = 1
    finally:
        try:
            code, answer = bridge.call("DELETE", f"/v1/servers/{server_id}", ok=(200, 202, 204, 404))
            log("unregistered:", code, json.dumps(answer)[:500])
        except StepFailed as err:
            print(f"driver: unregistering {server_id}: {err}", file=sys.stderr)
            status = status or 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
