// The setup the end-to-end files share, started before a file's first test and stopped after its last: one fake
// upstream and one relay whose models point at it (the Node suites); a relay and a headless Chromium, with or
// without a fake upstream (the browser suites); and waiting for the upstream to see a disconnect.

import { after, before } from 'node:test';

import { launchChromium } from './browser.mjs';
import { startFakeUpstream } from './fake-upstream.mjs';
import { startRelay } from './relay.mjs';

/**
 * Registers the file's `before` and `after` hooks and returns the object they fill in: `upstream` (the fake
 * upstream) and `relay` (started with `relayOptions`, as `startRelay` takes them, on that upstream) are set
 * when the first test runs.
 */
export function relayWithFakeUpstream(relayOptions = {}) {
  const suite = { upstream: undefined, relay: undefined };
  before(async () => {
    suite.upstream = await startFakeUpstream();
    suite.relay = await startRelay({ ...relayOptions, upstream: suite.upstream.url });
  });
  after(async () => {
    await suite.relay?.stop();
    await suite.upstream?.close();
  });
  return suite;
}

/**
 * Registers the file's `before` and `after` hooks for a browser suite and returns the object they fill in:
 * `relay` (started with `relayOptions`, as `startRelay` takes them), `browser` (headless Chromium) and, with
 * `fakeUpstream: true`, `upstream` (a fake upstream the relay's models point at).
 * @param {{ fakeUpstream?: boolean } & Parameters<typeof startRelay>[0]} [options]
 */
export function relayAndBrowser({ fakeUpstream = false, ...relayOptions } = {}) {
  const env = { upstream: undefined, relay: undefined, browser: undefined };
  before(async () => {
    if (fakeUpstream) env.upstream = await startFakeUpstream();
    env.relay = await startRelay(env.upstream ? { ...relayOptions, upstream: env.upstream.url } : relayOptions);
    env.browser = await launchChromium();
  });
  after(async () => {
    await env.browser?.close();
    await env.relay?.stop();
    await env.upstream?.close();
  });
  return env;
}

/** Resolves when the fake upstream saw the relay drop the request `record`; rejects after `ms`. */
export function disconnectSeen(record, ms = 5_000) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error('upstream never saw the disconnect')), ms);
  });
  return Promise.race([record.closed, timeout]).finally(() => clearTimeout(timer));
}
