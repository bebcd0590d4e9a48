// The widget's logic without the DOM, so it runs (and is tested, tests/node/widget-model.test.mjs) in Node in
// milliseconds: what a controller state snapshot means beyond drawing it (the events the element dispatches, the
// conversation it remembers), what the element draws from a snapshot (the view), which ways forward an error
// gets, the errors the element reports itself, the relay's demo check, and the property values the element
// accepts. element.js applies these to the DOM; every agent rule stays with the controller.
import { AgentError, AGENT_RUNTIME_LOAD_FAILED } from '../../npm/errors.js';
import { EVENTS } from './events.js';
import { inputsOf } from './attachments.js';

/** @typedef {import('../../npm/index.js').AgentState} AgentState */
/** @typedef {import('../../npm/index.js').ControllerStatus} ControllerStatus */
/** @typedef {import('../../npm/index.js').Message} Message */
/** @typedef {(key: string, ...args: any[]) => string} Translate */

/** The statuses in which a turn is under way: Stop applies, and loads and resets wait for idle. */
export const BUSY = new Set(['running', 'awaiting-confirmation', 'saving']);

/** @param {string | null | undefined} status */
export const isBusy = (status) => BUSY.has(status ?? '');

// ---- state → events ------------------------------------------------------------------------------------------

/**
 * What the element remembers of the last snapshot to tell what changed.
 * @typedef {{ status: string, error: unknown, pendingId: string | null, conversationKey: string | null }} Seen
 */

/** @type {Seen} */
export const NOTHING_SEEN = Object.freeze({ status: 'idle', error: null, pendingId: null, conversationKey: null });

/**
 * What follows from one snapshot, in the order the element acts on it: `events` to dispatch (`remember` is the
 * conversation to store before the conversation event goes out); `turnEnded` when a turn ended well (the page may
 * be asked for credentials again); `seen` for the next call. Every snapshot counts, not only painted frames.
 * @param {Seen} previous
 * @param {AgentState} state
 */
export function follow(previous, state) {
  /** @type {{ type: string, detail: any }[]} */
  const events = [];
  if (state.error && state.error !== previous.error) events.push({ type: EVENTS.error, detail: { error: state.error } });
  const turnEnded = isBusy(previous.status) && state.status === 'idle' && !state.error && state.lastOutcome != null;
  if (turnEnded) events.push({ type: EVENTS.outcome, detail: { outcome: state.lastOutcome, conversation: state.conversation } });
  const pendingId = state.pendingConfirmation?.interruptId ?? null;
  if (pendingId && pendingId !== previous.pendingId) {
    events.push({ type: EVENTS.confirmation, detail: { pendingConfirmation: state.pendingConfirmation } });
  }
  const conv = state.conversation;
  const conversationKey = conv ? `${conv.id}@${conv.revision}:${conv.title}` : null;
  let remember = null;
  if (conversationKey !== previous.conversationKey) {
    remember = conv?.id ?? null;
    events.push({ type: EVENTS.conversation, detail: { conversation: conv } });
  }
  return { events, remember, turnEnded, seen: { status: state.status, error: state.error, pendingId, conversationKey } };
}

// ---- state → view --------------------------------------------------------------------------------------------

/**
 * What the element draws from a snapshot. `log`: whether the log follows it (while another conversation loads
 * the old messages stay cleared). `inputBusy`: Send is replaced by Stop; `canStop`: Stop works. `notice`: the
 * error shown, `max-tokens` or `cancelled`, or null: then any other notice goes, except a problem with the
 * person's input while no turn runs (`keepProblem`).
 * @param {AgentState} state
 */
export function viewOf(state) {
  const busy = isBusy(state.status);
  /** @type {'error' | 'max-tokens' | 'cancelled' | null} */
  let notice = null;
  if (state.error) notice = 'error';
  else if (!busy && state.lastOutcome === 'max-tokens') notice = 'max-tokens';
  else if (!busy && state.lastOutcome === 'cancelled') notice = 'cancelled';
  return {
    log: state.status !== 'loading',
    inputBusy: busy || state.status === 'loading',
    canStop: busy,
    title: state.conversation?.title || null,
    // An MCP App's call in the turn (`app_…`, in no message) is asked in its app's card instead.
    pending: state.pendingConfirmation?.callId.startsWith('app_') ? null : state.pendingConfirmation,
    notice,
    keepProblem: !busy,
  };
}

