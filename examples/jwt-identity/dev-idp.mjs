// A stand-in identity provider for trying examples/jwt-identity/ locally: on 127.0.0.1:8788 it publishes the
// public half of an ES256 key made fresh at start (GET /jwks.json, cacheable for five minutes) and signs tokens
// for any user name it is asked for (GET /token?user=NAME, ten-minute tokens). DEVELOPMENT ONLY: anyone who can
// reach it can become anyone. A real page gets its token from its provider's SDK instead (see README.md).
// Node 20+, no dependencies: `node examples/jwt-identity/dev-idp.mjs`.

import { createServer } from 'node:http';
import { webcrypto } from 'node:crypto';

const PORT = Number(process.env.DEV_IDP_PORT ?? 8788);
const ISSUER = `http://127.0.0.1:${PORT}`;
const AUDIENCE = 'patchbridge-relay';
// The page that asks for tokens (the relay serving examples/); add yours when it is elsewhere.
const PAGE_ORIGINS = new Set(['http://127.0.0.1:8787', 'http://localhost:8787']);

const { privateKey, publicKey } = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
const kid = `dev-${Date.now().toString(36)}`;
const publicJwk = await webcrypto.subtle.exportKey('jwk', publicKey);
const jwks = { keys: [{ kty: 'EC', crv: 'P-256', x: publicJwk.x, y: publicJwk.y, kid, alg: 'ES256', use: 'sig' }] };

const b64url = (bytes) => Buffer.from(bytes).toString('base64url');
const encodePart = (value) => b64url(Buffer.from(JSON.stringify(value)));

async function token(user) {
  const now = Math.floor(Date.now() / 1000);
  const signingInput = `${encodePart({ alg: 'ES256', typ: 'JWT', kid })}.${encodePart({ iss: ISSUER, aud: AUDIENCE, sub: user, iat: now, exp: now + 600 })}`;
  // WebCrypto's ECDSA signature is already the JWS form (r || s, 64 bytes).
  const signature = await webcrypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, privateKey, Buffer.from(signingInput));
  return `${signingInput}.${b64url(new Uint8Array(signature))}`;
}

createServer(async (request, response) => {
  const url = new URL(request.url, ISSUER);
  const origin = request.headers.origin;
  if (origin && PAGE_ORIGINS.has(origin)) response.setHeader('access-control-allow-origin', origin);
  if (url.pathname === '/jwks.json') {
    response.writeHead(200, { 'content-type': 'application/jwk-set+json', 'cache-control': 'public, max-age=300' });
    response.end(JSON.stringify(jwks));
  } else if (url.pathname === '/token' && /^[\w.@-]{1,64}$/.test(url.searchParams.get('user') ?? '')) {
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    response.end(JSON.stringify({ token: await token(url.searchParams.get('user')), expiresIn: 600 }));
  } else {
    response.writeHead(404, { 'content-type': 'text/plain' });
    response.end('GET /jwks.json, or GET /token?user=NAME (letters, digits, . _ @ -)\n');
  }
}).listen(PORT, '127.0.0.1', () => {
  console.log(`dev identity provider on ${ISSUER} (issuer ${ISSUER}, audience ${AUDIENCE}, kid ${kid}); development only`);
});
