#!/usr/bin/env python3
"""Client under test for the MCP conformance suite's `client` mode: mcp-bridge, driven over its REST API.

    conformance client --scenario <name> --command "python client_driver.py <name>"
    conformance client --suite <group> --command "python client_driver.py"

The suite starts a test MCP server, then runs the command with that server's URL appended, so this program is
called as `client_driver.py <scenario> <server-url>`, or as `client_driver.py <server-url>` with the scenario
in MCP_CONFORMANCE_SCENARIO (a --suite run uses one command for all its scenarios). It does not speak MCP itself: it has mcp-bridge (the MCP
client being tested) register the URL as an http server, and then does over REST what the scenario expects
an MCP client to do; the suite's checks judge what the bridge sent to the test server.

Environment:
    MCP_BRIDGE_URL      the bridge's base URL, e.g. http://127.0.0.1:8080
    MCP_BRIDGE_TOKEN    a JWT the bridge accepts (an admin token is fine; registering http servers needs none)
    MCP_BRIDGE_PUBLIC_URL        the bridge's MCP_BRIDGE_PUBLIC_URL when it is not MCP_BRIDGE_URL: a redirect
                                 to it is followed at MCP_BRIDGE_URL instead, as a TLS-terminating proxy
                                 in front of the bridge would (optional)
    CONFORMANCE_DRIVER_TIMEOUT   seconds any one REST call may take, and the whole scenario (default 20; the
                                 suite's default client timeout is 30 s for the whole run)
    CONFORMANCE_MAX_AUTHORIZATIONS
                                 how many authorizations the driver gives in one run before it stops (default
                                 4: one more than auth/scope-retry-limit allows, so that a bridge asking too
                                 often is seen by the suite, not hidden by the driver)
    MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_CONTEXT
                                 set by the suite: the scenario's name, and a JSON object with what the
                                 scenario hands its client (pre-registered credentials, a private key, ...)

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

    auth/*            an OAuth-protected MCP server (POST /mcp, one tool `test-tool` answering "test") and its
                      authorization server, which approves every authorization request at once and redirects to
                      the redirect_uri with code=test-auth-code. Most checks are about what the bridge sends to
                      the authorization server; tests/conformance/auth-scenarios.md says what each one checks.
                      The driver plays the agent and the person with a browser:
                        1. registers the URL (`auth` below; none: the bridge discovers OAuth from the 401);
                        2. whenever the server is `auth_required`, POST /v1/servers/{id}/authorize and opens the
                           authorization_url: GETs it and follows each Location itself (at most 10 hops, no
                           bridge token sent) until the bridge's /oauth/callback answers;
                        3. once `ready`, lists the tools and calls <id>__test-tool; a 403 `mcp_auth_required`
                           answer (step-up) has its authorization_url opened the same way, then the call is retried.
                      At most CONFORMANCE_MAX_AUTHORIZATIONS authorizations in all.

      scenario                             `auth` registered                     the driver expects
      metadata-default, metadata-var1..3   none                                  ready after 1 authorization, call ok
      basic-cimd                           none                                  same (the suite wants the client_id
                                                                                 https://conformance-test.local/client-metadata.json:
                                                                                 conformance.sh sets the bridge's
                                                                                 MCP_BRIDGE_OAUTH_CLIENT_METADATA_URL)
      scope-from-www-authenticate,         none                                  same
        scope-from-scopes-supported,
        scope-omitted-when-undefined
      scope-step-up                        none                                  ready after 1 authorization (the 401
                                                                                 comes on tools/list, not initialize);
                                                                                 the call needs a 2nd (step-up), then ok
      scope-retry-limit                    none                                  the bridge gives up: after 1..3
                                                                                 authorizations it stops asking (every
                                                                                 authorized request gets 403)
      token-endpoint-auth-basic/post/none  none                                  ready after 1 authorization, call ok
      pre-registration                     authorization_code, client_id and     same
                                           client_secret from the context
      2025-03-26-oauth-metadata-backcompat none                                  same
      2025-03-26-oauth-endpoint-fallback   none                                  same
      resource-mismatch                    none                                  the bridge refuses: never hands out an
                                                                                 authorization URL, never ready
      offline-access-scope,                none                                  ready after 1 authorization, call ok
        offline-access-not-supported
      client-credentials-basic             client_credentials, client_id and     ready with no person, call ok
                                           client_secret from the context
      client-credentials-jwt               client_credentials, client_id,        same
                                           private_key_jwt, private_key (PEM)
      cross-app-access-complete-flow       id_jag: client_id and client_secret,  ready with no person, call ok
                                           idp {issuer, token_endpoint,
                                           client_id} and identity_assertion
                                           (the ID token) from the context

Every run registers a fresh server id and unregisters it at the end (also on SIGTERM, which the suite sends
on its timeout). The exit status is 0 when the driver's own steps succeeded, 1 when a step failed and 2 on a
usage error; the suite's checks, not this status, decide whether a scenario passes. "driver: done" on stdout
marks a run whose steps all did what the scenario expects.
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
from dataclasses import dataclass
from typing import Callable, Optional

BASIC_SCENARIOS = ("initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry")
# Conformance 0.2.0-alpha.12's other client scenarios (besides auth/*): the driver has the bridge list, call,
# read and render everything the scenario's server offers (`exercise`), or what the scenario says to do.
EXERCISE_SCENARIOS = (
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
)
SCHEMA_SCENARIOS = ("json-schema-2020-12-preservation",)
# The revision the suite runs a scenario at (set with --spec-version): the server is registered with it, so
# the bridge speaks that era upstream ("2026-07-28": stateless, `server/discover`).
PROTOCOL_VERSION = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or ""


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
        """One JSON request; returns (status, parsed body or None). Raises StepFailed on a status not in `ok`
        (`ok=None` takes every status)."""
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
        if ok is not None and status not in ok:
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


def register(bridge: Bridge, server_id: str, url: str, deadline: float, auth: Optional[dict] = None,
             need_ready: bool = True) -> dict:
    """POST /v1/servers, then wait (until `deadline`) while the server is `connecting`; returns its MCPServerInfo.
    With `need_ready`, any final status but `ready` is a failed step."""
    config = {"server_id": server_id, "transport": "http", "url": url}
    if PROTOCOL_VERSION == "2026-07-28":
        config["protocol_version"] = PROTOCOL_VERSION
    if auth is not None:
        config["auth"] = auth
    _, answer = bridge.call("POST", "/v1/servers", {"config": config})
    log("registered:", json.dumps(answer))
    server = (answer or {}).get("server") or {}
    # A registration may come back still connecting; wait (briefly) for a final status.
    while server.get("status") == "connecting" and time.monotonic() < deadline:
        time.sleep(0.2)
        server = get_server(bridge, server_id)
    if need_ready and server.get("status") != "ready":
        raise StepFailed(
            f"server {server_id} is {server.get('status')!r}, not 'ready': error={server.get('error')!r}"
        )
    return server


def get_server(bridge: Bridge, server_id: str) -> dict:
    _, got = bridge.call("GET", f"/v1/servers/{server_id}")
    return (got or {}).get("server") or {}


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


# A value of each JSON Schema type, for arguments the driver makes up (non-ASCII text: a header the bridge
# mirrors must then be Base64-encoded).
SAMPLE_VALUES = {"string": "value", "integer": 42, "number": 1.5, "boolean": True}


def sample_arguments(schema: dict) -> dict:
    arguments = {}
    for name, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type") if isinstance(prop, dict) else None
        if kind is not None and "will be null" in str(prop.get("description", "")).lower():
            arguments[name] = None  # as the schema asks (http-custom-headers' test_custom_headers_null)
        elif kind in SAMPLE_VALUES:
            arguments[name] = "héllo wörld" if kind == "string" and "ascii" in name.lower() else SAMPLE_VALUES[kind]
    for name in schema.get("required") or []:
        arguments.setdefault(name, "value")
    return arguments


class AutoAnswer:
    """Answers every elicitation request for `server_id` that arrives on GET /v1/events (accepting, with a value
    of each field's type), while a scenario runs: the 2026-07-28 input requests of its server come there."""

    def __init__(self, bridge: Bridge, server_id: str) -> None:
        self.bridge, self.server_id = bridge, server_id
        self.reader = EventReader(bridge.open_events())
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self.reader.start()
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.reader.close()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                item = self.reader.events.get(timeout=0.2)
            except queue.Empty:
                continue
            if item is None:
                return
            event, data, _ = item
            try:
                message = json.loads(data)
            except ValueError:
                continue
            if event != "mcp/elicit/req" or message.get("server_id") != self.server_id:
                continue
            schema = message.get("requested_schema") or message.get("requestedSchema") or {}
            reply = {"req_id": message["id"], "action": "accept", "content": sample_arguments(schema)}
            try:
                status, ack = self.bridge.call("POST", "/v1/elicitation/responses", reply, ok=None)
                log("elicitation answered:", json.dumps(reply), "->", status, json.dumps(ack)[:300])
            except StepFailed as err:
                log("elicitation answer failed:", err)


def exercise(bridge: Bridge, server_id: str, tools: list) -> None:
    """Calls every tool the server offers (with a value for each argument its schema has), reads every resource
    and renders every prompt, over REST, answering the server's elicitation requests meanwhile. A request the
    server refuses is logged, not a failed step: the scenario's checks judge what the bridge sent; the driver
    fails only when the bridge itself does."""
    with AutoAnswer(bridge, server_id):
        _exercise(bridge, server_id, tools)


def _exercise(bridge: Bridge, server_id: str, tools: list) -> None:
    query = urllib.parse.urlencode({"server_id": server_id})
    refused = (400, 404, 409, 422, 501, 502, 504)
    for tool in tools:
        schema = tool.get("input_schema") or tool.get("inputSchema") or {}
        arguments = sample_arguments(schema)
        log("calling", tool.get("name"), json.dumps(arguments))
        status, answer = bridge.call("POST", "/v1/tools/call", {"name": tool.get("name"), "arguments": arguments},
                                     ok=(200,) + refused)
        log("call answer:", status, json.dumps(answer)[:1000])
    _, listed = bridge.call("GET", f"/v1/resources?{query}", ok=(200,) + refused)
    for resource in (listed or {}).get("resources") or []:
        body = {"server_id": server_id, "uri": resource.get("uri")}
        status, answer = bridge.call("POST", "/v1/resources/read", body, ok=(200,) + refused)
        log("read", resource.get("uri"), status, json.dumps(answer)[:500])
    _, listed = bridge.call("GET", f"/v1/prompts?{query}", ok=(200,) + refused)
    for prompt in (listed or {}).get("prompts") or []:
        arguments = {a["name"]: "value" for a in prompt.get("arguments") or [] if a.get("required")}
        body = {"server_id": server_id, "name": prompt.get("name"), "arguments": arguments}
        status, answer = bridge.call("POST", "/v1/prompts/get", body, ok=(200,) + refused)
        log("prompt", prompt.get("name"), status, json.dumps(answer)[:500])


def run_schema_preservation(bridge: Bridge, server_id: str, tools: list) -> None:
    """json-schema-2020-12-preservation: the focal tool's inputSchema, as the bridge lists it, goes back verbatim
    as the `schema` argument of the echo tool."""
    by_name = {t.get("name", "").removeprefix(f"{server_id}__"): t for t in tools}
    echo = next((n for n in by_name if "echo" in n), None)
    focal = next((n for n in by_name if n != echo), None)
    if echo is None or focal is None:
        raise StepFailed(f"expected a focal tool and an echo tool, got {sorted(by_name)}")
    schema = by_name[focal].get("input_schema") or by_name[focal].get("inputSchema")
    call_tool(bridge, server_id, echo, {"schema": schema})


# ---- auth/*: the OAuth scenarios ------------------------------------------------------------------------------

AUTH_TOOL = "test-tool"  # what every auth/* test server offers; it answers the text "test"
MAX_HOPS = 10  # redirects the "browser" follows from the authorization URL to the bridge's callback
# After the callback, how long a server may still read `auth_required` before the driver takes it as a new
# request for authorization (the bridge may swap tokens and reconnect in the background).
SETTLE_SECS = 2.0


def _context() -> dict:
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}"
    try:
        context = json.loads(raw)
    except ValueError as err:
        raise StepFailed(f"MCP_CONFORMANCE_CONTEXT is not JSON: {err}") from err
    return context if isinstance(context, dict) else {}


