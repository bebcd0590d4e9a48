// The widget's logic without a browser (widget/src/model.js): the events and remembered conversation that follow
// each controller snapshot, what the element draws from one, the ways forward from an error, the errors the
// element reports itself (members of the closed set, AgentErrors), the relay's demo check with headers a page
// sets late, and the property values the element accepts; and the element's actions (widget/src/actions.js) on a
// controller stand-in, for a remembered conversation refused before the page set its headers. No wasm, relay or
// DOM: runs in milliseconds.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { AgentError, ErrorCodes } from '../../npm/errors.js';
import { EVENTS } from '../../widget/src/events.js';
import {
  BUSY, NOTHING_SEEN, errorText, follow, imageLimit, isBusy, previewOnly, restoreFailed, runtimeLoadError,
  suggestionList, suggestionsAttribute, textOf, viewOf, waysForward,
} from '../../widget/src/model.js';

/** A controller snapshot with the given fields over an idle, empty one. */
const snapshot = (fields = {}) => ({
  status: 'idle', messages: [], draft: null, toolResults: [], pendingConfirmation: null, lastOutcome: null,
  error: null, conversation: null, toolRevision: 0, ...fields,
});
const relayError = (details, message = 'relay said no') => new AgentError('AGENT_RELAY_ERROR', message, { details });
const t = (key, ...args) => (args.length ? `${key}(${args.join(',')})` : key);

/** Feeds snapshots through `follow` as the element does and returns what each produced. */
function run(...states) {
  let seen = NOTHING_SEEN;
  return states.map((state) => {
    const out = follow(seen, state);
    seen = out.seen;
    return out;
  });
}
const types = (out) => out.events.map((e) => e.type);

test('a failed turn dispatches its error once, however many snapshots carry it', () => {
  const error = relayError({ relayCode: 'UPSTREAM_RATE_LIMITED', status: 429 });
  const [first, second] = run(snapshot({ status: 'running' }), snapshot({ error }), snapshot({ error }));
  assert.deepEqual(types(first), []);
  assert.deepEqual(types(second), [EVENTS.error]);
  assert.equal(second.events[0].detail.error, error);
  assert.deepEqual(types(run(snapshot({ error }), snapshot({ error }))[1]), []);
});

test('an outcome is dispatched when a turn ends well, not when a load ends or a turn fails', () => {
  const conversation = { id: 'c_1', revision: 2, title: 'Plan' };
  const [, ended] = run(snapshot({ status: 'running' }), snapshot({ lastOutcome: 'completed', conversation }));
  assert.ok(ended.turnEnded);
  const outcome = ended.events.find((e) => e.type === EVENTS.outcome);
  assert.deepEqual(outcome.detail, { outcome: 'completed', conversation });
  const [, loaded] = run(snapshot({ status: 'loading' }), snapshot({ lastOutcome: 'completed' }));
  assert.ok(!loaded.turnEnded);
  assert.deepEqual(types(loaded), []);
  const [, failed] = run(snapshot({ status: 'saving' }), snapshot({ lastOutcome: 'completed', error: relayError({ relayCode: '' }) }));
  assert.ok(!failed.turnEnded);
  assert.deepEqual(types(failed), [EVENTS.error]);
});

test('each confirmation is announced once, by its interrupt id', () => {
  const pending = (id) => ({ interruptId: id, kind: 'tool-confirmation', callId: 'call', tool: 'todos.add', arguments: {} });
  const outs = run(
    snapshot({ status: 'awaiting-confirmation', pendingConfirmation: pending('i1') }),
    snapshot({ status: 'awaiting-confirmation', pendingConfirmation: pending('i1') }),
    snapshot({ status: 'running' }),
    snapshot({ status: 'awaiting-confirmation', pendingConfirmation: pending('i2') }),
  );
  assert.deepEqual(outs.map(types), [[EVENTS.confirmation], [], [], [EVENTS.confirmation]]);
  assert.equal(outs[3].events[0].detail.pendingConfirmation.interruptId, 'i2');
});

