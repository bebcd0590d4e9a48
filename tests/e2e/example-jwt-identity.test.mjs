// End to end in headless Chromium: examples/jwt-identity/ as its README runs it. dev-idp.mjs is the identity
// provider (a fresh ES256 key; sign-in redirects back with a token), the relay's `jwt` identity reads its JWKS
// URL, and the page hands the token to the element through `headers`. Checks: every relay request the page makes
// carries the bearer token, the demo model answers, each user sees only their own conversations, and the page
// runs under the documented CSP with no console error, failed request or violation. The page signs in at the
// fixed origin of its README (127.0.0.1:8788); the test routes that origin to the provider it started on a free
// port.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { launchChromium, newPage, waitInPage } from './support/browser.mjs';
import { ROOT, startRelay } from './support/relay.mjs';

let idp;
let idpUrl;
let relay;
let browser;

before(async () => {
  idp = spawn(process.execPath, [path.join(ROOT, 'examples/jwt-identity/dev-idp.mjs')], {
    env: { ...process.env, DEV_IDP_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  idpUrl = await new Promise((resolve, reject) => {
    let out = '';
    idp.stdout.on('data', (d) => {
      out += d;
      const m = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]);
    });
    idp.on('exit', (code) => reject(new Error(`dev-idp.mjs exited with ${code}: ${out}`)));
  });
  relay = await startRelay({
    demo: true,
    identity: { mode: 'jwt', jwksUrl: `${idpUrl}/jwks.json`, issuer: idpUrl, audience: 'patchbridge-relay' },
  });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await relay?.stop();
  idp?.kill();
});

/** A token for `user`, as the page gets one. */
async function tokenFor(user) {
  const response = await fetch(`${idpUrl}/token?user=${user}`);
  return (await response.json()).token;
}

/** The conversations the relay lists for the bearer of `user`'s token. */
async function conversationsOf(user) {
  const response = await fetch(`${relay.api}/conversations`, { headers: { authorization: `Bearer ${await tokenFor(user)}` } });
  assert.equal(response.status, 200);
  return (await response.json()).items;
}

async function signIn(page, user) {
  await page.fill('#user', user);
  // To the provider and back: the page loads again, with the token in its fragment.
  await Promise.all([page.waitForEvent('load'), page.click('#sign-in button[type=submit]')]);
  await waitInPage(page, (name) => {
    const agent = document.querySelector(`patchbridge-agent[storage-key="jwt-identity:${name}"]`);
    return agent?.controller && agent.controller.getState().status === 'idle';
  }, user);
}

async function chat(page, text, answers) {
  await page.fill('patchbridge-agent textarea[part~=input]', text);
  await page.click('patchbridge-agent [part~=send-button]');
  await waitInPage(page, (n) => {
    const agent = document.querySelector('patchbridge-agent');
    return agent.shadowRoot.querySelectorAll('.msg.assistant:not(.draft)').length === n
      && agent.controller?.getState().status === 'idle';
  }, answers);
  return page.locator('patchbridge-agent .msg.assistant:not(.draft)').allTextContents();
}

test('jwt-identity page: signs in, passes the token through headers, and each user has their own history', async () => {
  assert.deepEqual(await conversationsOf('alice'), []);
  const page = await newPage(browser);
  const apiAuthorizations = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/api/')) apiAuthorizations.push(request.headers().authorization ?? '');
  });
  await page.addInitScript(() => {
    globalThis.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => globalThis.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.route('http://127.0.0.1:8788/**', async (route) => {
    const asked = new URL(route.request().url());
    // The redirect back to the page is the browser's to follow.
    await route.fulfill({ response: await route.fetch({ url: `${idpUrl}${asked.pathname}${asked.search}`, maxRedirects: 0 }) });
  });
  await page.goto(`${relay.url}/examples/jwt-identity/`);
  assert.equal(await page.locator('patchbridge-agent').count(), 0, 'no assistant (and no relay call) before sign-in');

  await signIn(page, 'alice');
  const answers = await chat(page, 'hello', 1);
  assert.match(answers[0], /^\[Scripted demo, not AI\] Hello!/);
  await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getState().conversation?.revision >= 1);
  assert.equal((await conversationsOf('alice')).length, 1);
  assert.deepEqual(await conversationsOf('bob'), [], 'bob sees nothing of alice');

  await signIn(page, 'bob');
  assert.equal(await page.locator('patchbridge-agent').count(), 1, 'one assistant, the signed-in user\'s');
  await chat(page, 'hello', 1);
  await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getState().conversation?.revision >= 1);
  assert.equal((await conversationsOf('bob')).length, 1);
  assert.equal((await conversationsOf('alice')).length, 1);

  await page.click('#sign-out');
  assert.equal(await page.locator('patchbridge-agent').count(), 0);

  assert.ok(apiAuthorizations.length >= 4, `relay requests seen: ${apiAuthorizations.length}`);
  for (const authorization of apiAuthorizations) assert.match(authorization, /^Bearer ey[\w-]+\.[\w-]+\.[\w-]+$/);
  assert.equal(page.url(), `${relay.url}/examples/jwt-identity/`, 'the token left the address bar');
  assert.deepEqual(page.problems, []);
  assert.deepEqual(await page.evaluate(() => globalThis.__cspViolations), []);
  assert.equal(await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content'),
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob: https:; connect-src 'self'; base-uri 'none'; object-src 'none'; form-action 'self'");
  await page.context().close();
});