def _need(context: dict, *keys: str) -> list:
    missing = [key for key in keys if not context.get(key)]
    if missing:
        raise StepFailed(f"the scenario's context (MCP_CONFORMANCE_CONTEXT) lacks {', '.join(missing)}")
    return [context[key] for key in keys]


def _pre_registered(context: dict) -> dict:
    client_id, client_secret = _need(context, "client_id", "client_secret")
    # No token_endpoint_auth_method: the bridge picks it from the authorization server's metadata
    # (token_endpoint_auth_methods_supported is ["client_secret_basic"] there).
    return {"type": "oauth2", "grant_type": "authorization_code", "client_id": client_id,
            "client_secret": client_secret}


def _client_secret(context: dict) -> dict:
    client_id, client_secret = _need(context, "client_id", "client_secret")
    # No token_endpoint_auth_method: the metadata says ["client_secret_basic"] only.
    return {"type": "oauth2", "grant_type": "client_credentials", "client_id": client_id,
            "client_secret": client_secret}


def _private_key_jwt(context: dict) -> dict:
    client_id, pem = _need(context, "client_id", "private_key_pem")
    # The context's signing_algorithm (ES256) has no field in the contract: the bridge takes it from the key
    # (an EC P-256 PKCS#8 key) and the metadata's token_endpoint_auth_signing_alg_values_supported.
    return {"type": "oauth2", "grant_type": "client_credentials", "client_id": client_id,
            "token_endpoint_auth_method": "private_key_jwt", "private_key": pem}