/** The text of a message's text blocks (what goes back into the box to edit or resend it). @param {Message} message */
export function textOf(message) {
  return message.blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
}

// ---- errors and their ways forward ---------------------------------------------------------------------------

/** Whether `error` is a relay request that never got an answer (offline, relay down, blocked by the network). */
export function isUnreachable(/** @type {any} */ error) {
  return error?.code === 'AGENT_RELAY_ERROR' && error.details?.status == null && !error.details?.relayCode;
}

/** Whether `error` is the relay refusing the page's credentials (HTTP 401). */
export function isUnauthenticated(/** @type {any} */ error) {
  return error?.code === 'AGENT_RELAY_ERROR' && (error.details?.status === 401 || error.details?.relayCode === 'UNAUTHENTICATED');
}

/**
 * Plain words for an AgentError: the limit's name, a timeout, a conflict, no connection, signed out; else the
 * error's own message. Exception text (`TypeError: Failed to fetch`) is never shown as the words.
 * @param {any} error
 * @param {Translate} t
 */
export function errorText(error, t) {
  const code = error?.code ?? 'ERROR';
  if (code === 'AGENT_LIMIT_EXCEEDED' && error.limit) return t('limitExceeded', error.limit);
  if (code === 'AGENT_EXECUTION_TIMEOUT') return t('timeout');
  if (code === 'AGENT_REVISION_CONFLICT') return t('conflict');
  if (code === 'AGENT_SPENDING_LIMIT_REACHED') return t('spendingLimit', error.details?.retryAfterSeconds);
  if (isUnreachable(error)) return t('relayUnavailable');
  if (isUnauthenticated(error)) return t('signedOut');
  if (error?.details?.relayCode === 'UPSTREAM_UNAVAILABLE' && !error.message) return t('relayUnavailable');
  return error?.message || code;
}

/**
 * One way forward offered under an error: `action` names what the element does and is the string key of its
 * label; `part` is the button's part name.
 * @typedef {{ action: 'continueInNew' | 'reload' | 'newConversation' | 'retry', primary?: boolean, part?: string }} Way
 */

/**
 * The ways forward from `error`: `'ask-credentials'` when the relay refused the page's credentials and the failed
 * operation can run again (the page is asked first), else the buttons: "Continue in a new conversation" for
 * provider state the relay refuses; "Reload conversation" (conflict, when a conversation is open) and "New
 * conversation" after a conflict or a corrupt conversation; Retry for anything else that can run again.
 * @param {any} error
 * @param {{ canRetry: boolean, conversationId?: string | null }} context
 * @returns {'ask-credentials' | Way[]}
 */
export function waysForward(error, { canRetry, conversationId = null }) {
  const code = error?.code ?? 'ERROR';
  if (canRetry && isUnauthenticated(error)) return 'ask-credentials';
  if (error?.details?.relayCode === 'MODEL_STATE_MISMATCH') return [{ action: 'continueInNew', primary: true }];
  if (code === 'AGENT_REVISION_CONFLICT' || code === 'AGENT_CONVERSATION_CORRUPT') {
    /** @type {Way[]} */
    const ways = [];
    if (conversationId && code === 'AGENT_REVISION_CONFLICT') ways.push({ action: 'reload', primary: true, part: 'reload-button' });
    ways.push({ action: 'newConversation' });
    return ways;
  }
  return canRetry ? [{ action: 'retry', primary: true, part: 'retry-button' }] : [];
}

/**
 * What to do when opening the conversation the element restores at start (the remembered one) failed: a 401
 * means the page has not given its credentials yet (it may set `headers` after the runtime is ready), so the id
 * is kept and opened again once `headers` change; any other failure (deleted, another user's) forgets it and
 * starts fresh without alarming anyone.
 * @param {unknown} error
 * @returns {'await-credentials' | 'forget'}
 */
export function restoreFailed(error) {
  return isUnauthenticated(error) ? 'await-credentials' : 'forget';
}

