"""The enterprise identity provider of `oauth_server.py --id-jag` (SEP-990, enterprise-managed authorization).

Mounted on the fixture's own origin, under its own issuer http://127.0.0.1:N/idp (the authorization server's issuer
is the origin):

    POST /idp/token          RFC 8693 token exchange: grant_type token-exchange, requested_token_type id-jag,
                             subject_token_type id_token, subject_token = an ID token from /_idp/id_token, audience =
                             the authorization server's issuer, resource (required), scope (optional). Answers an
                             ID-JAG: a JWT (HS256, this process's key) with typ oauth-id-jag+jwt, iss the IdP, sub the
                             ID token's, aud the audience, client_id XAA_CLIENT (the bridge's client at the
                             authorization server, as an IdP maps it), resource, scope (when asked), jti, iat, exp
                             (+5 min). A denied subject, a bad ID token or a wrong parameter: 400 invalid_grant /
                             invalid_request.
    GET  /_idp/id_token?sub= an ID token for `sub` (iss the IdP, aud IDP_CLIENT, 1 h): what a person's sign-in yields;
                             `&roles=a,b` adds a `roles` claim
    POST /_idp/deny?sub=     the IdP's policy no longer lets `sub` reach the server: its exchanges are refused
    GET  /_idp/stats         {"exchanges", "refused", "redeemed", "subjects": [subjects of the ID-JAGs redeemed]}

The authorization server's side (`redeem`) verifies an ID-JAG as SEP-990 §5.1 says: signature, typ, iss, aud (its
own issuer), client_id (the authenticated client), resource (the MCP server), exp, and a jti never seen before.
Test code only: one symmetric key for both sides, which is what a single test process can have.
"""

import secrets
import time
import uuid
from typing import Any

import jwt
from starlette.requests import Request
from starlette.responses import JSONResponse

from mcp.server.auth.provider import TokenError

KEY = secrets.token_bytes(32)
IDP_CLIENT = "idp-client"
XAA_CLIENT = "xaa-client"
XAA_SECRET = "xaa-secret"
ID_JAG_LIFETIME = 300
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"


class Idp:
    def __init__(self, base: str, resource: str) -> None:
        self.issuer = f"{base}/idp"
        self.as_issuer = base
        self.resource = resource
        self.denied: set[str] = set()
        self.seen_jti: set[str] = set()
        self.stats: dict[str, Any] = {"exchanges": 0, "refused": 0, "redeemed": 0, "subjects": []}

    def id_token(self, sub: str, roles: list[str] | None = None) -> str:
        now = int(time.time())
        claims = {"iss": self.issuer, "sub": sub, "aud": IDP_CLIENT, "iat": now, "exp": now + 3600}
        if roles:
            claims["roles"] = roles
        return jwt.encode(claims, KEY, algorithm="HS256")

    def refuse(self, error: str, why: str) -> JSONResponse:
        self.stats["refused"] += 1
        return JSONResponse({"error": error, "error_description": why}, status_code=400)

    async def token(self, request: Request) -> JSONResponse:
        form = await request.form()
        if form.get("grant_type") != TOKEN_EXCHANGE:
            return self.refuse("unsupported_grant_type", "token exchange only")
        if form.get("requested_token_type") != ID_JAG or form.get("subject_token_type") != ID_TOKEN:
            return self.refuse("invalid_request", "an ID token for an ID-JAG only")
        if form.get("client_id") != IDP_CLIENT:
            return self.refuse("invalid_client", "unknown client")
        audience, resource = form.get("audience"), form.get("resource")
        if audience != self.as_issuer or resource != self.resource:
            return self.refuse("invalid_target", "unknown audience or resource")
        try:
            claims = jwt.decode(
                str(form.get("subject_token") or ""), KEY, algorithms=["HS256"], audience=IDP_CLIENT,
                issuer=self.issuer,
            )
        except jwt.PyJWTError:
            return self.refuse("invalid_grant", "the ID token is not valid")
        if claims["sub"] in self.denied:
            return self.refuse("invalid_grant", "policy denies this subject")
        now = int(time.time())
        jag = {
            "iss": self.issuer,
            "sub": claims["sub"],
            "aud": audience,
            "client_id": XAA_CLIENT,
            "resource": resource,
            "jti": str(uuid.uuid4()),
            "iat": now,
            "exp": now + ID_JAG_LIFETIME,
        }
        scope = form.get("scope")
        if scope:
            jag["scope"] = scope
        self.stats["exchanges"] += 1
        answer = {
            "access_token": jwt.encode(jag, KEY, algorithm="HS256", headers={"typ": "oauth-id-jag+jwt"}),
            "issued_token_type": ID_JAG,
            "token_type": "N_A",
            "expires_in": ID_JAG_LIFETIME,
        }
        if scope:
            answer["scope"] = scope
        return JSONResponse(answer)

    def redeem(self, client_id: str, assertion: str) -> tuple[str, list[str]]:
        """The subject and scopes of a valid ID-JAG presented by `client_id`, at the authorization server."""
        try:
            if jwt.get_unverified_header(assertion).get("typ") != "oauth-id-jag+jwt":
                raise TokenError("invalid_grant", "not an ID-JAG")
            claims = jwt.decode(
                assertion, KEY, algorithms=["HS256"], audience=self.as_issuer, issuer=self.issuer,
                options={"require": ["exp", "iat", "jti", "sub"]},
            )
        except jwt.PyJWTError as err:
            raise TokenError("invalid_grant", f"the ID-JAG is not valid: {err}") from err
        if claims.get("client_id") != client_id or claims.get("resource") != self.resource:
            raise TokenError("invalid_grant", "the ID-JAG is for another client or resource")
        if claims["jti"] in self.seen_jti:
            raise TokenError("invalid_grant", "the ID-JAG was used already")
        self.seen_jti.add(claims["jti"])
        self.stats["redeemed"] += 1
        self.stats["subjects"].append(claims["sub"])
        return claims["sub"], (claims.get("scope") or "").split()

    def mount(self, mcp) -> None:
        @mcp.custom_route("/idp/token", methods=["POST"])
        async def idp_token(request: Request) -> JSONResponse:
            return await self.token(request)

        @mcp.custom_route("/_idp/id_token", methods=["GET"])
        async def id_token(request: Request) -> JSONResponse:
            roles = [r for r in request.query_params.get("roles", "").split(",") if r]
            return JSONResponse({"id_token": self.id_token(request.query_params["sub"], roles)})

        @mcp.custom_route("/_idp/deny", methods=["POST"])
        async def deny(request: Request) -> JSONResponse:
            self.denied.add(request.query_params["sub"])
            return JSONResponse({"denied": sorted(self.denied)})

        @mcp.custom_route("/_idp/stats", methods=["GET"])
        async def stats(request: Request) -> JSONResponse:
            return JSONResponse(self.stats)
