"""Test peer for mcp-bridge's OAuth client: an OAuth-protected MCP server and its authorization server.

Usage:
    oauth_server.py [--port N] [--access-ttl SECONDS] [--state-file PATH] [--scopes "mcp offline_access"]
                    [--strict-resource]

One process on one origin, http://127.0.0.1:N (N=0: a free port; it prints one line "PORT=<port>" to stdout
once listening), built from the Python `mcp` SDK's own auth support:

The authorization server (issuer http://127.0.0.1:N, the SDK's `create_auth_routes` over the provider below):
    GET  /.well-known/oauth-authorization-server    RFC 8414 metadata (S256 only, scopes_supported = --scopes)
    POST /register                                  RFC 7591 dynamic client registration
    GET  /authorize                                 AUTO-APPROVES: redirects at once to redirect_uri?code&state
                                                    (no person in tests); the `resource` parameter is recorded
    POST /token                                     authorization_code (PKCE S256 verified by the SDK) and
                                                    refresh_token (rotated: a used refresh token is refused)
    POST /revoke                                    RFC 7009 revocation (revokes the whole grant)

The protected MCP server (the SDK's `MCPServer` with `auth=AuthSettings(...)` and this provider):
    POST/GET/DELETE /mcp                            Streamable HTTP; without a valid token: 401 with
                                                    `WWW-Authenticate: Bearer ..., resource_metadata="<PRM URL>"`
    GET  /.well-known/oauth-protected-resource/mcp  RFC 9728 metadata naming the authorization server
    resource template grant://{who} (read grant://me): the same JSON as whoami (for the reads of per_agent servers)
    tools: whoami()  JSON text of the grant the calling token belongs to:
                     {"grant": n, "client_id", "scopes", "resource", "generation"}; `grant` counts
                     authorization-code exchanges (1, 2, ...), so two agents' grants differ, and a token obtained
                     by refreshing keeps its grant while `generation` grows (1 for the first access token)
           echo(text)  returns text
           tell()      logs "log of grant N" (the caller's grant) during the call
    resources/list  one resource per grant, grant://private-N: each token lists only its own grant's

A grant is what one authorization-code exchange creates: its access token and refresh token, and every pair
obtained by refreshing them. Access tokens live --access-ttl seconds (default 3600; a small value exercises
refresh); an access token that was replaced by a refresh stays valid until it expires.

Plain HTTP controls for tests (no auth):
    GET  /_stats     counters and what was issued: {"registrations", "authorizations", "code_exchanges",
                     "code_reuse" (a used or unknown code presented again), "refreshes", "refresh_reuse" (a rotated
                     or unknown refresh token presented), "revocations", "unauthorized" (401s served on /mcp),
                     "resource_params": {"authorize": n, "token": n} (requests that carried `resource`),
                     "resources": [distinct resource values seen], "scopes_requested": [scope strings asked at
                     /authorize], "clients": [{client_id, client_name, redirect_uris, token_endpoint_auth_method,
                     client_secret}],
                     "grants": [{grant, client_id, scopes, resource, generation, revoked}],
                     "issued_tokens": [every access and refresh token issued, oldest first],
                     "last_access_token", "last_refresh_token"}
    POST /_expire    expires every access token now (the next use is a 401 until the client refreshes);
                     answers {"expired": n}

--id-jag (SEP-990, enterprise-managed authorization): the token endpoint also takes the RFC 7523 jwt-bearer grant
carrying an ID-JAG of the identity provider id_jag_idp.py mounts at /idp (issuer http://127.0.0.1:N/idp; its
docstring lists its endpoints), from the pre-registered client xaa-client / xaa-secret (client_secret_basic); the
grant is the ID-JAG's subject (whoami's "subject"), with no refresh token.

Hostile modes (tests of what the bridge shows and where it connects): --metadata-override KEY=VALUE replaces a field
of the RFC 8414 metadata (repeatable; e.g. registration_endpoint=http://169.254.169.254/register), --fail-with-body
TEXT answers every POST to /register and /token (or only to each --fail-on PATH) with 400 and TEXT.

--state-file PATH keeps clients, grants and tokens in a JSON file (rewritten after every change, read at
start-up), so a restarted peer still accepts the tokens it issued; counters start from zero in each process.
--strict-resource refuses (401) an access token not issued for this server's resource (RFC 8707): one
obtained without a `resource` parameter, or for another resource. By default such a token is accepted and only
the counters tell whether `resource` was sent.
"""

