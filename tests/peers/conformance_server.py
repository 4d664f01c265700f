"""Fixture for the MCP conformance suite's `server` mode: the catalogue its server scenarios call by name.

Usage (first argument selects the mode):
    conformance_server.py stdio           serve MCP over stdin/stdout
    conformance_server.py http [--port N] [--retry-ms MS] [--strict-protocol-header]
                                          serve Streamable HTTP at http://127.0.0.1:N/mcp (N=0: a free port);
                                          prints exactly one line "PORT=<port>" to stdout once listening

`@modelcontextprotocol/conformance` (0.1.16) `server --url <url>` connects to an MCP endpoint and calls fixed
names that it ships no server for; this is a Python-SDK (`mcp` 2.3.0, MCPServer) implementation of that
catalogue, modelled on the suite's own TypeScript everything-server (examples/servers/typescript in the suite's
repository). mcp-bridge serves this catalogue again on its own `/mcp` without name prefixes, so every name here
is exactly the one the suite calls:

tools
    test_simple_text               text "This is a simple text response for testing."
    test_image_content             a 1x1 PNG (image/png)
    test_audio_content             a tiny WAV (audio/wav)
    test_embedded_resource         embedded resource test://embedded-resource (text/plain)
    test_multiple_content_types    text + image + embedded resource test://mixed-content-resource (application/json)
    test_tool_with_logging         three notifications/message at info, ~50 ms apart, during the call
    test_tool_with_progress        notifications/progress 0, 50, 100 of 100, ~50 ms apart (when given a token)
    test_error_handling            result with isError: true and an error text
    test_sampling(prompt)          sampling/createMessage (the prompt as one user message, maxTokens 100)
    test_elicitation(message)      elicitation/create for {username, email} (both required strings)
    test_elicitation_sep1034_defaults   elicitation/create whose schema has defaults for string, integer, number,
                                   enum and boolean fields (SEP-1034)
    test_elicitation_sep1330_enums elicitation/create with the five enum schema variants (SEP-1330)
    json_schema_2020_12_tool       inputSchema with $schema (2020-12), $defs and additionalProperties: false
                                   (SEP-1613), listed verbatim
    test_reconnection              closes the call's SSE stream mid-call (SEP-1699; http mode, clients on
                                   2025-11-25), then answers after ~100 ms; the answer is replayed on reconnect
resources
    test://static-text             text/plain "This is the content of the static text resource."
    test://static-binary           image/png blob (the 1x1 PNG)
    test://watched-resource        text/plain; resources/subscribe and resources/unsubscribe are served
    test://template/{id}/data      template; application/json {"id", "templateTest": true, "data"}
prompts
    test_simple_prompt             no arguments
    test_prompt_with_arguments     arg1, arg2 (required); both appear in the text
    test_prompt_with_embedded_resource   resourceUri (required); an embedded resource then a text message
    test_prompt_with_image         no arguments; an image then a text message
utilities
    logging/setLevel               answered {} (capability `logging` declared)
    completion/complete            prefix completions for test_prompt_with_arguments' arg1/arg2 and the
                                   template's id; any other ref/argument gets an empty list
    ping                           (the SDK)

HTTP mode keeps sessions (Mcp-Session-Id), stores every SSE event in memory (resumability: priming events with
`retry: <--retry-ms>` and Last-Event-ID replay) and rejects non-localhost Host/Origin headers (DNS rebinding
protection, the SDK's default for 127.0.0.1). A request whose mcp-protocol-version header is older than the
revision its session negotiated is served as the negotiated one (see SessionVersionHeader: works around a
stale header in conformance 0.1.16's server-sse-polling; --strict-protocol-header turns it off).
"""

import argparse
import asyncio
import itertools
import json
import socket
import sys
import warnings

# The same 1x1 PNG and minimal WAV the suite's reference server uses.
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV_MIN = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}

SEP1034_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}

SEP1330_SCHEMA = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Select one option",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}

ELICITATION_SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}

TEMPLATE_URI = "test://template/{id}/data"
COMPLETIONS = {
    "arg1": ["test", "testing", "tested", "paris", "park", "party"],
    "arg2": ["test", "value", "world"],
    "id": ["1", "123", "42"],
}


