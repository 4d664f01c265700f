"""Test peer for mcp-bridge integration tests: a real MCP server built on the Python SDK.

Usage (first argument selects the mode):
    py_server.py stdio               serve MCP over stdin/stdout
    py_server.py http [--port N] [--stateless] [--json]
                                     serve Streamable HTTP at http://127.0.0.1:N/mcp (N=0: free port);
                                     prints one line "PORT=<port>" to stdout once listening; --stateless
                                     serves it statelessly (the SDK's stateless_http: no Mcp-Session-Id);
                                     --json answers each POST with a JSON body instead of an SSE stream
    py_server.py sse [--port N]      serve legacy HTTP+SSE (protocol 2024-11-05): GET http://127.0.0.1:N/sse,
                                     messages POSTed to /messages/; prints "PORT=<port>" as http does
    py_server.py crash               print two lines to stderr and exit 3 without speaking MCP
    py_server.py hang                read stdin until EOF, never answering anything

Server "py-fixture" 1.2.3 exposes the tools add, echo, image, audio, link, embedded, fail,
slow, big and shout (see below), getenv, cwd, grow (which adds a tool at run time and sends tools/list_changed), subscriptions, touch
(see below), ask_name and ask_llm (see further below), the resource fixture://doc/1, the resource template
fixture://note/{name} (reads as "note {name}"), the prompts greet and code_review, and completions for
greet's `name` (alice, alfred, bob) and fixture://note/{name}'s `name` (one, two, three).

Resource subscriptions are always on: the server declares `resources.subscribe: true` and answers
resources/subscribe and resources/unsubscribe (params {uri}), keeping the subscribed URIs in memory for the
process. Subscribing to a URI that is neither a static resource nor one a template produces answers JSON-RPC
error -32002 ("Resource not found"); subscribing twice and unsubscribing a URI not subscribed both succeed.
The tool subscriptions() returns the subscribed URIs sorted and joined with "\n" ("" when none); the tool
touch(uri, mark="") sends notifications/resources/updated for that uri to the calling client and returns "touched";
given `mark`, the notification carries it as `_meta.mark`, so that a test can tell which call caused which update.

The tool slow(seconds, started="", cancelled="") sleeps `seconds`, then returns "done"; given `started` (a file
path), it first creates that file, so a test knows the call has reached the server; given `cancelled` (a file path),
it creates that file when the call is cancelled (notifications/cancelled) before it ends, so a test knows the server
saw the cancel.

The tool big(size) returns one text block of exactly `size` bytes ("x" repeated), to test the bridge's bound on
the size of one message (its JSON-RPC answer is some 100 bytes more than `size`); shout(size) first sends the
client a log message (notifications/message, level info) whose data is such a text, then returns "said";
shout(size, related=false) sends it unrelated to the call (over Streamable HTTP: on the standalone GET stream).

Two tools need input from the client during the call:
    ask_name()          form elicitation "What is your name?" for {"name": string}; returns "name: <name>" on
                        accept, else "elicitation <action>" (decline, cancel)
    ask_llm(question)   sampling: one user message with `question`, maxTokens 50; returns "llm: <answer text>"
With a client on the initialize handshake (2025-11-25 and earlier) the server sends elicitation/create or
sampling/createMessage to the client while the call is in flight; over `http --stateless` there is no channel
back to the client, so such a call fails with JSON-RPC error -32600 ("... no back-channel ..."). With a client
on 2026-07-28 (server/discover, per-request _meta), the first tools/call is answered with an input-required
result (resultType "input_required", inputRequests, requestState) and the client retries the same call (same
name and arguments) with inputResponses and that requestState; this works over stdio and over http with or
without --stateless. The requestState is sealed under a key made at start-up and expires after 10 minutes.
In either era a client that did not declare the capability (form elicitation, or sampling) gets JSON-RPC
error -32021 (missing required client capability).

Environment variables read at start-up size the instance:
    FIXTURE_ITEMS=N       add N static resources fixture://item/0000 ... (name item-0000, text "item 0000"); default 0
    FIXTURE_TEMPLATES=K   add K templates fixture://extra{k}/{name} (name extra{k}, reads "extra{k} {name}"); default 0
    FIXTURE_PAGE=M        when > 0, resources/list, resources/templates/list and prompts/list return at most M
                          entries per response, with nextCursor = the next offset as a decimal string; default 0
                          (no paging: those lists answer exactly as the SDK does by default)
    FIXTURE_LISTS_THEN_HANG=1
                          resources/list, resources/templates/list and prompts/list each answer their first
                          request (the client's listing at connect) and never answer a later one (a server that
                          hangs every merged listing); its tools and everything else answer as usual
    OTEL_EXPORTER_OTLP_ENDPOINT=url
                          export the SDK's own spans (a SERVER span a request, continuing the request's
                          _meta.traceparent; a CLIENT span a request it sends, sampling for one) over OTLP/HTTP
                          to url/v1/traces, one export a span ended; service name OTEL_SERVICE_NAME (default
                          py-fixture). Then (only then) the tool trace_context() returns {"header": the traceparent header of
                          the HTTP request that carried the call (null over stdio), "meta": its
                          _meta.traceparent} as JSON text
    FIXTURE_CALL_LOG=path echo(text) appends `text` and a newline to that file before answering (one line per
                          call the server ran, shared by every process given the same path: a ledger's count)
    FIXTURE_TLS_CERT=path, FIXTURE_TLS_KEY=path
                          http and sse modes: serve HTTPS with this certificate (PEM, its chain after it) and key
"""