test('the conversation is remembered and announced when its id, revision or title changes', () => {
  const c = (revision, title = 'A') => ({ id: 'c_1', revision, title });
  const outs = run(snapshot({ conversation: c(1) }), snapshot({ conversation: c(1) }), snapshot({ conversation: c(2) }),
    snapshot({ conversation: c(2, 'B') }), snapshot({ conversation: null }));
  assert.deepEqual(outs.map(types), [[EVENTS.conversation], [], [EVENTS.conversation], [EVENTS.conversation], [EVENTS.conversation]]);
  assert.deepEqual(outs.map((o) => o.remember), ['c_1', null, 'c_1', 'c_1', null]);
  assert.equal(outs[4].events[0].detail.conversation, null);
});

test('the view: Stop only while a turn runs, the log paused while a conversation loads, one notice', () => {
  for (const status of ['running', 'awaiting-confirmation', 'saving']) {
    assert.ok(BUSY.has(status) && isBusy(status));
    assert.deepEqual({ ...viewOf(snapshot({ status })), pending: null }, {
      log: true, inputBusy: true, canStop: true, title: null, pending: null, notice: null, keepProblem: false,
    });
  }
  const loading = viewOf(snapshot({ status: 'loading' }));
  assert.equal(loading.log, false);
  assert.equal(loading.inputBusy, true);
  assert.equal(loading.canStop, false);
  assert.equal(viewOf(snapshot({ lastOutcome: 'max-tokens' })).notice, 'max-tokens');
  assert.equal(viewOf(snapshot({ lastOutcome: 'cancelled' })).notice, 'cancelled');
  assert.equal(viewOf(snapshot({ status: 'running', lastOutcome: 'max-tokens' })).notice, null, 'the next turn hides it');
  assert.equal(viewOf(snapshot({ lastOutcome: 'cancelled', error: relayError({ relayCode: '' }) })).notice, 'error');
  assert.equal(viewOf(snapshot({ conversation: { id: 'c', revision: 1, title: 'Trip' } })).title, 'Trip');
  assert.equal(viewOf(snapshot()).keepProblem, true, 'a problem with the input stays while idle');
  const ask = (callId) => ({ interruptId: 'i', kind: 'tool-confirmation', callId, tool: 'mcp__s__t', arguments: {} });
  assert.equal(viewOf(snapshot({ status: 'awaiting-confirmation', pendingConfirmation: ask('call_1') })).pending.callId, 'call_1');
  assert.equal(viewOf(snapshot({ status: 'awaiting-confirmation', pendingConfirmation: ask('app_0123') })).pending, null,
    'an MCP App\'s call in the turn is asked in its card, not in the dock');
});

test('the ways forward fit the error', () => {
  const signedOut = relayError({ relayCode: 'UNAUTHENTICATED', status: 401 });
  assert.equal(waysForward(signedOut, { canRetry: true }), 'ask-credentials');
  assert.deepEqual(waysForward(signedOut, { canRetry: false }), []);
  const actions = (error, context) => waysForward(error, context).map((w) => `${w.action}${w.primary ? '!' : ''}`);
  assert.deepEqual(actions(relayError({ relayCode: 'MODEL_STATE_MISMATCH', status: 409, messageId: 'm' }), { canRetry: true }), ['continueInNew!']);
  const conflict = new AgentError('AGENT_REVISION_CONFLICT', 'changed', { details: { relayCode: 'REVISION_CONFLICT', currentRevision: 3 } });
  assert.deepEqual(actions(conflict, { canRetry: true, conversationId: 'c_1' }), ['reload!', 'newConversation']);
  assert.deepEqual(actions(conflict, { canRetry: true, conversationId: null }), ['newConversation']);
  assert.deepEqual(actions(new AgentError('AGENT_CONVERSATION_CORRUPT', 'bad'), { canRetry: true, conversationId: 'c_1' }), ['newConversation']);
  assert.deepEqual(actions(relayError({ relayCode: 'UPSTREAM_RATE_LIMITED', status: 429 }), { canRetry: true }), ['retry!']);
  assert.deepEqual(actions(new AgentError('AGENT_INVALID_OPTIONS', 'bad'), { canRetry: false }), []);
  const reload = waysForward(conflict, { canRetry: true, conversationId: 'c_1' })[0];
  assert.deepEqual([reload.action, reload.part], ['reload', 'reload-button']);
});

