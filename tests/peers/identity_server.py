"""An MCP server (Python `mcp` SDK, MCPServer) that tells who calls it, for the tests of agents'
identities upstream (tests/api/identity_upstream.rs).

Usage: identity_server.py [--issuer URL] [--port 0] [--sse]

Serves Streamable HTTP at /mcp (with --sse: legacy HTTP+SSE at /sse) on 127.0.0.1 and prints "PORT=<port>" once listening. With
`--issuer`, it is an OAuth protected resource (RFC 9728 metadata naming the issuer as its
authorization server): a request needs a bearer JWT signed with one of the issuer's keys (its
JWKS at `{issuer}/jwks`, read with PyJWT), issued by it, for this server (`aud` its URL), not
expired, whose subject the issuer has not revoked (`GET {issuer}/test/revoked`, as the fixture
provider tests/peers/oidc_provider.mjs serves it); anything else is a 401.

Its one tool, `whoami`, answers JSON: the token's `sub`, `act.sub`, `aud` and `tenant` (null without
`--issuer`), the request's `x-user` and `x-tenant` headers, and the SHA-256 of the bearer token it
was sent (so a test can tell which token came without the token being shown).
"""

import argparse
import asyncio
import hashlib
import json
import socket

import httpx
import jwt
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer


class IssuerTokens:
    """Verifies bearer JWTs against the issuer's published keys and its revocation list."""

    def __init__(self, issuer: str, resource: str) -> None:
        self.issuer = issuer
        self.resource = resource
        self.keys = jwt.PyJWKClient(f"{issuer}/jwks", cache_keys=True)

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            key = await asyncio.to_thread(self.keys.get_signing_key_from_jwt, token)
            claims = jwt.decode(
                token, key.key, algorithms=["RS256"], audience=self.resource, issuer=self.issuer
            )
        except jwt.PyJWTError:
            return None
        async with httpx.AsyncClient(timeout=5) as client:
            revoked = (await client.get(f"{self.issuer}/test/revoked")).json()["revoked"]
        if claims.get("sub") in revoked:
            return None
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id", "")),
            scopes=str(claims.get("scope", "")).split(),
            expires_at=claims.get("exp"),
            resource=self.resource,
            subject=claims.get("sub"),
            claims=claims,
        )


def build_server(issuer: str | None, resource: str) -> MCPServer:
    options = {}
    if issuer:
        options["token_verifier"] = IssuerTokens(issuer, resource)
        options["auth"] = AuthSettings(
            issuer_url=issuer, resource_server_url=resource, validate_token_resource=True
        )
    mcp = MCPServer("identity-fixture", version="1.0.0", log_level="WARNING", **options)

    @mcp.tool()
    async def whoami(ctx: Context) -> str:
        """Who calls: the token's subject and actor, and the identity headers."""
        token = get_access_token()
        claims = (token.claims or {}) if token else {}
        headers = ctx.headers or {}
        bearer = headers.get("authorization", "")
        bearer = bearer[7:] if bearer.lower().startswith("bearer ") else ""
        return json.dumps(
            {
                "sub": claims.get("sub"),
                "act": (claims.get("act") or {}).get("sub"),
                "aud": claims.get("aud"),
                "tenant": claims.get("tenant"),
                "x_user": headers.get("x-user"),
                "x_tenant": headers.get("x-tenant"),
                "bearer_sha256": hashlib.sha256(bearer.encode()).hexdigest() if bearer else None,
            }
        )

    return mcp


async def serve(issuer: str | None, port: int, sse: bool) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    resource = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    mcp = build_server(issuer, resource)
    app = mcp.sse_app(host="127.0.0.1") if sse else mcp.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
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
    parser.add_argument("--issuer", help="verify bearer JWTs of this issuer")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--sse", action="store_true", help="serve legacy HTTP+SSE at /sse")
    args = parser.parse_args()
    asyncio.run(serve(args.issuer, args.port, args.sse))


if __name__ == "__main__":
    main()