import argparse
import asyncio
import json
import os
import secrets
import socket
import sys
import time
from typing import Any
from urllib.parse import parse_qs

from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.responses import JSONResponse

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

CODE_TTL = 300


class Store:
    """Clients, codes, grants and tokens, optionally mirrored to a JSON file."""

    def __init__(self, path: str | None):
        self.path = path
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.used_codes: set[str] = set()
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.rotated: set[str] = set()
        self.grants: dict[int, dict[str, Any]] = {}
        self.issued: list[str] = []
        self.next_grant = 1
        if path and os.path.exists(path):
            self.load()

    def load(self) -> None:
        with open(self.path, encoding="utf-8") as f:
            data = json.load(f)
        self.clients = {k: OAuthClientInformationFull.model_validate(v) for k, v in data["clients"].items()}
        self.access = {k: AccessToken.model_validate(v) for k, v in data["access"].items()}
        self.refresh = {k: RefreshToken.model_validate(v) for k, v in data["refresh"].items()}
        self.rotated = set(data["rotated"])
        self.grants = {int(k): v for k, v in data["grants"].items()}
        self.issued = data["issued"]
        self.next_grant = data["next_grant"]

    def save(self) -> None:
        if not self.path:
            return
        data = {
            "clients": {k: v.model_dump(mode="json") for k, v in self.clients.items()},
            "access": {k: v.model_dump(mode="json") for k, v in self.access.items()},
            "refresh": {k: v.model_dump(mode="json") for k, v in self.refresh.items()},
            "rotated": sorted(self.rotated),
            "grants": self.grants,
            "issued": self.issued,
            "next_grant": self.next_grant,
        }
        tmp = f"{self.path}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, self.path)


def grant_number(subject: str | None) -> int | None:
    if subject and subject.startswith("grant-"):
        return int(subject.removeprefix("grant-"))
    return None