def _id_jag(context: dict) -> dict:
    client_id, client_secret, idp_client_id, id_token, idp_issuer, idp_token_endpoint = _need(
        context, "client_id", "client_secret", "idp_client_id", "idp_id_token", "idp_issuer", "idp_token_endpoint"
    )
    # SEP-990: the scenario hands out the person's ID token, so the server is a shared one with that
    # identity assertion (a `per_agent` server would use each calling agent's own bearer token instead).
    # No token_endpoint_auth_method: the metadata says ["client_secret_basic"] only.
    return {"type": "oauth2", "grant_type": "id_jag", "client_id": client_id, "client_secret": client_secret,
            "idp": {"issuer": idp_issuer, "token_endpoint": idp_token_endpoint, "client_id": idp_client_id},
            "identity_assertion": id_token}


@dataclass(frozen=True)
class AuthPlan:
    """What the driver registers for one auth/* scenario and what it expects the bridge to do."""

    auth: Optional[Callable[[dict], dict]] = None  # the registration's `auth`, from the scenario context
    person: bool = True  # authorization_code: the driver opens the authorization URLs the bridge hands out
    # "call": ready, then <id>__test-tool answers; "gives_up": the bridge stops asking for authorization after
    # 1..3 authorizations; "refuses": the bridge never asks for one and the server never becomes ready;
    # "rejects_response": the bridge asks for one, then refuses the authorization server's response at its
    # callback (SEP-2468: an `iss` that is missing or not the issuer's) and the server never becomes ready
    expect: str = "call"
    unsupported: str = ""  # why the REST contract cannot express the scenario