/**
 * The error the element reports when the WebAssembly runtime did not load: `AGENT_RUNTIME_LOAD_FAILED` with the
 * element's words and the reason, the reason as `cause`. An AgentError is reported as it is.
 * @param {unknown} cause
 * @param {Translate} t
 */
export function runtimeLoadError(cause, t) {
  if (cause instanceof AgentError) return cause;
  const reason = /** @type {any} */ (cause)?.message ?? '';
  return new AgentError(AGENT_RUNTIME_LOAD_FAILED, `${t('runtimeFailed')} ${reason}`.trim(), { cause });
}

// ---- the relay's demo check ----------------------------------------------------------------------------------

/** @typedef {Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>) | undefined} HeadersValue */

/** The headers of the next relay request from the `headers` property: an object, or a (possibly async) function. */
export async function headersFrom(/** @type {HeadersValue} */ value) {
  return (typeof value === 'function' ? await value() : value) ?? {};
}

/**
 * Asks the relay about its models (`GET {endpoint}/models`): whether it runs the scripted demo model
 * (`previewOnly`) and what the model in use takes. `preview` is `true` / `false`, `'refused'` when the relay
 * refused the credentials (401: asked again when `headers` change), or null when it could not tell (the banner is
 * informative only); `info` is the answer (null without one).
 * @param {{ endpoint: string, headers: HeadersValue, fetch: typeof globalThis.fetch, signal?: AbortSignal }} options
 * @returns {Promise<{ preview: boolean | 'refused' | null, info: any }>}
 */
export async function relayModels({ endpoint, headers, fetch, signal }) {
  try {
    const response = await fetch(`${endpoint.replace(/\/+$/, '')}/models`, { headers: await headersFrom(headers), signal });
    if (response.status === 401) return { preview: 'refused', info: null };
    if (!response.ok) return { preview: null, info: null };
    const info = await response.json();
    return { preview: info?.previewOnly === true, info: info && typeof info === 'object' ? info : null };
  } catch {
    return { preview: null, info: null };
  }
}

/**
 * Whether the relay runs the scripted demo model (see `relayModels`).
 * @param {{ endpoint: string, headers: HeadersValue, fetch: typeof globalThis.fetch, signal?: AbortSignal }} options
 * @returns {Promise<boolean | 'refused' | null>}
 */
export async function previewOnly(options) {
  return (await relayModels(options)).preview;
}

/**
 * The input kinds the person may attach for: the relay model in use (`model`, else the relay's `defaultModel`)
 * as its models answer reports it (attachments.js `inputsOf`: `capabilities.inputs`, `images` as its alias). When
 * that is unknown — no answer, a custom model, a relay that reports no `inputs` — images and text files, as the
 * element always offered (PDF only where the relay says a model reads it).
 * @param {any} info the models answer, or null
 * @param {unknown} model the element's `model` property
 * @returns {Set<string>}
 */
export function modelInputs(info, model) {
  const fallback = new Set(['text', 'image']);
  if (!info || !Array.isArray(info.models) || (model != null && typeof model !== 'string')) return fallback;
  const id = typeof model === 'string' ? model : info.defaultModel;
  const entry = info.models.find((/** @type {any} */ m) => m?.id === id);
  if (!entry || !Array.isArray(entry.capabilities?.inputs)) return fallback;
  return inputsOf(entry);
}

// ---- property values -----------------------------------------------------------------------------------------

export const DEFAULT_MAX_IMAGE_BYTES = 3 * 1024 * 1024;

/** `maxImageBytes` as set: a positive safe integer, else the default. @param {unknown} value */
export function imageLimit(value) {
  const n = Number(value);
  return Number.isSafeInteger(n) && n > 0 ? n : DEFAULT_MAX_IMAGE_BYTES;
}

/** Starter prompts from the property: non-blank strings, or null (then the attribute decides). @param {unknown} value */
export function suggestionList(value) {
  return Array.isArray(value) ? value.map(String).filter((s) => s.trim()) : null;
}

/** Starter prompts from the `suggestions` attribute (a JSON array of strings); [] when it is not one. */
export function suggestionsAttribute(/** @type {string | null} */ text) {
  try {
    const parsed = JSON.parse(text ?? '[]');
    return Array.isArray(parsed) ? parsed.filter((s) => typeof s === 'string' && s.trim()) : [];
  } catch {
    return [];
  }
}