import argparse
import asyncio
import os
import socket
import sys

# A valid 1x1 RGBA PNG and a valid 4-sample mono 16-bit WAV.
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
WAV_TINY = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQgAAAAAAAAAAAAAAA=="
DOC_URI = "fixture://doc/1"
NOTE_TEMPLATE = "fixture://note/{name}"
GREET_NAMES = ["alice", "alfred", "bob"]
NOTE_NAMES = ["one", "two", "three"]


def env_count(name: str) -> int:
    """A non-negative integer from the environment (unset or empty: 0)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return 0
    if not (raw.isascii() and raw.isdigit()):
        raise SystemExit(f"fixture: {name} must be a non-negative integer, got {raw!r}")
    return int(raw)


def export_spans() -> None:
    """Send the SDK's spans to OTEL_EXPORTER_OTLP_ENDPOINT, when it is set (see the module's text)."""
    if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    service = os.environ.get("OTEL_SERVICE_NAME", "py-fixture")
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)


def build_server():
    """Build the MCP server (imports the SDK lazily so crash/hang start instantly)."""
    export_spans()
    from typing import Annotated

    from mcp.server.mcpserver import AcceptedElicitation, Context, Elicit, ElicitationResult, MCPServer, Resolve, Sample
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.resources import TextResource
    from mcp_types import AudioContent, Completion, EmbeddedResource, ImageContent, PromptReference, ResourceLink
    from mcp_types import CreateMessageResult, ResourceTemplateReference, SamplingMessage, TextContent
    from mcp_types import ResourceUpdatedNotification, ResourceUpdatedNotificationParams, TextResourceContents
    from pydantic import BaseModel

    items = env_count("FIXTURE_ITEMS")
    extra_templates = env_count("FIXTURE_TEMPLATES")
    page = env_count("FIXTURE_PAGE")

    mcp = MCPServer("py-fixture", version="1.2.3", log_level="WARNING")
    subscribed: set[str] = set()  # URIs subscribed through resources/subscribe, for this process

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two integers (structured output: {"result": a + b})."""
        return a + b

    call_log = os.environ.get("FIXTURE_CALL_LOG", "")

    @mcp.tool(structured_output=False)
    def echo(text: str) -> str:
        """Return the text unchanged (first appending it as a line to FIXTURE_CALL_LOG, if set)."""
        if call_log:
            with open(call_log, "a", encoding="utf-8") as log:
                log.write(text + "\n")
        return text

    @mcp.tool()
    def image() -> ImageContent:
        """Return a 1x1 PNG."""
        return ImageContent(data=PNG_1X1, mime_type="image/png")

    @mcp.tool()
    def audio() -> AudioContent:
        """Return a tiny WAV clip."""
        return AudioContent(data=WAV_TINY, mime_type="audio/wav")

    @mcp.tool()
    def link() -> ResourceLink:
        """Return a link to fixture://doc/1."""
        return ResourceLink(uri=DOC_URI, name="doc1", mime_type="text/plain")

    @mcp.tool()
    def embedded() -> EmbeddedResource:
        """Return fixture://doc/1 embedded as text."""
        contents = TextResourceContents(uri=DOC_URI, text="hello embedded", mime_type="text/plain")
        return EmbeddedResource(resource=contents)

    @mcp.tool(structured_output=False)
    def fail() -> str:
        """Always fail; the SDK turns the exception into a result with isError=true."""
        raise ToolError("fixture failure: this tool always fails")

    @mcp.tool(structured_output=False)
    async def slow(seconds: float, started: str = "", cancelled: str = "") -> str:
        """Sleep for the given number of seconds, then return "done".

        With `started` (a file path), first create that file: a test waits on it to know the call is in flight.
        With `cancelled` (a file path), create that file if the call is cancelled before it ends (the SDK cancels
        the handler on the client's notifications/cancelled): a test waits on it to know the server saw the cancel."""
        if started:
            open(started, "x").close()
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            if cancelled:
                with open(cancelled, "w") as mark:
                    mark.write("cancelled")
            raise
        return "done"

    @mcp.tool(structured_output=False)
    def big(size: int) -> str:
        """Return a text of exactly `size` bytes ("x" repeated)."""
        return "x" * size

    @mcp.tool(structured_output=False)
    async def shout(size: int, ctx: Context, related: bool = True) -> str:
        """Send a log message of `size` bytes ("x" repeated) to the client, then return "said".

        With related=false the message is not tied to the call: over Streamable HTTP it goes on the
        standalone GET stream rather than on the call's own stream."""
        if related:
            await ctx.info("x" * size)
        else:
            await ctx.session.send_log_message(level="info", data="x" * size)
        return "said"

    @mcp.tool(structured_output=False)
    def getenv(name: str) -> str:
        """Return the value of an environment variable, or "<unset>"."""
        return os.environ.get(name, "<unset>")

    @mcp.tool(structured_output=False)
    def cwd() -> str:
        """Return the server process's working directory."""
        return os.getcwd()

    @mcp.tool(structured_output=False)
    async def grow(name: str, ctx: Context) -> str:
        """Add a tool called `name` that returns "grown", and tell the client the tool list changed."""

        def grown() -> str:
            return "grown"

        mcp.add_tool(grown, name=name, description="Added at run time by grow", structured_output=False)
        await ctx.session.send_tool_list_changed()
        return f"added {name}"

    @mcp.tool(structured_output=False)
    def subscriptions() -> str:
        """Return the subscribed resource URIs, sorted, one per line ("" when none)."""
        return "\n".join(sorted(subscribed))

    @mcp.tool(structured_output=False)
    async def touch(uri: str, ctx: Context, mark: str = "") -> str:
        """Send notifications/resources/updated for `uri` to the client, then return "touched"."""
        if not mark:
            await ctx.session.send_resource_updated(uri)
            return "touched"
        params = ResourceUpdatedNotificationParams(uri=uri, _meta={"mark": mark})
        await ctx.session.send_notification(ResourceUpdatedNotification(params=params))
        return "touched"

    # ask_name and ask_llm need input from the client mid-call. They take it through resolvers
    # (`Annotated[..., Resolve(fn)]` parameters, hidden from the input schema): a resolver returns an
    # `Elicit`/`Sample` marker and MCPServer fulfils it in the transport the call's protocol version
    # calls for: up to 2025-11-25 a server-initiated elicitation/create or sampling/createMessage request
    # sent while the call is in flight; from 2026-07-28 an input-required result (inputRequests +
    # requestState), the tool body running only when the client retries with inputResponses.

    class NameForm(BaseModel):
        name: str

    async def name_question() -> Elicit[NameForm]:
        return Elicit("What is your name?", NameForm)

    @mcp.tool(structured_output=False)
    async def ask_name(answer: Annotated[ElicitationResult[NameForm], Resolve(name_question)]) -> str:
        """Ask the client (form elicitation) for a name; return "name: <name>", or "elicitation <action>"."""
        if isinstance(answer, AcceptedElicitation):
            return f"name: {answer.data.name}"
        return f"elicitation {answer.action}"

    async def llm_question(question: str) -> Sample:
        return Sample([SamplingMessage(role="user", content=TextContent(text=question))], max_tokens=50)

    def trace_context(ctx: Context) -> str:
        """The trace context this call came with: {"header": traceparent header, "meta": _meta.traceparent}."""
        import json

        headers = ctx.headers
        meta = ctx.request_context.meta or {}
        traceparent = meta.get("traceparent") if isinstance(meta, dict) else getattr(meta, "traceparent", None)
        return json.dumps({"header": headers.get("traceparent") if headers else None, "meta": traceparent})

    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        mcp.tool(structured_output=False)(trace_context)

    @mcp.tool(structured_output=False)
    async def ask_llm(question: str, answer: Annotated[CreateMessageResult, Resolve(llm_question)]) -> str:
        """Ask the client's LLM (sampling, maxTokens 50) the question; return "llm: <the answer's text>"."""
        content = answer.content
        text = content.text if isinstance(content, TextContent) else f"<{content.type}>"
        return f"llm: {text}"

    @mcp.resource(DOC_URI, name="doc1", mime_type="text/plain")
    def doc1() -> str:
        """A static text document."""
        return "hello resource"

    for i in range(items):
        index = f"{i:04d}"
        uri = f"fixture://item/{index}"
        mcp.add_resource(TextResource(uri=uri, name=f"item-{index}", mime_type="text/plain", text=f"item {index}"))

    @mcp.resource(NOTE_TEMPLATE, name="note", mime_type="text/plain")
    def note(name: str) -> str:
        """A note per name (completions offered for `name`)."""
        return f"note {name}"

    def add_extra_template(k: int) -> None:
        def extra(name: str) -> str:
            return f"extra{k} {name}"

        mcp.resource(f"fixture://extra{k}/{{name}}", name=f"extra{k}", mime_type="text/plain")(extra)

    for k in range(extra_templates):
        add_extra_template(k)

    @mcp.prompt()
    def greet(name: str) -> str:
        """Greet someone by name."""
        return f"Hello, {name}!"

    @mcp.prompt()
    def code_review(language: str, code: str) -> str:
        """Ask for a review of a piece of code."""
        return f"Review this {language} code:\n{code}"

    @mcp.completion()
    async def complete(ref, argument, context):
        """Prefix-match completions for greet's `name` and fixture://note/{name}'s `name`."""
        if isinstance(ref, PromptReference) and ref.name == "greet" and argument.name == "name":
            candidates = GREET_NAMES
        elif isinstance(ref, ResourceTemplateReference) and ref.uri == NOTE_TEMPLATE and argument.name == "name":
            candidates = NOTE_NAMES
        else:
            return None  # the SDK answers an empty completion
        values = [v for v in candidates if v.startswith(argument.value)]
        return Completion(values=values, total=len(values), has_more=False)

    install_subscriptions(mcp, subscribed)

    if page > 0:
        install_paging(mcp, page)
    if os.environ.get("FIXTURE_LISTS_THEN_HANG", "").strip() == "1":
        install_hanging_lists(mcp)

    return mcp