AUTH_PLANS = {
    "auth/metadata-default": AuthPlan(),
    "auth/metadata-var1": AuthPlan(),
    "auth/metadata-var2": AuthPlan(),
    "auth/metadata-var3": AuthPlan(),
    "auth/basic-cimd": AuthPlan(),
    "auth/scope-from-www-authenticate": AuthPlan(),
    "auth/scope-from-scopes-supported": AuthPlan(),
    "auth/scope-omitted-when-undefined": AuthPlan(),
    "auth/scope-step-up": AuthPlan(),
    "auth/scope-retry-limit": AuthPlan(expect="gives_up"),
    "auth/token-endpoint-auth-basic": AuthPlan(),
    "auth/token-endpoint-auth-post": AuthPlan(),
    "auth/token-endpoint-auth-none": AuthPlan(),
    "auth/pre-registration": AuthPlan(auth=_pre_registered),
    "auth/2025-03-26-oauth-metadata-backcompat": AuthPlan(),
    "auth/2025-03-26-oauth-endpoint-fallback": AuthPlan(),
    "auth/resource-mismatch": AuthPlan(expect="refuses"),
    "auth/offline-access-scope": AuthPlan(),
    "auth/offline-access-not-supported": AuthPlan(),
    # Conformance 0.2 (2026-07-28): SEP-2468, the authorization response's `iss` (RFC 9207) and the metadata's
    # issuer; SEP-2352, a protected resource that moves to another authorization server.
    "auth/iss-supported": AuthPlan(),
    "auth/iss-not-advertised": AuthPlan(),
    "auth/iss-normalized": AuthPlan(expect="rejects_response"),
    "auth/iss-supported-missing": AuthPlan(expect="rejects_response"),
    "auth/iss-wrong-issuer": AuthPlan(expect="rejects_response"),
    "auth/iss-unexpected": AuthPlan(expect="rejects_response"),
    "auth/metadata-issuer-mismatch": AuthPlan(expect="refuses"),
    "auth/authorization-server-migration": AuthPlan(),
    "auth/client-credentials-jwt": AuthPlan(auth=_private_key_jwt, person=False),
    "auth/client-credentials-basic": AuthPlan(auth=_client_secret, person=False),
    "auth/cross-app-access-complete-flow": AuthPlan(auth=_id_jag, person=False),
}
GAVE_UP_LIMIT = 3  # auth/scope-retry-limit: more authorization requests than this fail the suite's check

