"""Fixture for conformance 0.2.0-alpha.12's `server` mode, at both the 2025-11-25 and 2026-07-28 revisions.

Usage:
    conformance_server_2026.py [--port N] [--retry-ms MS]
        serve Streamable HTTP at http://127.0.0.1:N/mcp (N=0: a free port); prints exactly one line
        "PORT=<port>" to stdout once listening

It is tests/peers/conformance_server.py's catalogue (the names suite 0.1.16 calls, which 0.2 calls again at
2025-11-25) plus what the 0.2 suite's 2026-07-28 scenarios call by name. Everything below was derived from the
scenarios' own descriptions and checks (@modelcontextprotocol/conformance-next/dist), built on the Python SDK
`mcp` 2.3.0 (MCPServer). The extra names:

tools (2026-07-28)
    test_input_required_result_elicitation     one elicitation "user_name" ({name}); then "Hello, <name>!"
    test_input_required_result_sampling        one sampling request "capital_question"; then the model's answer
    test_input_required_result_list_roots      one roots/list "client_roots"; then the roots it was given
    test_input_required_result_request_state   elicitation "confirm" ({ok}) plus requestState; then "state-ok"
    test_input_required_result_multiple_inputs elicitation, sampling and roots/list at once, plus requestState
    test_input_required_result_multi_round     "step1" (name), then "step2" (color) with a new requestState,
                                               then the complete result
    test_input_required_result_tampered_state  like request_state; a modified requestState is refused
    test_input_required_result_capabilities    asks only for what the request's _meta client capabilities
                                               declare (sampling, elicitation, roots)
    test_streaming_elicitation                 an elicitation as an input-required result on the call's own
                                               response (server-stateless: never a separate request)
    test_missing_capability                    -32021 with data.requiredCapabilities unless the client declared
                                               sampling
    test_logging_tool                          logs one message (sent only when the request asked for a level)
    test_trigger_tool_change / test_trigger_prompt_change
                                               adds and removes a tool (prompt) and announces the list change to
                                               subscriptions/listen streams
    json_schema_2020_12_tool                   listed with SEP-2106's keywords too ($anchor, allOf/anyOf, if/then/else)
    test_x_mcp_header(region)                  a string argument mirrored into the Mcp-Param-Region header
                                               (SEP-2243: the SDK checks header against body)
prompts (2026-07-28)
    test_input_required_result_prompt          elicitation "user_context" ({context}); then a one-message prompt

An input request is answered when the retry's inputResponses holds its key; any key missing is asked for again
(responses under unknown keys are ignored). requestState is this fixture's own plaintext ("round-2", ...): the
SDK seals it (AES-GCM, a key made at start-up) before it goes out and refuses an echo that fails to unseal, which
is what input-required-result-tampered-state checks. The transport (sessions at 2025-11-25, the stateless wire
at 2026-07-28, DNS rebinding protection, SSE resumability) is the SDK's, set up as in conformance_server.py.
"""

import argparse
import asyncio
import sys
import warnings

from conformance_server import JSON_SCHEMA_2020_12, build_server, serve_http

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
COLOR_SCHEMA = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
OK_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
CONTEXT_SCHEMA = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}