RESOURCE_NOT_FOUND = -32002  # MCP's "Resource not found" error code


def install_subscriptions(mcp, subscribed: set[str]) -> None:
    """Serve resources/subscribe and resources/unsubscribe, recording URIs in `subscribed`.

    MCPServer registers no handler for these methods; `add_request_handler` adds them to its low-level Server.
    The low-level Server derives `resources.subscribe` in its capabilities from whether a
    "resources/subscribe" handler is registered (`Server.get_capabilities`), so registering it here is what
    makes the initialize result declare `subscribe: true`. A URI counts as one of this server's resources
    when MCPServer's public read_resource finds it (a static resource, or one a template produces).
    """
    from mcp.server.mcpserver.exceptions import ResourceNotFoundError
    from mcp.shared.exceptions import MCPError
    from mcp_types import EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams

    async def subscribe(ctx, params):
        try:
            await mcp.read_resource(params.uri)
        except ResourceNotFoundError as err:
            raise MCPError(code=RESOURCE_NOT_FOUND, message="Resource not found", data={"uri": params.uri}) from err
        subscribed.add(params.uri)
        return EmptyResult()

    async def unsubscribe(ctx, params):
        subscribed.discard(params.uri)
        return EmptyResult()

    lowlevel = mcp._lowlevel_server  # no public accessor in SDK 2.3.0 (see install_paging)
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)