test('errors read in plain words; exception text never does', () => {
  assert.equal(errorText(relayError({ relayCode: '' }, 'TypeError: Failed to fetch'), t), 'relayUnavailable');
  assert.equal(errorText(relayError({ relayCode: 'UNAUTHENTICATED', status: 401 }), t), 'signedOut');
  assert.equal(errorText(new AgentError('AGENT_LIMIT_EXCEEDED', 'x', { limit: 'maxToolCalls' }), t), 'limitExceeded(maxToolCalls)');
  assert.equal(errorText(new AgentError('AGENT_SPENDING_LIMIT_REACHED', 'x', { details: { retryAfterSeconds: 90 } }), t), 'spendingLimit(90)');
  assert.equal(errorText(new AgentError('AGENT_EXECUTION_TIMEOUT', 'x'), t), 'timeout');
  assert.equal(errorText(relayError({ relayCode: 'UPSTREAM_RATE_LIMITED', status: 429 }, 'slow down'), t), 'slow down');
});

test('a runtime that did not load is reported as an AgentError of the closed set, with its reason as cause', () => {
  const cause = new TypeError('Failed to fetch dynamically imported module');
  const error = runtimeLoadError(cause, t);
  assert.ok(error instanceof AgentError);
  assert.equal(error.code, 'AGENT_RUNTIME_LOAD_FAILED');
  assert.ok(Object.hasOwn(ErrorCodes, error.code), 'the code is one of ErrorCodes');
  assert.equal(error.cause, cause);
  assert.equal(error.message, 'runtimeFailed Failed to fetch dynamically imported module');
  assert.equal(runtimeLoadError(undefined, t).message, 'runtimeFailed');
  const own = new AgentError('AGENT_INVALID_OPTIONS', 'bad');
  assert.equal(runtimeLoadError(own, t), own, 'an AgentError is reported as it is');
});

test('a remembered conversation refused for lack of credentials is kept for later; one that is gone is forgotten', () => {
  assert.equal(restoreFailed(relayError({ relayCode: 'UNAUTHENTICATED', status: 401 })), 'await-credentials');
  assert.equal(restoreFailed(relayError({ relayCode: 'CONVERSATION_NOT_FOUND', status: 404 })), 'forget');
  assert.equal(restoreFailed(new AgentError('AGENT_CONVERSATION_CORRUPT', 'bad')), 'forget');
});

/** A relay stand-in for `GET /api/models` that refuses requests without the development identity header. */
function relayModels({ previewOnly: preview = true, status } = {}) {
  const seen = [];
  const fetch = async (url, init) => {
    seen.push({ url, headers: init.headers });
    if (status) return new Response('{}', { status });
    if (!init.headers['x-patchbridge-user']) return new Response('{"error":{"code":"UNAUTHENTICATED"}}', { status: 401 });
    return Response.json({ previewOnly: preview, models: [] });
  };
  return { fetch, seen };
}

test('the demo check refused before the page set its headers is answered once they are set', async () => {
  const relay = relayModels();
  let headers;
  const check = () => previewOnly({ endpoint: '/api/', headers, fetch: relay.fetch });
  assert.equal(await check(), 'refused');
  headers = async () => ({ 'x-patchbridge-user': 'me' });
  assert.equal(await check(), true);
  headers = { 'x-patchbridge-user': 'me' };
  assert.equal(await check(), true);
  assert.deepEqual(relay.seen.map((r) => r.url), ['/api/models', '/api/models', '/api/models']);
  assert.deepEqual(relay.seen[1].headers, { 'x-patchbridge-user': 'me' });
});

test('the demo check says false for a real model and nothing when the relay cannot tell', async () => {
  const headers = { 'x-patchbridge-user': 'me' };
  assert.equal(await previewOnly({ endpoint: '/api', headers, fetch: relayModels({ previewOnly: false }).fetch }), false);
  assert.equal(await previewOnly({ endpoint: '/api', headers, fetch: relayModels({ status: 503 }).fetch }), null);
  assert.equal(await previewOnly({ endpoint: '/api', headers, fetch: async () => { throw new TypeError('offline'); } }), null);
  assert.equal(await previewOnly({ endpoint: '/api', headers: () => { throw new Error('no token'); }, fetch: relayModels().fetch }), null);
});