class AutoApproveProvider:
    """An `OAuthAuthorizationServerProvider` whose resource owner approves every request at once.

    A token's `subject` is its grant ("grant-<n>"): the SDK binds a Streamable HTTP session to (client_id, issuer,
    subject), so a refreshed token keeps its session and another agent's grant never shares one.
    """

    def __init__(self, store: Store, stats: dict[str, Any], access_ttl: int, resource: str, strict: bool):
        self.idp = None  # --id-jag: the identity provider whose ID-JAGs are taken (id_jag_idp.py)
        self.store = store
        self.stats = stats
        self.access_ttl = access_ttl
        self.resource = resource
        self.strict = strict

    # -- clients (RFC 7591) --

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.store.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.store.clients[client_info.client_id] = client_info
        self.stats["registrations"] += 1
        self.store.save()

    # -- authorization code --

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.stats["authorizations"] += 1
        self.stats["scopes_requested"].append(" ".join(params.scopes) if params.scopes is not None else None)
        scopes = params.scopes
        if scopes is None:
            scopes = client.scope.split() if client.scope else []
        code = AuthorizationCode(
            code=secrets.token_urlsafe(32),
            scopes=scopes,
            expires_at=time.time() + CODE_TTL,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        self.store.codes[code.code] = code
        return construct_redirect_uri(str(params.redirect_uri), code=code.code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str):
        code = self.store.codes.get(authorization_code)
        if code is None or code.client_id != client.client_id:
            self.stats["code_reuse"] += 1
            return None
        return code

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        if self.store.codes.pop(authorization_code.code, None) is None:
            self.stats["code_reuse"] += 1
            raise TokenError("invalid_grant", "authorization code already used")
        self.store.used_codes.add(authorization_code.code)
        grant = self.store.next_grant
        self.store.next_grant += 1
        self.store.grants[grant] = {
            "grant": grant,
            "client_id": client.client_id,
            "scopes": authorization_code.scopes,
            "resource": authorization_code.resource,
            "generation": 0,
            "revoked": False,
        }
        self.stats["code_exchanges"] += 1
        return self.issue(grant)

    # -- refresh (rotated) --

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str):
        token = self.store.refresh.get(refresh_token)
        if token is None or token.client_id != client.client_id:
            self.stats["refresh_reuse"] += 1
            return None
        return token

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        if self.store.refresh.pop(refresh_token.token, None) is None:
            self.stats["refresh_reuse"] += 1
            raise TokenError("invalid_grant", "refresh token already used")
        self.store.rotated.add(refresh_token.token)
        grant = grant_number(refresh_token.subject)
        self.stats["refreshes"] += 1
        return self.issue(grant, scopes)

    def issue(self, grant: int, scopes: list[str] | None = None) -> OAuthToken:
        record = self.store.grants[grant]
        record["generation"] += 1
        scopes = record["scopes"] if scopes is None else scopes
        subject = f"grant-{grant}"
        access = secrets.token_urlsafe(32)
        refresh = secrets.token_urlsafe(32)
        self.store.access[access] = AccessToken(
            token=access,
            client_id=record["client_id"],
            scopes=scopes,
            expires_at=int(time.time()) + self.access_ttl,
            resource=record["resource"],
            subject=subject,
            claims={"generation": record["generation"]},
        )
        self.store.refresh[refresh] = RefreshToken(
            token=refresh, client_id=record["client_id"], scopes=scopes, resource=record["resource"], subject=subject
        )
        self.store.issued += [access, refresh]
        self.stats["last_access_token"] = access
        self.stats["last_refresh_token"] = refresh
        self.store.save()
        return OAuthToken(
            access_token=access,
            expires_in=self.access_ttl,
            scope=" ".join(scopes) if scopes else None,
            refresh_token=refresh,
        )

    # -- tokens at the resource server --

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.store.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        if self.strict and (found.resource or "").rstrip("/") != self.resource.rstrip("/"):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        grant = grant_number(token.subject)
        self.stats["revocations"] += 1
        if grant is None or grant not in self.store.grants:
            return
        self.store.grants[grant]["revoked"] = True
        subject = f"grant-{grant}"
        for table in (self.store.access, self.store.refresh):
            for key in [k for k, v in table.items() if v.subject == subject]:
                del table[key]
        self.store.save()

    async def exchange_identity_assertion(self, client, params) -> OAuthToken:
        if self.idp is None:
            raise TokenError("unsupported_grant_type", "not supported by this test peer")
        # --id-jag: a grant of the ID-JAG's subject, with the scopes it carries; no refresh token (SEP-990).
        subject, scopes = self.idp.redeem(client.client_id, params.assertion)
        grant = self.store.next_grant
        self.store.next_grant += 1
        self.store.grants[grant] = {
            "grant": grant, "client_id": client.client_id, "scopes": scopes, "resource": self.resource,
            "generation": 0, "revoked": False, "subject": subject,
        }
        token = self.issue(grant)
        return OAuthToken(access_token=token.access_token, expires_in=token.expires_in, scope=token.scope)


class Observe:
    """ASGI wrapper that records what the SDK's handlers do not report: a `resource` parameter on /authorize or
    /token, and the 401s served on /mcp."""

    def __init__(self, app, stats: dict[str, Any]):
        self.app = app
        self.stats = stats

    def note_resource(self, endpoint: str, params: dict[str, list[str]]) -> None:
        values = params.get("resource")
        if values:
            self.stats["resource_params"][endpoint] += 1
            for value in values:
                if value not in self.stats["resources"]:
                    self.stats["resources"].append(value)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        if path == "/authorize" and scope["method"] == "GET":
            self.note_resource("authorize", parse_qs(scope.get("query_string", b"").decode("latin-1")))
        elif path in ("/authorize", "/token") and scope["method"] == "POST":
            chunks = []
            while True:
                message = await receive()
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    break
            body = b"".join(chunks)
            self.note_resource(path.strip("/"), parse_qs(body.decode("latin-1")))
            replayed = False

            async def replay():
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            return await self.app(scope, replay, send)
        elif path == "/mcp":

            async def watch(message):
                if message["type"] == "http.response.start" and message["status"] == 401:
                    self.stats["unauthorized"] += 1
                await send(message)

            return await self.app(scope, receive, watch)
        return await self.app(scope, receive, send)