def install_paging(mcp, page: int) -> None:
    """Replace the SDK's resources/list, resources/templates/list and prompts/list handlers with paginated ones.

    MCPServer registers its own handlers for these methods on its low-level Server; `add_request_handler`
    replaces a method's handler (the same call `MCPServer.completion()` makes). Each new handler takes the full
    list from MCPServer's public list_* method and returns the slice starting at the cursor, which is the
    decimal offset this server handed out as nextCursor. The full lists are built once, on first use, so a
    large FIXTURE_ITEMS paged finely stays linear: nothing here adds resources, templates or prompts at run time.
    """
    from mcp.shared.exceptions import MCPError
    from mcp_types import (
        INVALID_PARAMS,
        ListPromptsResult,
        ListResourcesResult,
        ListResourceTemplatesResult,
        PaginatedRequestParams,
    )

    def window(entries: list, params) -> tuple[list, str | None]:
        cursor = params.cursor if params is not None else None
        start = 0
        if cursor is not None:
            if not (cursor.isascii() and cursor.isdigit()) or int(cursor) > len(entries):
                raise MCPError(code=INVALID_PARAMS, message=f"Invalid cursor: {cursor!r}")
            start = int(cursor)
        end = start + page
        return entries[start:end], (str(end) if end < len(entries) else None)

    full: dict[str, list] = {}

    async def snapshot(key: str, build) -> list:
        if key not in full:
            full[key] = await build()
        return full[key]

    async def list_resources(ctx, params):
        entries, next_cursor = window(await snapshot("resources", mcp.list_resources), params)
        return ListResourcesResult(resources=entries, next_cursor=next_cursor)

    async def list_resource_templates(ctx, params):
        entries, next_cursor = window(await snapshot("templates", mcp.list_resource_templates), params)
        return ListResourceTemplatesResult(resource_templates=entries, next_cursor=next_cursor)

    async def list_prompts(ctx, params):
        entries, next_cursor = window(await snapshot("prompts", mcp.list_prompts), params)
        return ListPromptsResult(prompts=entries, next_cursor=next_cursor)

    lowlevel = mcp._lowlevel_server  # no public accessor in SDK 2.3.0; MCPServer.completion() uses the same object
    lowlevel.add_request_handler("resources/list", PaginatedRequestParams, list_resources)
    lowlevel.add_request_handler("resources/templates/list", PaginatedRequestParams, list_resource_templates)
    lowlevel.add_request_handler("prompts/list", PaginatedRequestParams, list_prompts)