test('property values: image limit, starter prompts from the property and the attribute, a message as text', () => {
  assert.equal(imageLimit(1024), 1024);
  for (const bad of [0, -1, 1.5, 'many', undefined, Number.MAX_VALUE]) assert.equal(imageLimit(bad), 3 * 1024 * 1024, String(bad));
  assert.deepEqual(suggestionList(['Hi', ' ', 3]), ['Hi', '3']);
  assert.equal(suggestionList('Hi'), null);
  assert.deepEqual(suggestionsAttribute('["a", "", 2, "b"]'), ['a', 'b']);
  assert.deepEqual(suggestionsAttribute('{"a":1}'), []);
  assert.deepEqual(suggestionsAttribute('not json'), []);
  assert.deepEqual(suggestionsAttribute(null), []);
  const message = { id: 'm', role: 'user', blocks: [{ type: 'text', text: 'one' }, { type: 'image', source: { type: 'url', url: 'x' } }, { type: 'text', text: 'two' }] };
  assert.equal(textOf(message), 'one\ntwo');
});

/**
 * A controller stand-in for the element's actions (widget/src/actions.js, DOM-free like the model): conversations
 * load only with the page's credentials, as the relay's do.
 */
function fakeController(credentials) {
  let state = snapshot();
  const listeners = new Set();
  const publish = (fields) => { state = { ...state, ...fields }; for (const l of listeners) l(state); };
  return {
    loads: [],
    getState: () => state,
    subscribe: (listener) => { listeners.add(listener); return () => listeners.delete(listener); },
    abort() { publish({ status: 'idle', lastOutcome: 'cancelled' }); },
    async loadConversation(id) {
      this.loads.push(id);
      if (!credentials.given) {
        const error = relayError({ relayCode: 'UNAUTHENTICATED', status: 401 });
        publish({ error });
        throw error;
      }
      publish({ conversation: { id, revision: 1, title: 'Kept' }, error: null });
    },
    newConversation() { publish({ conversation: null, messages: [], error: null }); },
  };
}
const { Actions } = await import('../../widget/src/actions.js');
function actionsOn(controller) {
  const record = { forgotten: 0, resets: 0, hidden: 0 };
  const actions = new Actions({
    controller: () => controller, follow: { stick: false }, composer: () => null, recovery: () => ({ authAsked: false }),
    log: { reset: () => { record.resets += 1; } }, notices: { hide: () => { record.hidden += 1; } },
    forget: () => { record.forgotten += 1; },
  });
  return { actions, record };
}

test('a remembered conversation the relay refused before the page set its headers opens once they are set', async () => {
  const credentials = { given: false };
  const controller = fakeController(credentials);
  const { actions, record } = actionsOn(controller);
  await actions.open('c_kept', true);
  assert.equal(record.forgotten, 0, 'not forgotten for lack of credentials');
  assert.equal(controller.getState().error, null, 'the refusal is not left on screen');
  assert.equal(actions.awaitingCredentials, 'c_kept');
  credentials.given = true;
  actions.credentialsChanged();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(controller.loads, ['c_kept', 'c_kept']);
  assert.equal(controller.getState().conversation.id, 'c_kept');
  assert.equal(actions.awaitingCredentials, null);
  actions.credentialsChanged();
  assert.equal(controller.loads.length, 2, 'opened once');
});

test('a remembered conversation that is gone is forgotten, and one started meanwhile is never replaced', async () => {
  const gone = fakeController({ given: true });
  gone.loadConversation = async () => { throw relayError({ relayCode: 'CONVERSATION_NOT_FOUND', status: 404 }); };
  const first = actionsOn(gone);
  await first.actions.open('c_gone', true);
  assert.equal(first.record.forgotten, 1);
  assert.equal(first.actions.awaitingCredentials, null);

  const credentials = { given: false };
  const controller = fakeController(credentials);
  const { actions } = actionsOn(controller);
  await actions.open('c_kept', true);
  controller.getState().messages = [{ id: 'm1', role: 'user', blocks: [{ type: 'text', text: 'new question' }] }];
  credentials.given = true;
  actions.credentialsChanged();
  assert.deepEqual(controller.loads, ['c_kept'], 'the person already started a new conversation');
});
