// The BUILT package (`npm/`, what users import as `@patchbridge/agent`) and small helpers to drive a controller
// against a relay in Node: a controller factory with the relay's development identity, waiting for a state, and
// recording page-style tools.

import * as agent from '../../../npm/index.js';

export { agent };

/**
 * A controller on `relay` as `user`. Node's fetch sends no Origin header, and the relay refuses state-changing
 * requests without a same-origin or allow-listed Origin (docs/protocol.md §7), so the headers provider supplies
 * the relay's own origin, as a same-origin page's browser would.
 */
export function relayController(relay, { user = 'alice', model, tools = [], conversationId, runtime } = {}) {
  if (typeof agent.createAgentController !== 'function') {
    throw new Error('@patchbridge/agent does not export createAgentController (npm/index.js)');
  }
  const options = {
    endpoint: relay.api,
    headers: () => ({ 'x-patchbridge-user': user, origin: relay.url }),
    tools,
  };
  if (model !== undefined) options.model = model;
  if (conversationId !== undefined) options.conversationId = conversationId;
  if (runtime !== undefined) options.runtime = runtime;
  return agent.createAgentController(options);
}

/** Resolves with the first state (current or later) satisfying `predicate`; rejects after `ms`. */
export function waitForState(controller, predicate, ms = 10_000, what = 'state condition') {
  return new Promise((resolve, reject) => {
    let unsubscribe = () => {};
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`${what} not reached within ${ms} ms; last state: ${JSON.stringify(controller.getState())}`));
    }, ms);
    const check = (state) => {
      if (predicate(state)) {
        clearTimeout(timer);
        unsubscribe();
        resolve(state);
        return true;
      }
      return false;
    };
    if (check(controller.getState())) return;
    unsubscribe = controller.subscribe((state) => { check(state); });
  });
}

/** A page-style tool whose `execute` records its calls. Not read-only unless `readOnly: true` is given. */
export function pageTool(name, run, extra = {}) {
  const calls = [];
  const tool = {
    name,
    description: `e2e tool ${name}`,
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    async execute(args, ctx) {
      calls.push({ args, callId: ctx.callId });
      return { toolCallId: ctx.callId, content: run(args, calls.length), isError: false };
    },
    ...extra,
  };
  // Not enumerable: a tool definition is only its documented keys.
  Object.defineProperty(tool, 'calls', { value: calls, enumerable: false });
  return tool;
}

/** Text of all text blocks of a message. */
export const textOf = (message) => message.blocks.filter((b) => b.type === 'text').map((b) => b.text).join('');

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
