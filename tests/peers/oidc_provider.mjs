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

import http from 'node:http';
import { parseArgs } from 'node:util';
import { generateKeyPair, exportJWK } from 'jose';
import Provider from 'oidc-provider';

const { values: args } = parseArgs({ options: { audience: { type: 'string', default: 'mcp-bridge' } } });

const roles = { alice: ['lead'], bob: ['dev'], root: ['admin'] };
const clients = Object.keys(roles).map((name) => ({
  client_id: name,
  client_secret: `${name}-secret`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  scope: 'mcp',
}));

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
    extraTokenClaims: (ctx, token) => ({ realm_access: { roles: roles[token.clientId] ?? [] } }),
  });
  // The issuer is plain HTTP on loopback: nothing here is behind a TLS-terminating proxy.
  made.proxy = false;
  return made;
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
  if (req.url === '/jwks') {
    jwksFetches += 1;
  }
  current(req, res);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
current = provider(issuer, keys).callback();
console.log(`PORT=${server.address().port}`);