class Tamper:
    """ASGI middleware making the authorization server hostile, for tests of what the bridge does with one:
    --metadata-override KEY=VALUE replaces fields of its RFC 8414 metadata (e.g. a token endpoint at a
    link-local address), and --fail-with-body TEXT answers every POST to /register and /token (or to the
    --fail-on paths) with 400 and that body (which the bridge must never show to agents)."""

    def __init__(self, app, overrides: dict[str, str], fail_body: str | None, fail_on: list[str]):
        self.app = app
        self.overrides = overrides
        self.fail_body = fail_body
        self.fail_on = fail_on or ["/register", "/token"]

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path, method = scope["path"], scope["method"]
        if self.fail_body is not None and method == "POST" and path in self.fail_on:
            body = self.fail_body.encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 400,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
                }
            )
            return await send({"type": "http.response.body", "body": body})
        if self.overrides and path.startswith("/.well-known/oauth-authorization-server"):
            start, chunks = {}, []

            async def keep(message):
                if message["type"] == "http.response.start":
                    start.update(message)
                else:
                    chunks.append(message.get("body", b""))

            await self.app(scope, receive, keep)
            metadata = json.loads(b"".join(chunks))
            metadata.update(self.overrides)
            body = json.dumps(metadata).encode()
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({"type": "http.response.start", "status": start.get("status", 200), "headers": headers})
            return await send({"type": "http.response.body", "body": body})
        return await self.app(scope, receive, send)


def new_stats() -> dict[str, Any]:
    return {
        "registrations": 0,
        "authorizations": 0,
        "code_exchanges": 0,
        "code_reuse": 0,
        "refreshes": 0,
        "refresh_reuse": 0,
        "revocations": 0,
        "unauthorized": 0,
        "resource_params": {"authorize": 0, "token": 0},
        "resources": [],
        "scopes_requested": [],
        "last_access_token": None,
        "last_refresh_token": None,
    }