SCENARIOS = BASIC_SCENARIOS + EXERCISE_SCENARIOS + SCHEMA_SCENARIOS + tuple(AUTH_PLANS)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None  # the browser below follows each Location itself


def _shown(url: str) -> str:
    """A URL for the log, with the values of `code` and `state` (one-time secrets) left out."""
    parts = urllib.parse.urlsplit(url)
    query = [(k, "..." if k in ("code", "state") else v) for k, v in urllib.parse.parse_qsl(parts.query, True)]
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query, safe=":/ ")))


class Browser:
    """The person's browser: opens an authorization URL and follows redirects to the bridge's /oauth/callback.

    No bridge token is ever sent: neither the authorization server nor the callback gets one. A Location under
    MCP_BRIDGE_PUBLIC_URL (when that differs from MCP_BRIDGE_URL) is fetched at MCP_BRIDGE_URL instead."""

    def __init__(self, bridge_url: str, public_url: str, timeout: float) -> None:
        self.bridge = bridge_url.rstrip("/")
        self.public = (public_url or "").rstrip("/")
        self.timeout = timeout
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)

    def _local(self, url: str) -> str:
        if self.public and self.public != self.bridge and (url == self.public or url.startswith(self.public + "/")):
            return self.bridge + url[len(self.public):]
        return url

    @staticmethod
    def _is_callback(url: str) -> bool:
        return urllib.parse.urlsplit(url).path.endswith("/oauth/callback")

    def open(self, url: str) -> None:
        at_callback = False
        for _ in range(MAX_HOPS + 1):
            url = self._local(url)
            at_callback = at_callback or self._is_callback(url)
            request = urllib.request.Request(url, headers={"Accept": "text/html,application/json;q=0.9,*/*;q=0.8"})
            try:
                with self.opener.open(request, timeout=self.timeout) as resp:
                    status, headers, body = resp.status, resp.headers, resp.read()
            except urllib.error.HTTPError as err:
                status, headers, body = err.code, err.headers, err.read()
            except (urllib.error.URLError, TimeoutError, OSError) as err:
                raise StepFailed(f"browser: GET {_shown(url)}: no answer: {err}") from err
            log("browser: GET", _shown(url), "->", status)
            if status in (301, 302, 303, 307, 308):
                location = headers.get("Location")
                if not location:
                    raise StepFailed(f"browser: {status} from {_shown(url)} without a Location")
                url = urllib.parse.urljoin(url, location)
                continue
            text = body.decode("utf-8", "replace")[:1000]
            if not at_callback:
                raise StepFailed(
                    f"browser: {_shown(url)} answered {status} before any redirect to the bridge's "
                    f"/oauth/callback: {text}"
                )
            if 200 <= status < 300:
                log("browser: the bridge's callback says:", " ".join(re.sub(r"<[^>]+>", " ", text).split())[:300])
                return
            raise StepFailed(f"browser: the bridge's /oauth/callback answered {status}: {text}")
        raise StepFailed(f"browser: more than {MAX_HOPS} redirects from the authorization URL")