def install_hanging_lists(mcp) -> None:
    """Answer the first resources/list, resources/templates/list and prompts/list, then hang on each later one."""
    from mcp_types import ListPromptsResult, ListResourcesResult, ListResourceTemplatesResult, PaginatedRequestParams

    answered: set[str] = set()

    async def first_only(method: str, build):
        if method in answered:
            await asyncio.Event().wait()  # never set: the request hangs until cancelled
        answered.add(method)
        return await build()

    async def list_resources(ctx, params):
        return ListResourcesResult(resources=await first_only("resources", mcp.list_resources))

    async def list_resource_templates(ctx, params):
        templates = await first_only("templates", mcp.list_resource_templates)
        return ListResourceTemplatesResult(resource_templates=templates)

    async def list_prompts(ctx, params):
        return ListPromptsResult(prompts=await first_only("prompts", mcp.list_prompts))

    lowlevel = mcp._lowlevel_server  # as install_paging
    lowlevel.add_request_handler("resources/list", PaginatedRequestParams, list_resources)
    lowlevel.add_request_handler("resources/templates/list", PaginatedRequestParams, list_resource_templates)
    lowlevel.add_request_handler("prompts/list", PaginatedRequestParams, list_prompts)


async def serve_http(mcp, port: int, stateless: bool = False, json: bool = False, sse: bool = False) -> None:
    """Serve Streamable HTTP (or legacy SSE) on a socket bound here, so the printed port is the one listening.

    `stateless` is the SDK's stateless_http: no Mcp-Session-Id, a fresh transport per POST; `json` its
    json_response (a JSON body per POST); `sse` serves the legacy HTTP+SSE app instead.
    """
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    if sse:
        app = mcp.sse_app(host="127.0.0.1")
    else:
        app = mcp.streamable_http_app(
            streamable_http_path="/mcp", host="127.0.0.1", stateless_http=stateless, json_response=json
        )
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
        ssl_certfile=os.environ.get("FIXTURE_TLS_CERT"),
        ssl_keyfile=os.environ.get("FIXTURE_TLS_KEY"),
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    if server.started:
        print(f"PORT={sock.getsockname()[1]}", flush=True)
    await task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["stdio", "http", "sse", "crash", "hang"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--stateless", action="store_true", help="http mode: serve Streamable HTTP statelessly")
    parser.add_argument("--json", action="store_true", help="http mode: answer POSTs with JSON bodies, not SSE")
    args = parser.parse_args()
    if (args.stateless or args.json) and args.mode != "http":
        parser.error("--stateless and --json apply to http mode only")

    if args.mode == "crash":
        sys.stderr.write("fixture: starting\nfixture: fatal: config missing\n")
        sys.stderr.flush()
        sys.exit(3)
    elif args.mode == "hang":
        for _ in sys.stdin.buffer:
            pass
    elif args.mode == "stdio":
        build_server().run("stdio")
    else:
        asyncio.run(serve_http(build_server(), args.port, args.stateless, args.json, args.mode == "sse"))


if __name__ == "__main__":
    main()