# json_schema_2020_12_tool's listed schema, grown by the keywords SEP-2106 allows (checked at 2026-07-28): an
# $anchor inside $defs, allOf/anyOf, and if/then/else. Phone or email is required, and phone when the contact
# method is the phone.
JSON_SCHEMA_SEP2106 = {
    **JSON_SCHEMA_2020_12,
    "$defs": {"address": {"$anchor": "addressDef", **JSON_SCHEMA_2020_12["$defs"]["address"]}},
    "properties": {
        **JSON_SCHEMA_2020_12["properties"],
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
}


def add_2026_catalogue(mcp) -> None:
    """Register the names the 2026-07-28 scenarios call on top of the 2025 catalogue."""
    from typing import Annotated

    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver.prompts.base import Prompt, UserMessage
    from mcp.shared.exceptions import MCPError
    from mcp_types import (
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        CallToolResult,
        CreateMessageRequest,
        CreateMessageRequestParams,
        ElicitRequest,
        ElicitRequestFormParams,
        InputRequiredResult,
        ListRootsRequest,
        SamplingMessage,
        TextContent,
    )
    from pydantic import Field

    # ----- building blocks ---------------------------------------------------------------------------------

    def form(message: str, schema: dict) -> ElicitRequest:
        return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))

    def sample(text: str, max_tokens: int) -> CreateMessageRequest:
        message = SamplingMessage(role="user", content=TextContent(text=text))
        return CreateMessageRequest(params=CreateMessageRequestParams(messages=[message], max_tokens=max_tokens))

    def roots() -> ListRootsRequest:
        return ListRootsRequest()

    def answered(ctx: Context, wanted: dict) -> dict | None:
        """The responses to `wanted` (key -> input request) when every key has one, else None."""
        given = ctx.input_responses or {}
        if all(key in given for key in wanted):
            return {key: given[key] for key in wanted}
        return None

    def ask(wanted: dict, state: str | None = None) -> InputRequiredResult:
        return InputRequiredResult(input_requests=wanted, request_state=state)

    def text(value: str) -> CallToolResult:
        return CallToolResult(content=[TextContent(text=value)])

    def elicited(response, field: str) -> str:
        return str((getattr(response, "content", None) or {}).get(field, "?"))

    def sampled(response) -> str:
        content = getattr(response, "content", None)
        return content.text if isinstance(content, TextContent) else "?"

    def root_uris(response) -> str:
        return ", ".join(str(root.uri) for root in getattr(response, "roots", []) or []) or "(none)"

    # ----- input-required results (SEP-2322) ----------------------------------------------------------------

    @mcp.tool()
    async def test_input_required_result_elicitation(ctx: Context) -> CallToolResult | InputRequiredResult:
        """Asks for the user's name through an input-required result, then greets them."""
        wanted = {"user_name": form("What is your name?", NAME_SCHEMA)}
        got = answered(ctx, wanted)
        if got is None:
            return ask(wanted)
        return text(f"Hello, {elicited(got['user_name'], 'name')}!")

    @mcp.tool()
    async def test_input_required_result_sampling(ctx: Context) -> CallToolResult | InputRequiredResult:
        """Asks the client's model a question through an input-required result, then returns its answer."""
        wanted = {"capital_question": sample("What is the capital of France?", 100)}
        got = answered(ctx, wanted)
        if got is None:
            return ask(wanted)
        return text(f"The model said: {sampled(got['capital_question'])}")

    @mcp.tool()
    async def test_input_required_result_list_roots(ctx: Context) -> CallToolResult | InputRequiredResult:
        """Asks for the client's roots through an input-required result, then lists them."""
        wanted = {"client_roots": roots()}
        got = answered(ctx, wanted)
        if got is None:
            return ask(wanted)
        return text(f"Client roots: {root_uris(got['client_roots'])}")

    @mcp.tool()
    async def test_input_required_result_request_state(ctx: Context) -> CallToolResult | InputRequiredResult:
        """Asks for a confirmation with a requestState, and completes only when that state comes back."""
        wanted = {"confirm": form("Please confirm", OK_SCHEMA)}
        got = answered(ctx, wanted)
        if got is None or ctx.request_state != "awaiting-confirm":
            return ask(wanted, "awaiting-confirm")
        return text(f"state-ok: confirmed={elicited(got['confirm'], 'ok')}")

    @mcp.tool()
    async def test_input_required_result_tampered_state(ctx: Context) -> CallToolResult | InputRequiredResult:
        """Like the request_state tool; a requestState changed by the client never reaches it (the SDK refuses)."""
        wanted = {"confirm": form("Please confirm", OK_SCHEMA)}
        got = answered(ctx, wanted)
        if got is None or ctx.request_state != "awaiting-confirm":
            return ask(wanted, "awaiting-confirm")
        return text("state-ok")

    @mcp.tool()
    async def test_input_required_result_multiple_inputs(ctx: Context) -> CallToolResult | InputRequiredResult:
        """Asks for a name, a generated greeting and the roots at once."""
        wanted = {
            "user_name": form("What is your name?", NAME_SCHEMA),
            "greeting": sample("Generate a greeting", 50),
            "client_roots": roots(),
        }
        got = answered(ctx, wanted)
        if got is None or ctx.request_state != "all-three":
            return ask(wanted, "all-three")
        name, greeting = elicited(got["user_name"], "name"), sampled(got["greeting"])
        return text(f"All three answered: name {name}; greeting {greeting}; roots {root_uris(got['client_roots'])}")

    @mcp.tool()
    async def test_input_required_result_multi_round(ctx: Context) -> CallToolResult | InputRequiredResult:
        """Two rounds of questions, the requestState saying which round the client is answering."""
        step1 = {"step1": form("Step 1: What is your name?", NAME_SCHEMA)}
        step2 = {"step2": form("Step 2: What is your favorite color?", COLOR_SCHEMA)}
        state = ctx.request_state or ""
        if state.startswith("round-2:"):
            got = answered(ctx, step2)
            if got is None:
                return ask(step2, state)
            return text(f"{state.removeprefix('round-2:')} likes {elicited(got['step2'], 'color')}")
        got = answered(ctx, step1) if state == "round-1" else None
        if got is None:
            return ask(step1, "round-1")
        return ask(step2, f"round-2:{elicited(got['step1'], 'name')}")

    @mcp.tool()
    async def test_input_required_result_capabilities(ctx: Context) -> CallToolResult | InputRequiredResult:
        """Asks only for the kinds of input the request's client capabilities declare."""
        caps = ctx.client_capabilities
        wanted = {}
        if caps is not None and caps.sampling is not None:
            wanted["summary"] = sample("Summarise the capabilities test", 50)
        if caps is not None and caps.elicitation is not None:
            wanted["user_name"] = form("What is your name?", NAME_SCHEMA)
        if caps is not None and caps.roots is not None:
            wanted["client_roots"] = roots()
        if not wanted:
            return text("The client declared no capability this tool could ask through.")
        if answered(ctx, wanted) is None:
            return ask(wanted)
        return text(f"Answered: {', '.join(sorted(wanted))}")

    @mcp.prompt()
    async def test_input_required_result_prompt(ctx: Context) -> list[UserMessage] | InputRequiredResult:
        """A prompt that first asks the user which context it should use."""
        wanted = {"user_context": form("What context should the prompt use?", CONTEXT_SCHEMA)}
        got = answered(ctx, wanted)
        if got is None:
            return ask(wanted)
        return [UserMessage(f"Answer using this context: {elicited(got['user_context'], 'context')}")]

    # ----- stateless diagnostics (SEP-2575's server-stateless) ----------------------------------------------

    @mcp.tool()
    async def test_streaming_elicitation(ctx: Context) -> CallToolResult | InputRequiredResult:
        """Needs a name: asked on the call's own response as an input-required result, never as a request."""
        wanted = {"user_name": form("What is your name?", NAME_SCHEMA)}
        got = answered(ctx, wanted)
        return ask(wanted) if got is None else text(f"Elicited {elicited(got['user_name'], 'name')}")

    @mcp.tool()
    async def test_missing_capability(ctx: Context) -> CallToolResult:
        """Needs the client's sampling capability; without it the call is refused with -32021."""
        caps = ctx.client_capabilities
        if caps is None or caps.sampling is None:
            raise MCPError(
                code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                message="test_missing_capability needs the client capability 'sampling'",
                data={"requiredCapabilities": {"sampling": {}}},
            )
        return text("The client declared sampling.")

    @mcp.tool()
    async def test_logging_tool(ctx: Context) -> CallToolResult:
        """Logs one info message: delivered only when the request's _meta named a log level."""
        await ctx.log("info", "test_logging_tool was called")
        return text("logged one message")

    def transient_tool() -> str:
        """Exists only for a moment inside test_trigger_tool_change."""
        return "transient"

    def transient_prompt() -> str:
        """Exists only for a moment inside test_trigger_prompt_change."""
        return "transient"

    @mcp.tool()
    async def test_trigger_tool_change(ctx: Context) -> CallToolResult:
        """Adds and removes a tool, then announces that the tool list changed."""
        mcp.add_tool(transient_tool, name="test_transient_tool")
        mcp.remove_tool("test_transient_tool")
        await ctx.notify_tools_changed()
        return text("tools changed")

    @mcp.tool()
    async def test_trigger_prompt_change(ctx: Context) -> CallToolResult:
        """Adds and removes a prompt, then announces that the prompt list changed."""
        mcp.add_prompt(Prompt.from_function(transient_prompt, name="test_transient_prompt", description="transient"))
        mcp.remove_prompt("test_transient_prompt")
        await ctx.notify_prompts_changed()
        return text("prompts changed")

    # ----- SEP-2106 schema vocabulary --------------------------------------------------------------------------

    # Listed verbatim, as conformance_server.py does for the 2020-12 schema (advertised, not enforced).
    mcp._tool_manager.get_tool("json_schema_2020_12_tool").parameters = JSON_SCHEMA_SEP2106

    # ----- SEP-2243 custom headers ----------------------------------------------------------------------------

    @mcp.tool()
    def test_x_mcp_header(
        region: Annotated[
            str,
            Field(description="Also sent as the Mcp-Param-Region header", json_schema_extra={"x-mcp-header": "Region"}),
        ] = "unset",
    ) -> CallToolResult:
        """Echoes a region argument that clients must also send as the Mcp-Param-Region header."""
        return text(f"region={region}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--retry-ms", type=int, default=100, help="`retry:` sent in SSE priming events (default 100)")
    args = parser.parse_args()

    # Logging, sampling and roots are deprecated in 2026-07-28; the 2025-11-25 scenarios still use them.
    warnings.filterwarnings("ignore", message=".*deprecated as of 2026-07-28.*")

    mcp = build_server()
    add_2026_catalogue(mcp)
    try:
        # Headers as sent: suite 0.2 states the version it negotiated (no SessionVersionHeader needed).
        asyncio.run(serve_http(mcp, args.port, args.retry_ms, strict_header=True))
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
