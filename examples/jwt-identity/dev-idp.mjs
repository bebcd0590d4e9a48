// A stand-in identity provider for trying examples/jwt-identity/ locally, on 127.0.0.1:8788 (DEV_IDP_PORT; 0 picks a
// free port). It publishes the public half of an ES256 key made fresh at start (GET /jwks.json, cacheable for five
// minutes) and signs one-hour tokens for any user name it is asked for, the way a provider's sign-in page does:
//   GET /authorize?user=NAME&redirect_uri=URL  redirects to URL#access_token=TOKEN&expires_in=3600
//   GET /token?user=NAME                       answers { token, expiresIn } (for curl and scripts)
// DEVELOPMENT ONLY: there is no password, anyone who can reach it can become anyone. It redirects only to
// loopback pages. A real page signs in with its provider's SDK instead (see README.md).
// Node 20+, no dependencies: `node examples/jwt-identity/dev-idp.mjs`.

import { createServer } from 'node:http';
import { webcrypto } from 'node:crypto';

const PORT = Number(process.env.DEV_IDP_PORT ?? 8788);
const AUDIENCE = 'patchbridge-relay';
const LIFETIME_S = 3600;
let issuer = `http://127.0.0.1:${PORT}`;

const { privateKey, publicKey } = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
const kid = `dev-${Date.now().toString(36)}`;
const publicJwk = await webcrypto.subtle.exportKey('jwk', publicKey);
const jwks = { keys: [{ kty: 'EC', crv: 'P-256', x: publicJwk.x, y: publicJwk.y, kid, alg: 'ES256', use: 'sig' }] };

const b64url = (bytes) => Buffer.from(bytes).toString('base64url');
const encodePart = (value) => b64url(Buffer.from(JSON.stringify(value)));

async function token(user) {
  const now = Math.floor(Date.now() / 1000);
  const signingInput = `${encodePart({ alg: 'ES256', typ: 'JWT', kid })}.${encodePart({ iss: issuer, aud: AUDIENCE, sub: user, iat: now, exp: now + LIFETIME_S })}`;
  // WebCrypto's ECDSA signature is already the JWS form (r || s, 64 bytes).
  const signature = await webcrypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, privateKey, Buffer.from(signingInput));
  return `${signingInput}.${b64url(new Uint8Array(signature))}`;
}

const validUser = (name) => /^[\w.@-]{1,64}$/.test(name ?? '');

/** Only plain http(s) pages on this machine: a token is never sent anywhere else. */
function loopbackPage(text) {
  try {
    const url = new URL(text);
    const loopback = url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
    return loopback && /^https?:$/.test(url.protocol) && !url.hash && !url.username ? url : null;
  } catch {
    return null;
  }
}

const server = createServer(async (request, response) => {
  const url = new URL(request.url, issuer);
  const user = url.searchParams.get('user');
  if (url.pathname === '/jwks.json') {
    response.writeHead(200, { 'content-type': 'application/jwk-set+json', 'cache-control': 'public, max-age=300' });
    response.end(JSON.stringify(jwks));
  } else if (url.pathname === '/authorize' && validUser(user) && loopbackPage(url.searchParams.get('redirect_uri'))) {
    const back = loopbackPage(url.searchParams.get('redirect_uri'));
    back.hash = new URLSearchParams({ access_token: await token(user), expires_in: String(LIFETIME_S) }).toString();
    response.writeHead(302, { location: back.href, 'cache-control': 'no-store' });
    response.end();
  } else if (url.pathname === '/token' && validUser(user)) {
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    response.end(JSON.stringify({ token: await token(user), expiresIn: LIFETIME_S }));
  } else {
    response.writeHead(404, { 'content-type': 'text/plain' });
    response.end('GET /jwks.json, /authorize?user=NAME&redirect_uri=LOOPBACK_URL or /token?user=NAME (NAME: letters, digits, . _ @ -)\n');
  }
});
server.listen(PORT, '127.0.0.1', () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  console.log(`dev identity provider on ${issuer} (issuer ${issuer}, audience ${AUDIENCE}, kid ${kid}); development only`);
});