def build_server():
    """Build the MCPServer with the whole catalogue (SDK imported here so --help stays fast)."""
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.prompts.base import UserMessage
    from mcp_types import (
        AudioContent,
        CallToolResult,
        CompleteRequestParams,
        CompleteResult,
        Completion,
        EmbeddedResource,
        EmptyResult,
        ImageContent,
        PromptReference,
        ResourceTemplateReference,
        SamplingMessage,
        SetLevelRequestParams,
        SubscribeRequestParams,
        TextContent,
        TextResourceContents,
        UnsubscribeRequestParams,
    )

    mcp = MCPServer("mcp-conformance-test-server", version="1.0.0", log_level="WARNING")
    lowlevel = mcp._lowlevel_server  # no public accessor in SDK 2.3.0 (py_server.py does the same)

    # ----- tools -------------------------------------------------------------------------------------------

    @mcp.tool()
    def test_simple_text() -> CallToolResult:
        """Tests simple text content response."""
        return CallToolResult(content=[TextContent(text="This is a simple text response for testing.")])

    @mcp.tool()
    def test_image_content() -> CallToolResult:
        """Tests image content response."""
        return CallToolResult(content=[ImageContent(data=PNG_1X1, mime_type="image/png")])

    @mcp.tool()
    def test_audio_content() -> CallToolResult:
        """Tests audio content response."""
        return CallToolResult(content=[AudioContent(data=WAV_MIN, mime_type="audio/wav")])

    @mcp.tool()
    def test_embedded_resource() -> CallToolResult:
        """Tests embedded resource content response."""
        resource = TextResourceContents(
            uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
        )
        return CallToolResult(content=[EmbeddedResource(resource=resource)])

    @mcp.tool()
    def test_multiple_content_types() -> CallToolResult:
        """Tests response with multiple content types (text, image, resource)."""
        resource = TextResourceContents(
            uri="test://mixed-content-resource",
            mime_type="application/json",
            text=json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
        )
        return CallToolResult(
            content=[
                TextContent(text="Multiple content types test:"),
                ImageContent(data=PNG_1X1, mime_type="image/png"),
                EmbeddedResource(resource=resource),
            ]
        )

    @mcp.tool()
    async def test_tool_with_logging(ctx: Context) -> CallToolResult:
        """Tests tool that emits log messages during execution."""
        await ctx.log("info", "Tool execution started")
        await asyncio.sleep(0.05)
        await ctx.log("info", "Tool processing data")
        await asyncio.sleep(0.05)
        await ctx.log("info", "Tool execution completed")
        return CallToolResult(content=[TextContent(text="Tool with logging executed successfully")])

    @mcp.tool()
    async def test_tool_with_progress(ctx: Context) -> CallToolResult:
        """Tests tool that reports progress notifications."""
        for step in (0, 50, 100):
            if step:
                await asyncio.sleep(0.05)
            # A no-op when the request carried no _meta.progressToken.
            await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        return CallToolResult(content=[TextContent(text="Tool with progress executed successfully")])

    @mcp.tool()
    def test_error_handling() -> CallToolResult:
        """Tests error response handling."""
        return CallToolResult(
            content=[TextContent(text="This tool intentionally returns an error for testing")], is_error=True
        )

    @mcp.tool()
    async def test_reconnection(ctx: Context) -> CallToolResult:
        """Tests SSE stream disconnection and client reconnection (SEP-1699). The server closes the stream
        mid-call and the result is delivered after the client reconnects with Last-Event-ID."""
        await ctx.close_sse_stream()  # no-op over stdio, or for clients before 2025-11-25
        await asyncio.sleep(0.1)
        return CallToolResult(
            content=[
                TextContent(
                    text="Reconnection test completed successfully. If you received this, "
                    "the client properly reconnected after stream closure."
                )
            ]
        )

    @mcp.tool()
    async def test_sampling(prompt: str, ctx: Context) -> CallToolResult:
        """Tests server-initiated sampling (LLM completion request).

        Args:
            prompt: The prompt to send to the LLM
        """
        message = SamplingMessage(role="user", content=TextContent(text=prompt))
        result = await ctx.session.create_message([message], max_tokens=100, related_request_id=ctx.request_id)
        content = result.content
        text = content.text if isinstance(content, TextContent) else f"<{getattr(content, 'type', 'content')}>"
        return CallToolResult(content=[TextContent(text=f"LLM response: {text}")])

    async def elicit(ctx: Context, message: str, schema: dict) -> CallToolResult:
        result = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
        content = json.dumps(result.content or {}, separators=(",", ":"))
        return CallToolResult(content=[TextContent(text=f"User response: action={result.action}, content={content}")])

    @mcp.tool()
    async def test_elicitation(message: str, ctx: Context) -> CallToolResult:
        """Tests server-initiated elicitation (user input request).

        Args:
            message: The message to show the user
        """
        return await elicit(ctx, message, ELICITATION_SCHEMA)

    @mcp.tool()
    async def test_elicitation_sep1034_defaults(ctx: Context) -> CallToolResult:
        """Tests elicitation with default values per SEP-1034."""
        return await elicit(ctx, "Please review and update the form fields with defaults", SEP1034_SCHEMA)

    @mcp.tool()
    async def test_elicitation_sep1330_enums(ctx: Context) -> CallToolResult:
        """Tests elicitation with enum schema improvements per SEP-1330."""
        return await elicit(ctx, "Please select options from the enum fields", SEP1330_SCHEMA)

    @mcp.tool()
    def json_schema_2020_12_tool(name: str | None = None, address: dict | None = None) -> CallToolResult:
        """Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)."""
        args = {k: v for k, v in (("name", name), ("address", address)) if v is not None}
        text = f"JSON Schema 2020-12 tool called with: {json.dumps(args, separators=(',', ':'))}"
        return CallToolResult(content=[TextContent(text=text)])

    # List the raw 2020-12 schema instead of the one the SDK derives from the signature (which has neither
    # $schema nor $defs). Calls are still checked by the SDK against the signature's model, which ignores
    # unknown arguments: additionalProperties: false is advertised, not enforced.
    mcp._tool_manager.get_tool("json_schema_2020_12_tool").parameters = JSON_SCHEMA_2020_12

    # ----- resources ---------------------------------------------------------------------------------------

    @mcp.resource("test://static-text", name="static-text", title="Static Text Resource", mime_type="text/plain")
    def static_text() -> str:
        """A static text resource for testing."""
        return "This is the content of the static text resource."

    @mcp.resource(
        "test://static-binary", name="static-binary", title="Static Binary Resource", mime_type="image/png"
    )
    def static_binary() -> bytes:
        """A static binary resource (image) for testing."""
        import base64

        return base64.b64decode(PNG_1X1)

    @mcp.resource(
        "test://watched-resource", name="watched-resource", title="Watched Resource", mime_type="text/plain"
    )
    def watched_resource() -> str:
        """A resource clients may subscribe to."""
        return "Watched resource content"

    @mcp.resource(TEMPLATE_URI, name="template", title="Resource Template", mime_type="application/json")
    def template(id: str) -> str:
        """A resource template with parameter substitution."""
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":"))

    subscribed: set[str] = set()

    async def subscribe(ctx, params: SubscribeRequestParams):
        subscribed.add(str(params.uri))
        return EmptyResult()

    async def unsubscribe(ctx, params: UnsubscribeRequestParams):
        subscribed.discard(str(params.uri))
        return EmptyResult()

    # Registering resources/subscribe is what makes the SDK declare `resources.subscribe: true`.
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)

    # ----- prompts -----------------------------------------------------------------------------------------

    @mcp.prompt(title="Simple Test Prompt")
    def test_simple_prompt() -> list:
        """A simple prompt without arguments."""
        return [UserMessage("This is a simple prompt for testing.")]

    @mcp.prompt(title="Prompt With Arguments")
    def test_prompt_with_arguments(arg1: str, arg2: str) -> list:
        """A prompt with required arguments.

        Args:
            arg1: First test argument
            arg2: Second test argument
        """
        return [UserMessage(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")]

    @mcp.prompt(title="Prompt With Embedded Resource")
    def test_prompt_with_embedded_resource(resourceUri: str) -> list:  # noqa: N803 (the suite's argument name)
        """A prompt that includes an embedded resource.

        Args:
            resourceUri: URI of the resource to embed
        """
        resource = TextResourceContents(
            uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
        )
        return [
            UserMessage(EmbeddedResource(resource=resource)),
            UserMessage("Please process the embedded resource above."),
        ]

    @mcp.prompt(title="Prompt With Image")
    def test_prompt_with_image() -> list:
        """A prompt that includes image content."""
        return [
            UserMessage(ImageContent(data=PNG_1X1, mime_type="image/png")),
            UserMessage("Please analyze the image above."),
        ]

    # ----- utilities ---------------------------------------------------------------------------------------

    async def set_level(ctx, params: SetLevelRequestParams):
        return EmptyResult()

    # Registering logging/setLevel is what makes the SDK declare the `logging` capability.
    lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)

    async def complete(ctx, params: CompleteRequestParams):
        ref, argument = params.ref, params.argument
        known = (isinstance(ref, PromptReference) and ref.name == "test_prompt_with_arguments") or (
            isinstance(ref, ResourceTemplateReference) and ref.uri == TEMPLATE_URI
        )
        if not known:
            return CompleteResult(completion=Completion(values=[], total=0, has_more=False))
        values = [v for v in COMPLETIONS.get(argument.name, []) if v.startswith(argument.value)]
        return CompleteResult(completion=Completion(values=values, total=len(values), has_more=False))

    lowlevel.add_request_handler("completion/complete", CompleteRequestParams, complete)

    return mcp


def make_event_store():
    """An in-memory EventStore: every SSE event of every stream, replayable after its id (SEP-1699).

    Event ids are "<sequence>:<stream id>", the stream id being the SDK's (the request id, or the standalone
    GET stream's key). One store serves all sessions and the SDK does not tell it the session, so a replay
    is exact unless two sessions reconnect streams with the same request id at the same time; the suite
    opens one session at a time, and so does a bridge in front of this fixture.
    """
    from mcp.server.streamable_http import EventMessage, EventStore

    class MemoryEventStore(EventStore):
        def __init__(self) -> None:
            self._counter = itertools.count(1)
            self._events: list[tuple[int, str, object]] = []  # (sequence, stream id, message or None)

        async def store_event(self, stream_id, message):
            seq = next(self._counter)
            self._events.append((seq, stream_id, message))
            return f"{seq}:{stream_id}"

        async def replay_events_after(self, last_event_id, send_callback):
            seq_text, _, stream_id = last_event_id.partition(":")
            if not seq_text.isdigit() or not stream_id:
                return None
            after = int(seq_text)
            for seq, sid, message in list(self._events):
                if sid == stream_id and seq > after and message is not None:  # priming events carry nothing
                    await send_callback(EventMessage(message, f"{seq}:{sid}"))
            return stream_id

    return MemoryEventStore()


class SessionVersionHeader:
    """ASGI middleware: a request whose `mcp-protocol-version` header names an older revision than the one its
    session negotiated is served as the negotiated revision.

    Why: conformance 0.1.16's `server-sse-polling` initializes on 2025-11-25, then sends its raw tools/call
    POST (and the GET that resumes it) with a hard-coded `mcp-protocol-version: 2025-03-26` (fixed upstream:
    modelcontextprotocol/conformance#366 and #416 send the negotiated version). The SDK takes the header at
    its word and, for a pre-2025-11-25 client, sends no priming event and makes close_sse_stream a no-op, so
    the scenario would only report the suite's own stale header. Clients that send the version they
    negotiated (the SDKs, mcp-bridge) are untouched. `--strict-protocol-header` turns this off.
    """

    def __init__(self, app) -> None:
        self.app = app
        self.negotiated: dict[str, str] = {}  # session id -> protocol version asked for in its initialize

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        session = headers.get(b"mcp-session-id", b"").decode("latin-1")
        if session:
            agreed = self.negotiated.get(session)
            stated = headers.get(b"mcp-protocol-version", b"").decode("latin-1")
            if agreed and stated and stated < agreed:  # revisions are dates: string order is time order
                headers[b"mcp-protocol-version"] = agreed.encode("latin-1")
                scope = dict(scope, headers=list(headers.items()))
            if scope["method"] == "DELETE":
                self.negotiated.pop(session, None)
            return await self.app(scope, receive, send)
        if scope["method"] != "POST":
            return await self.app(scope, receive, send)

        # No session yet: remember the version an initialize asks for under the session id the answer sets.
        chunks, more = [], True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        asked = None
        try:
            request = json.loads(body)
            if isinstance(request, dict) and request.get("method") == "initialize":
                asked = (request.get("params") or {}).get("protocolVersion")
        except ValueError:
            pass
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        async def watch(message):
            if asked and message["type"] == "http.response.start":
                for name, value in message.get("headers", []):
                    if name.lower() == b"mcp-session-id":
                        self.negotiated[value.decode("latin-1")] = str(asked)
            await send(message)

        return await self.app(scope, replay, watch)


async def serve_http(mcp, port: int, retry_ms: int, strict_header: bool) -> None:
    """Serve Streamable HTTP on a socket bound here, so the printed port is the one listening."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    app = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        host="127.0.0.1",  # also turns on the SDK's DNS rebinding protection (localhost Host/Origin only)
        event_store=make_event_store(),
        retry_interval=retry_ms,
    )
    if not strict_header:
        app = SessionVersionHeader(app)
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    if server.started:
        print(f"PORT={sock.getsockname()[1]}", flush=True)
    await task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=0, help="http mode: port on 127.0.0.1 (0: a free one)")
    parser.add_argument(
        "--retry-ms", type=int, default=1000, help="http mode: `retry:` sent in SSE priming events (default 1000)"
    )
    parser.add_argument(
        "--strict-protocol-header",
        action="store_true",
        help="http mode: take every mcp-protocol-version header as sent (see SessionVersionHeader)",
    )
    args = parser.parse_args()

    # Logging, sampling and roots are deprecated in the 2026-07-28 revision; the suite tests 2025-11-25.
    warnings.filterwarnings("ignore", message=".*deprecated as of 2026-07-28.*")

    if args.mode == "stdio":
        build_server().run("stdio")
    else:
        try:
            asyncio.run(serve_http(build_server(), args.port, args.retry_ms, args.strict_protocol_header))
        except KeyboardInterrupt:
            sys.exit(130)


if __name__ == "__main__":
    main()