class AuthFlow:
    """One auth/* run: the server's status, the authorizations given, the tool call with step-up."""

    def __init__(self, bridge: Bridge, browser: Browser, server_id: str, plan: AuthPlan, deadline: float) -> None:
        self.bridge = bridge
        self.browser = browser
        self.server_id = server_id
        self.plan = plan
        self.deadline = deadline
        self.authorizations = 0
        self.max_authorizations = int(os.environ.get("CONFORMANCE_MAX_AUTHORIZATIONS") or 4)

    def _left(self) -> float:
        return self.deadline - time.monotonic()

    def authorize(self, url: Optional[str], why: str) -> None:
        """Give one authorization: ask the bridge for the URL (unless given), open it, note it."""
        if not self.plan.person:
            raise StepFailed(f"{why}, but this server uses client_credentials: no person should be needed")
        if self.authorizations >= self.max_authorizations:
            raise StepFailed(
                f"{why}, after {self.authorizations} authorizations already: the driver stops here "
                f"(CONFORMANCE_MAX_AUTHORIZATIONS={self.max_authorizations})"
            )
        if url is None:
            _, answer = self.bridge.call("POST", f"/v1/servers/{self.server_id}/authorize", {})
            url = (answer or {}).get("authorization_url")
            if not url:
                raise StepFailed(f"POST /v1/servers/{self.server_id}/authorize gave no authorization_url: {answer}")
        self.authorizations += 1
        log(f"authorization {self.authorizations} ({why})")
        self.browser.open(url)

    def settle(self, after_authorization: bool) -> dict:
        """Polls the server until it is neither `connecting` nor (right after an authorization, for up to
        SETTLE_SECS) still `auth_required`; returns its MCPServerInfo."""
        settle_until = time.monotonic() + (SETTLE_SECS if after_authorization else 0.0)
        while True:
            server = get_server(self.bridge, self.server_id)
            status = server.get("status")
            waiting = status == "connecting" or (status == "auth_required" and time.monotonic() < settle_until)
            if not waiting:
                return server
            if self._left() <= 0:
                raise StepFailed(f"server {self.server_id} still {status!r} at the driver's deadline")
            time.sleep(0.1)

    def until_ready(self, server: dict) -> dict:
        """Authorizes while the server is `auth_required`; returns it once `ready`."""
        just_authorized = False
        while True:
            if just_authorized or server.get("status") == "connecting":
                server = self.settle(just_authorized)
            status = server.get("status")
            log("server status:", status, f"error={server.get('error')!r}" if server.get("error") else "")
            if status == "ready":
                return server
            if status != "auth_required":
                raise StepFailed(f"server {self.server_id} is {status!r}: error={server.get('error')!r}")
            self.authorize(None, "the server is auth_required")
            just_authorized = True

    def call(self) -> dict:
        """Calls <id>__test-tool; a 403 mcp_auth_required (step-up) is authorized and the call retried."""
        name = f"{self.server_id}__{AUTH_TOOL}"
        while True:
            log("calling", name)
            status, answer = self.bridge.call("POST", "/v1/tools/call", {"name": name, "arguments": {}}, ok=None)
            log("call answer:", status, json.dumps(answer)[:1000])
            body = answer if isinstance(answer, dict) else {}
            if status == 200:
                if body.get("is_error"):
                    raise StepFailed(f"{name} answered is_error=true: {json.dumps(answer)[:1000]}")
                texts = [c.get("text", "") for c in body.get("content") or [] if c.get("type") == "text"]
                if "test" not in texts:
                    raise StepFailed(f"{name} did not answer the text 'test': {texts}")
                return body
            if status == 403 and body.get("code") == "mcp_auth_required":
                url = body.get("authorization_url")
                if not url:
                    raise StepFailed(f"{name}: 403 mcp_auth_required without an authorization_url: {body}")
                self.authorize(url, "the call answered 403 mcp_auth_required")
                self.until_ready(self.settle(True))
                continue
            raise StepFailed(f"POST /v1/tools/call {name} -> HTTP {status}: {json.dumps(answer)[:1000]}")


