// The setup every Node end-to-end file shares: one fake upstream and one relay whose models point at it, started
// before the file's first test and stopped after its last; and waiting for the upstream to see a disconnect.

import { after, before } from 'node:test';

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

/** Resolves when the fake upstream saw the relay drop the request `record`; rejects after `ms`. */
export function disconnectSeen(record, ms = 5_000) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error('upstream never saw the disconnect')), ms);
  });
  return Promise.race([record.closed, timeout]).finally(() => clearTimeout(timer));
}