def build(base: str, args) -> tuple[MCPServer, Store, dict[str, Any]]:
    resource = f"{base}/mcp"
    scopes = args.scopes.split()
    store = Store(args.state_file)
    stats = new_stats()
    provider = AutoApproveProvider(store, stats, args.access_ttl, resource, args.strict_resource)
    auth = AuthSettings(
        issuer_url=base,
        resource_server_url=resource,
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=scopes or None, default_scopes=scopes or None
        ),
        revocation_options=RevocationOptions(enabled=True),
        identity_assertion_enabled=args.id_jag,
        required_scopes=[scopes[0]] if scopes else None,
        # The provider checks the resource itself (--strict-resource), so that a token without one can be told
        # apart in the counters rather than refused outright.
        validate_token_resource=False,
    )
    mcp = MCPServer("oauth-fixture", version="1.0.0", auth_server_provider=provider, auth=auth)
    if args.id_jag:
        import id_jag_idp
        from id_jag_idp import XAA_CLIENT, XAA_SECRET, Idp

        if args.idp_key:
            id_jag_idp.KEY = args.idp_key.encode()
        provider.idp = Idp(base, resource)
        provider.idp.mount(mcp)
        store.clients[XAA_CLIENT] = OAuthClientInformationFull(
            client_id=XAA_CLIENT, client_secret=XAA_SECRET, redirect_uris=None,
            token_endpoint_auth_method="client_secret_basic",
            grant_types=["urn:ietf:params:oauth:grant-type:jwt-bearer"], scope=" ".join(scopes) or None,
        )

    @mcp.tool(description="The grant the calling access token belongs to, as JSON text.")
    def whoami(ctx: Context) -> str:
        header = (ctx.headers or {}).get("authorization", "")
        token = store.access.get(header[7:] if header.lower().startswith("bearer ") else "")
        if token is None:
            return json.dumps({"grant": None})
        record = store.grants[grant_number(token.subject)]
        return json.dumps(
            {
                "grant": record["grant"],
                "client_id": token.client_id,
                "scopes": token.scopes,
                "resource": token.resource,
                "generation": (token.claims or {}).get("generation"),
                # --id-jag: whom the identity provider vouched for
                "subject": record.get("subject"),
            }
        )

    @mcp.tool(description="Returns its text.")
    def echo(text: str) -> str:
        return text

    @mcp.tool(description="Logs 'log of grant N' (the caller's grant) to the client during the call.")
    async def tell(ctx: Context) -> str:
        grant = json.loads(whoami(ctx))["grant"]
        await ctx.info(f"log of grant {grant}")
        return "told"

    # resources/list answers each grant its own private resource, grant://private-N (read through the
    # template below): what one agent's session lists is that agent's.
    from mcp_types import ListResourcesResult, PaginatedRequestParams, Resource

    async def list_private(ctx, params):
        header = (getattr(ctx.request, "headers", None) or {}).get("authorization", "")
        token = store.access.get(header[7:] if header.lower().startswith("bearer ") else "")
        if token is None:
            return ListResourcesResult(resources=[])
        grant = store.grants[grant_number(token.subject)]["grant"]
        private = Resource(uri=f"grant://private-{grant}", name=f"private-{grant}", mime_type="application/json")
        return ListResourcesResult(resources=[private])

    mcp._lowlevel_server.add_request_handler("resources/list", PaginatedRequestParams, list_private)

    # A template: the SDK gives a Context only to those (any `who` reads the caller's own grant).
    @mcp.resource("grant://{who}", mime_type="application/json", description="whoami, as a resource.")
    def my_grant(who: str, ctx: Context) -> str:
        return whoami(ctx)

    @mcp.custom_route("/_stats", methods=["GET"])
    async def stats_route(request: Request) -> JSONResponse:
        body = dict(stats)
        body["clients"] = [
            {
                "client_id": c.client_id,
                "client_name": c.client_name,
                "redirect_uris": [str(u) for u in c.redirect_uris or []],
                "token_endpoint_auth_method": c.token_endpoint_auth_method,
                "client_secret": c.client_secret,
            }
            for c in store.clients.values()
        ]
        body["grants"] = [store.grants[g] for g in sorted(store.grants)]
        body["issued_tokens"] = list(store.issued)
        return JSONResponse(body)

    @mcp.custom_route("/_expire", methods=["POST"])
    async def expire_route(request: Request) -> JSONResponse:
        now = int(time.time()) - 1
        for token in store.access.values():
            token.expires_at = now
        store.save()
        return JSONResponse({"expired": len(store.access)})

    return mcp, store, stats


async def serve(args) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    mcp, _, stats = build(base, args)
    app = Observe(mcp.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1"), stats)
    overrides = dict(item.split("=", 1) for item in args.metadata_override)
    if overrides or args.fail_with_body is not None:
        app = Tamper(app, overrides, args.fail_with_body, args.fail_on)
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
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--access-ttl", type=int, default=3600, help="access token lifetime in seconds")
    parser.add_argument("--state-file", help="keep clients, grants and tokens in this JSON file")
    parser.add_argument(
        "--scopes",
        default="mcp offline_access",
        help="space-separated scopes_supported; the first is required on /mcp (default: %(default)s)",
    )
    parser.add_argument(
        "--id-jag",
        action="store_true",
        help="SEP-990: take ID-JAGs of the identity provider id_jag_idp.py mounts at /idp (client xaa-client)",
    )
    parser.add_argument(
        "--idp-key",
        default="",
        help="--id-jag: the identity provider's HS256 key (default: a random one); given the bridge's JWT secret, "
        "its ID tokens are also the agents' bridge tokens, as when the bridge trusts the same provider",
    )
    parser.add_argument(
        "--strict-resource", action="store_true", help="refuse access tokens not issued for this server's resource"
    )
    parser.add_argument(
        "--metadata-override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="replace a field of the authorization server metadata (repeatable)",
    )
    parser.add_argument("--fail-with-body", help="answer every POST to /register and /token 400 with this body")
    parser.add_argument(
        "--fail-on", action="append", default=[], metavar="PATH", help="only these paths fail (repeatable)"
    )
    args = parser.parse_args()
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