def run_auth(scenario: str, server_url: str, bridge: Bridge, server_id: str) -> None:
    plan = AUTH_PLANS[scenario]
    if plan.unsupported:
        raise StepFailed(f"not expressible through the bridge's REST API: {plan.unsupported}")
    context = _context()
    auth = plan.auth(context) if plan.auth else None
    deadline = time.monotonic() + bridge.timeout
    browser = Browser(bridge.base, os.environ.get("MCP_BRIDGE_PUBLIC_URL", ""), bridge.timeout)
    flow = AuthFlow(bridge, browser, server_id, plan, deadline)
    secret = ("client_secret", "private_key", "identity_assertion")
    shown = dict(auth or {}, **{k: "***" for k in secret if (auth or {}).get(k)})
    log("auth:", json.dumps(shown) if auth else "none (the bridge discovers OAuth from the server's 401)")
    if plan.expect == "refuses":
        # The protected resource metadata names another resource: the bridge must not start an authorization
        # (refusing the registration itself is as good as ending in `error`).
        try:
            flow.until_ready(register(bridge, server_id, server_url, deadline, auth, need_ready=False))
        except StepFailed as err:
            if flow.authorizations:
                raise StepFailed(f"the bridge asked for an authorization the scenario forbids, then: {err}") from err
            log("the bridge refused, as it should:", err)
            return
        raise StepFailed(f"the server became ready after {flow.authorizations} authorization(s): it should not")

    if plan.expect == "rejects_response":
        try:
            flow.until_ready(register(bridge, server_id, server_url, deadline, auth, need_ready=False))
        except StepFailed as err:
            if flow.authorizations == 1 and "/oauth/callback answered" in str(err):
                log("the bridge refused the authorization response, as it should:", err)
                return
            raise
        raise StepFailed(f"the server became ready after {flow.authorizations} authorization(s): it should not")

    server = register(bridge, server_id, server_url, deadline, auth, need_ready=False)
    if plan.expect == "gives_up":
        # Every authorized request gets 403 insufficient_scope for a scope the token already has.
        called = False
        try:
            server = flow.until_ready(server)
            tools = list_tools(bridge, server_id)
            if f"{server_id}__{AUTH_TOOL}" in [t.get("name") for t in tools]:
                flow.call()
                called = True
            outcome = f"ready without {AUTH_TOOL} in the catalogue: error={get_server(bridge, server_id).get('error')!r}"
        except StepFailed as err:
            outcome = str(err)
        if called:
            raise StepFailed("the call succeeded, though the server refuses every authorized request")
        if not 1 <= flow.authorizations <= GAVE_UP_LIMIT:
            raise StepFailed(
                f"{flow.authorizations} authorizations (1 to {GAVE_UP_LIMIT} expected) before the bridge stopped: "
                f"{outcome}"
            )
        log(f"the bridge gave up after {flow.authorizations} authorization(s), as it should:", outcome)
        return

    server = flow.until_ready(server)
    tools = list_tools(bridge, server_id)
    need_tool(tools, server_id, AUTH_TOOL)
    flow.call()
    log(f"authorizations given: {flow.authorizations}")


def run(scenario: str, server_url: str, bridge: Bridge, server_id: str) -> None:
    if scenario in AUTH_PLANS:
        run_auth(scenario, server_url, bridge, server_id)
        return
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
    elif scenario in EXERCISE_SCENARIOS:
        exercise(bridge, server_id, tools)
    elif scenario in SCHEMA_SCENARIOS:
        run_schema_preservation(bridge, server_id, tools)
    elif scenario == "sse-retry":
        need_tool(tools, server_id, "test_reconnection")
        call_tool(bridge, server_id, "test_reconnection", {})


def main(argv: list) -> int:
    # `conformance client --suite` runs one command for all its scenarios: the scenario then comes from
    # MCP_CONFORMANCE_SCENARIO alone.
    if len(argv) == 2:
        argv = [argv[0], os.environ.get("MCP_CONFORMANCE_SCENARIO", ""), argv[1]]
    if len(argv) != 3 or argv[1] not in SCENARIOS:
        print(
            f"usage: {argv[0]} [<scenario>] <server-url> (the scenario defaults to MCP_CONFORMANCE_SCENARIO); "
            f"scenarios: {' '.join(SCENARIOS)}",
            file=sys.stderr,
        )
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
