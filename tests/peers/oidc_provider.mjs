// A real OpenID Connect provider for the tests of agents' tokens (tests/api/identity.rs): panva's
// oidc-provider (npm), certified by the OpenID Foundation, issuing JWT access tokens to clients
// by the client credentials grant, signed with RS256 keys it publishes as a JWKS.
//
//     node oidc_provider.mjs [--audience mcp-bridge]
//
// prints `PORT=<port>` once it listens on 127.0.0.1; its issuer is `http://127.0.0.1:<port>`. The
// clients are alice (roles ["lead"]), bob (roles ["dev"]) and root (roles ["admin"]), each with
// the secret `<name>-secret`; a token's `sub` is its client's id and its roles are in
// `realm_access.roles`, as Keycloak puts them. `POST /test/rotate` rotates the signing key, as a
// provider does in service: a new key signs from then on, and the JWKS serves it beside the old
// one (whose tokens stay valid until they expire); it answers {"kid": <the new key's id>}.
// `GET /test/jwks-fetches` answers how many times the JWKS was read.
//
// Token exchange (RFC 8693), for the tests of agents' identities upstream
// (tests/api/identity_upstream.rs): the client `mcp-bridge` (secret `mcp-bridge-secret`) may
// exchange an access token this provider issued (`subject_token`) for a JWT access token whose
// `sub` is the subject token's, `act.sub` the bridge's client id, and `aud` the `resource` (or
// `audience`) asked for, valid 300 s, signed with the provider's current key. Tokens carry a
// `tenant` claim too. `POST /test/revoke?sub=alice` revokes alice's grant: her tokens are no longer
// exchanged (`invalid_grant`), and `GET /test/revoked` lists the revoked subjects, for resource
// servers that check. `GET /test/exchanges` counts the exchanges made for each subject.

import http from 'node:http';
import { parseArgs } from 'node:util';
import { createLocalJWKSet, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT } from 'jose';
import Provider, { errors } from 'oidc-provider';

const { values: args } = parseArgs({ options: { audience: { type: 'string', default: 'mcp-bridge' } } });

const roles = { alice: ['lead'], bob: ['dev'], root: ['admin'] };
const tenants = { alice: 'acme', bob: 'globex', root: 'ops' };
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const BRIDGE = 'mcp-bridge';
const clients = [
  ...Object.keys(roles).map((name) => ({
    client_id: name,
    client_secret: `${name}-secret`,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    scope: 'mcp',
  })),
  {
    client_id: BRIDGE,
    client_secret: `${BRIDGE}-secret`,
    grant_types: [TOKEN_EXCHANGE],
    redirect_uris: [],
    response_types: [],
    scope: 'mcp',
  },
];
const revoked = new Set();
const exchanges = {};

let serial = 0;
async function signingKey() {
  serial += 1;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: `key-${serial}`, alg: 'RS256', use: 'sig' };
}

function provider(issuer, keys) {
  const made = new Provider(issuer, {
    clients,
    scopes: ['openid', 'mcp'],
    jwks: { keys },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => 'urn:mcp-bridge',
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'mcp',
          audience: args.audience,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 600,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: (ctx, token) => ({
      realm_access: { roles: roles[token.clientId] ?? [] },
      tenant: tenants[token.clientId],
    }),
  });
  made.registerGrantType(TOKEN_EXCHANGE, exchange(issuer, keys), [
    'subject_token', 'subject_token_type', 'audience', 'resource', 'scope', 'requested_token_type',
  ]);
  // The issuer is plain HTTP on loopback: nothing here is behind a TLS-terminating proxy.
  made.proxy = false;
  return made;
}

/** The public half of a signing key. */
function publicJwk({ d, p, q, dp, dq, qi, ...rest }) {
  return rest;
}

/** The token exchange grant: the subject token checked (this provider's signature, issuer, expiry,
 * not revoked), and a JWT for the resource asked for, naming the subject and the acting client. */
function exchange(issuer, keys) {
  return async (ctx) => {
    const { params, client } = ctx.oidc;
    if (params.subject_token_type !== ACCESS_TOKEN_TYPE) {
      throw new errors.InvalidRequest('subject_token_type must be an access token');
    }
    let subject;
    try {
      const verified = await jwtVerify(params.subject_token, createLocalJWKSet({ keys: keys.map(publicJwk) }), { issuer });
      subject = verified.payload;
    } catch {
      throw new errors.InvalidGrant('the subject token is not valid');
    }
    if (!subject.sub || revoked.has(subject.sub)) {
      throw new errors.InvalidGrant('the grant of this subject was revoked');
    }
    const audience = params.resource || params.audience;
    if (!audience) {
      throw new errors.InvalidTarget('name the resource or the audience');
    }
    exchanges[subject.sub] = (exchanges[subject.sub] ?? 0) + 1;
    const key = await importJWK(keys[0], 'RS256');
    const now = Math.floor(Date.now() / 1000);
    const accessToken = await new SignJWT({
      act: { sub: client.clientId },
      client_id: client.clientId,
      scope: params.scope || 'mcp',
      tenant: subject.tenant,
    })
      .setProtectedHeader({ alg: 'RS256', kid: keys[0].kid, typ: 'at+jwt' })
      .setIssuer(issuer)
      .setSubject(subject.sub)
      .setAudience(audience)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .setJti(crypto.randomUUID())
      .sign(key);
    ctx.body = {
      access_token: accessToken,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: 'Bearer',
      expires_in: 300,
      scope: params.scope || 'mcp',
    };
  };
}

let keys = [await signingKey()];
let jwksFetches = 0;
let current;
const server = http.createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/test/rotate') {
    signingKey().then((key) => {
      // The new key first: oidc-provider signs with the first key of the algorithm.
      keys = [key, ...keys].slice(0, 2);
      current = provider(issuer, keys).callback();
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ kid: key.kid }));
    });
    return;
  }
  if (req.method === 'GET' && req.url === '/test/jwks-fetches') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ fetches: jwksFetches }));
    return;
  }
  const asked = new URL(req.url, issuer);
  if (req.method === 'POST' && asked.pathname === '/test/revoke') {
    revoked.add(asked.searchParams.get('sub'));
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ revoked: [...revoked] }));
    return;
  }
  if (req.method === 'GET' && (asked.pathname === '/test/revoked' || asked.pathname === '/test/exchanges')) {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(asked.pathname === '/test/revoked' ? { revoked: [...revoked] } : exchanges));
    return;
  }
  if (req.url === '/jwks') {
    jwksFetches += 1;
  }
  current(req, res);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
current = provider(issuer, keys).callback();
console.log(`PORT=${server.address().port}`);
