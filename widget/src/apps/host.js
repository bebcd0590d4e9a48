// The MCP Apps host of <patchbridge-agent> (SEP-1865 for web hosts; docs/adr/018), the on-demand chunk
// npm/widget-apps.js that ./hook.js imports the first time a tool card carries a `ui://` view. Not the SDK's
// AppBridge: it brings the MCP SDK's Protocol and its schemas along (about 146 KiB gzip bundled), for a host
// side that is a handful of methods; this file and ./bridge.js implement them from the spec.
//
// Per card (AppView): once the call was approved and runs or ran (status running, done or error) and the card
// scrolls near the viewport (IntersectionObserver, so long histories mount frames lazily), the resource is read
// through the runtime (`readMcpResource`: ui:// only, bounded, cached), the sandbox proxy page is framed from the
// sandbox origin (`appSandbox`), and when it says it is ready it gets the HTML and the resource's `_meta.ui.csp`.
// The app then initialises (./capabilities.js: what is declared) and receives the call's arguments
// (`ui/notifications/tool-input`) and result (`ui/notifications/tool-result`): the server's whole CallToolResult
// while this page holds it (`getMcpCallResult`), after a reload only what the conversation keeps, the result's
// text as one text block (no `structuredContent`).
//
// What the app asks goes through the runtime's rules: `tools/call` → `callToolFromApp` (validation, the
// confirmation shown in the card, limits; during a turn inside that turn, its confirmation still in the card;
// when the runtime answers busy (another app call, a conversation loading) the app gets an error result saying so); `ui/message` → its text is put in the composer, never sent; `ui/open-link` → asked in the
// card first, http(s) only. Anything else is "method not found".
//
// Failure stays in the card: an app that does not initialise within INIT_TIMEOUT_MS (a script that throws never
// does), floods messages (./bridge.js), or keeps growing (GROWTH_STEPS growing size changes within
// GROWTH_WINDOW_MS) is removed; the generic card stays with a note, and the element dispatches
// `patchbridge-app-error` `{ code, tool, server, callId, message }` with one of APP_ERROR_CODES. The card says
// where its view is: `data-app="ready"` once the view initialised, `"failed"` after a fallback. Teardown
// (`ui/resource-teardown`, then the frame goes, the card's calls are cancelled) on a removed card, a
// conversation switch or the element's disconnect.
import { h } from '../dom.js';
import { AppChannel, RPC, rpcError } from './bridge.js';
import { MAX_HEIGHT, MIN_HEIGHT, hostContext, initializeResult } from './capabilities.js';
import { APP_ERROR_EVENT } from './hook.js';

/** The stable codes of `patchbridge-app-error` (APP_HOST_UNAVAILABLE, the chunk did not load, is ./hook.js's). */
export const APP_ERROR_CODES = Object.freeze([
  'APP_NO_SANDBOX', 'APP_SANDBOX_SAME_ORIGIN', 'APP_RESOURCE_FAILED', 'APP_RESOURCE_INVALID', 'APP_INIT_TIMEOUT',
  'APP_FLOOD', 'APP_RUNAWAY_SIZE',
]);
/** The spec's MIME type of an app resource. */
export const MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app';
/** From framing the proxy to the app's `ui/notifications/initialized`. */
export const INIT_TIMEOUT_MS = 8000;
/** Growing size changes in a row, within GROWTH_WINDOW_MS, that count as growing without bound. */
export const GROWTH_STEPS = 20;
export const GROWTH_WINDOW_MS = 2000;
/** The longest text a `ui/message` may put in the composer. */
export const MAX_MESSAGE_CHARACTERS = 20_000;

/** @type {Record<string, Record<string, (...args: string[]) => string>>} */
const STRINGS = {
  en: {
    failed: (code) => `This tool's own view is not shown (${code}); its result is below.`,
    noSandbox: () => 'This tool has a view of its own, but the page names no sandbox origin for it (app-sandbox).',
    callAsk: (tool, server) => `The view asks to run ${tool} (${server}).`,
    run: () => 'Run', dontRun: () => "Don't run",
    linkAsk: (url) => `The view asks to open ${url}`,
    open: () => 'Open', cancel: () => 'Cancel',
    busy: () => 'The agent is busy; the view can run a tool once it is free.',
    label: (tool) => `View of ${tool}`,
  },
  zh: {
    failed: (code) => `此工具自带的视图未能显示（${code}），结果见下方。`,
    noSandbox: () => '此工具自带视图，但页面没有为它指定沙箱源（app-sandbox）。',
    callAsk: (tool, server) => `视图请求运行 ${tool}（${server}）。`,
    run: () => '运行', dontRun: () => '不运行',
    linkAsk: (url) => `视图请求打开 ${url}`,
    open: () => '打开', cancel: () => '取消',
    busy: () => '智能体正忙，空闲后视图才能运行工具。',
    label: (tool) => `${tool} 的视图`,
  },
};

const CSS = `
.app-frame { display: block; width: 100%; border: 0; border-top: 1px solid var(--pb-border); background: transparent; color-scheme: normal; }
.app-note { margin: 0; padding: 6px 12px; font-size: 0.88em; color: var(--pb-text-muted); }
.app-ask { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; padding: 8px 12px; border-top: 1px solid var(--pb-border); background: var(--pb-surface); }
.app-ask > span { flex: 1 1 14em; overflow-wrap: anywhere; }
.app-ask pre { flex-basis: 100%; margin: 0; max-height: 10em; overflow: auto; font-size: 0.85em; }
`;
/** @type {CSSStyleSheet | null} */
let sheet = null;
/** The chunk's styles, added to the element's shadow root once. @param {Node} node */
function adoptStyles(node) {
  const root = /** @type {ShadowRoot} */ (node.getRootNode());
  if (!root || !('adoptedStyleSheets' in root)) return;
  if (!sheet) { sheet = new CSSStyleSheet(); sheet.replaceSync(CSS); }
  if (!root.adoptedStyleSheets.includes(sheet)) root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
}

/** Statuses of a call whose app may show: it was approved and runs, or ran. */
const MOUNTABLE = new Set(['running', 'done', 'error']);

/**
 * Every app of one element: the views by call id, one IntersectionObserver, one message listener, and the
 * runtime's app-call state (whose confirmation is shown in the card of the view that asked).
 */
export class AppFrames {
  /** @type {Map<string, AppView>} */
  views = new Map();
  /** @type {AppView | null} the view whose tool call runs */
  activeCall = null;
  /** @type {any} */
  #watched = null;
  /** @type {(() => void) | null} */
  #unwatch = null;

  /** @param {import('./hook.js').AppsEnv} env */
  constructor(env) {
    this.env = env;
    this.observer = typeof IntersectionObserver === 'function'
      ? new IntersectionObserver((entries) => {
        for (const entry of entries) {
          if (!entry.isIntersecting) continue;
          for (const view of this.views.values()) if (view.anchor === entry.target) view.visible();
        }
      }, { rootMargin: '300px 0px' })
      : null;
    globalThis.addEventListener('message', (event) => {
      for (const view of this.views.values()) {
        if (view.owns(event)) { view.channel?.receive(event.data); return; }
      }
    });
  }

  /**
   * @param {string} callId
   * @param {any} card
   * @param {{ server: string, tool: string, uri: string }} app
   */
  card(callId, card, app) {
    let view = this.views.get(callId);
    if (!view) { view = new AppView(this, callId, app); this.views.set(callId, view); }
    try { view.update(card); } catch (error) { console.error('patchbridge-agent: an MCP App card failed:', error); }
  }

  /** @param {string} callId */
  gone(callId) {
    this.views.get(callId)?.close();
    this.views.delete(callId);
  }

  reset() {
    for (const view of this.views.values()) view.close();
    this.views.clear();
  }

  contextChanged() {
    for (const view of this.views.values()) view.contextChanged();
  }

  /** Follows the runtime's app call (its confirmation) for `controller`, once. @param {any} controller */
  watch(controller) {
    if (this.#watched === controller || typeof controller?.subscribeMcpAppCall !== 'function') return;
    this.#unwatch?.();
    this.#watched = controller;
    const update = () => {
      let call = null;
      try { call = controller.getMcpAppCall?.() ?? null; } catch { call = null; }
      this.activeCall?.pendingCall(call);
    };
    this.#unwatch = controller.subscribeMcpAppCall(update);
  }

  /** The element's theme and locale. @returns {{ theme: 'light' | 'dark', locale: string }} */
  context() {
    const host = this.env.host;
    return { theme: host.dataset.scheme === 'dark' ? 'dark' : 'light', locale: host.getAttribute('lang') || globalThis.navigator?.language || 'en' };
  }

  /**
   * @param {string} key
   * @param {...string} args
   */
  text(key, ...args) {
    const lang = this.context().locale.toLowerCase().startsWith('zh') ? 'zh' : 'en';
    return STRINGS[lang][key](...args);
  }
}

/** One card's app: idle → mounting → live, or failed / closed. */
class AppView {
  /** @type {'idle' | 'mounting' | 'live' | 'failed' | 'closed'} */
  state = 'idle';
  /** @type {AppChannel | null} */
  channel = null;
  /** @type {HTMLIFrameElement | null} */
  iframe = null;
  /** @type {HTMLElement | null} */
  anchor = null;
  sandboxOrigin = '';
  abort = new AbortController();
  initialized = false;
  resultSent = false;
  cancelledSent = false;
  /** @type {any} */
  card = null;
  /** @type {ReturnType<typeof setTimeout> | 0} */
  timer = 0;
  /** @type {{ el: HTMLElement, resolve: (yes: boolean) => void, key: string } | null} */
  asking = null;
  growth = { last: 0, steps: 0, since: 0 };
  csp = {};

  /**
   * @param {AppFrames} frames
   * @param {string} callId
   * @param {{ server: string, tool: string, uri: string }} app
   */
  constructor(frames, callId, app) {
    this.frames = frames;
    this.callId = callId;
    this.app = app;
  }

  /** @param {any} card */
  update(card) {
    this.card = card;
    if (this.state === 'idle' && MOUNTABLE.has(card.status)) {
      this.anchor = card.el;
      if (this.frames.observer) this.frames.observer.observe(card.el);
      else this.visible();
    }
    if (this.state === 'live' && this.initialized) this.sendResult();
    if ((card.status === 'not-run' || card.status === 'rejected') && this.initialized && !this.cancelledSent) {
      this.cancelledSent = true;
      this.channel?.notify('ui/notifications/tool-cancelled', { reason: card.status });
    }
  }

  /** The card is near the viewport: mount once. */
  visible() {
    if (this.state !== 'idle') return;
    if (this.anchor) this.frames.observer?.unobserve(this.anchor);
    this.state = 'mounting';
    void this.mount();
  }

  /** @param {MessageEvent} event */
  owns(event) {
    return this.iframe !== null && event.source === this.iframe.contentWindow && event.origin === this.sandboxOrigin;
  }

  async mount() {
    const env = this.frames.env;
    const card = this.card;
    const where = String(env.host.appSandbox ?? '').trim();
    /** @type {URL | null} */
    let sandbox = null;
    try { sandbox = where ? new URL(where, globalThis.location?.href) : null; } catch { sandbox = null; }
    if (!sandbox || !/^https?:$/.test(sandbox.protocol)) return this.fail('APP_NO_SANDBOX', this.frames.text('noSandbox'));
    if (sandbox.origin === globalThis.location?.origin) {
      return this.fail('APP_SANDBOX_SAME_ORIGIN', 'the sandbox origin is the page\'s own origin; an MCP App never runs there');
    }
    const controller = env.controller();
    let resource;
    try {
      resource = await controller.readMcpResource(this.app.server, this.app.uri, { signal: this.abort.signal });
    } catch (error) {
      const e = /** @type {any} */ (error);
      return this.fail('APP_RESOURCE_FAILED', `${e?.code ?? 'Error'}: ${e?.message ?? e}`);
    }
    if (this.state !== 'mounting') return;
    const mime = String(resource?.mimeType ?? '').replace(/\s+/g, '').toLowerCase();
    if (mime !== MCP_APP_MIME_TYPE || typeof resource.text !== 'string') {
      return this.fail('APP_RESOURCE_INVALID', `the resource is ${resource?.mimeType ?? 'of no type'}, not ${MCP_APP_MIME_TYPE}`);
    }
    this.csp = resource.meta?.csp && typeof resource.meta.csp === 'object' ? resource.meta.csp : {};
    adoptStyles(card.el);
    this.sandboxOrigin = sandbox.origin;
    const iframe = h('iframe', { className: 'app-frame', part: 'app-frame', title: this.frames.text('label', this.app.tool) });
    // The proxy keeps its own (cross) origin, so its messages can be told apart; the app inside it gets none.
    iframe.setAttribute('sandbox', 'allow-scripts allow-same-origin');
    iframe.setAttribute('allow', '');
    iframe.setAttribute('referrerpolicy', 'no-referrer');
    iframe.style.height = `${MIN_HEIGHT * 4}px`;
    this.iframe = iframe;
    this.channel = new AppChannel(() => iframe.contentWindow, sandbox.origin, {
      onRequest: (method, params) => this.request(method, params),
      onNotification: (method, params) => this.notification(method, params, resource.text),
      onFlood: () => this.fail('APP_FLOOD', 'the app sent more messages than the host takes'),
    });
    this.timer = setTimeout(() => this.fail('APP_INIT_TIMEOUT', `the app did not initialise within ${INIT_TIMEOUT_MS} ms`), INIT_TIMEOUT_MS);
    iframe.src = sandbox.href;
    const head = card.el.querySelector(':scope > .head');
    if (head) head.after(iframe); else card.el.prepend(iframe);
    card.el.classList.add('app');
    this.state = 'live';
    this.frames.watch(controller);
  }

  /**
   * @param {string} method
   * @param {any} params
   * @param {string} html
   */
  notification(method, params, html) {
    switch (method) {
      case 'ui/notifications/sandbox-proxy-ready':
        // The proxy loads the app once; later ready messages are ignored by it.
        this.channel?.notify('ui/notifications/sandbox-resource-ready', { html, csp: this.csp });
        return;
      case 'ui/notifications/initialized':
        if (this.initialized) return;
        this.initialized = true;
        clearTimeout(this.timer);
        this.card.el.dataset.app = 'ready';
        this.channel?.notify('ui/notifications/tool-input', { arguments: this.card?.input ?? {} });
        this.sendResult();
        return;
      case 'ui/notifications/size-changed':
        this.resize(params?.height);
        return;
      default:
        // notifications/message, ui/notifications/request-teardown and others: not declared, ignored (the card
        // decides when a view goes).
    }
  }

  /**
   * @param {string} method
   * @param {any} params
   */
  async request(method, params) {
    switch (method) {
      case 'ui/initialize':
        return initializeResult(
          { tools: typeof this.frames.env.controller()?.callToolFromApp === 'function', csp: this.csp },
          this.frames.context(), this.card?.el.clientWidth ?? 0);
      case 'ping':
        return {};
      case 'tools/call':
        return this.callTool(params);
      case 'ui/message':
        return this.message(params);
      case 'ui/open-link':
        return this.openLink(params);
      case 'ui/request-display-mode':
        return { mode: 'inline' };
      default:
        throw rpcError(RPC.METHOD_NOT_FOUND, `${method} is not offered by this host`);
    }
  }

  sendResult() {
    const card = this.card;
    if (this.resultSent || !card?.result) return;
    this.resultSent = true;
    const controller = this.frames.env.controller();
    let raw = null;
    try { raw = controller?.getMcpCallResult?.(this.callId) ?? null; } catch { raw = null; }
    this.channel?.notify('ui/notifications/tool-result', raw ?? { content: [{ type: 'text', text: card.result.content }], isError: card.result.isError });
  }

  /** @param {any} params */
  async callTool(params) {
    const controller = this.frames.env.controller();
    if (typeof controller?.callToolFromApp !== 'function') throw rpcError(RPC.METHOD_NOT_FOUND, 'tools/call is not offered by this host');
    const name = params?.name;
    const args = params?.arguments ?? {};
    if (typeof name !== 'string' || !args || typeof args !== 'object' || Array.isArray(args)) {
      throw rpcError(RPC.INVALID_PARAMS, 'tools/call needs a name and an arguments object');
    }
    this.frames.activeCall = this;
    try {
      return await controller.callToolFromApp({ server: this.app.server, name, arguments: args, signal: this.abort.signal });
    } catch (error) {
      const e = /** @type {any} */ (error);
      if (e?.code === 'AGENT_BUSY') return { content: [{ type: 'text', text: this.frames.text('busy') }], isError: true };
      throw rpcError(RPC.INTERNAL, `${e?.code ?? 'Error'}: ${e?.message ?? e}`);
    } finally {
      if (this.frames.activeCall === this) this.frames.activeCall = null;
      if (this.asking?.key.startsWith('call:')) this.answerAsk(false);
    }
  }

  /**
   * The runtime's app call changed: its confirmation is asked in this card (an elicitation is declined: the
   * question form belongs to the model's turns).
   * @param {any} call
   */
  pendingCall(call) {
    const pending = call?.pendingInterrupt;
    if (!pending || this.state !== 'live') return;
    const key = `call:${pending.interruptId}`;
    if (this.asking?.key === key) return;
    const controller = this.frames.env.controller();
    const respond = (/** @type {unknown} */ value) => {
      try { controller.respondMcpAppCall({ interruptId: pending.interruptId, value }); } catch (error) { console.warn('patchbridge-agent: the app call answer was refused:', error); }
    };
    if (pending.kind === 'elicitation') { respond({ action: 'decline' }); return; }
    let args = '';
    try { args = JSON.stringify(call.arguments ?? pending.arguments ?? {}, null, 2); } catch { args = ''; }
    void this.ask(key, this.frames.text('callAsk', String(call.tool ?? pending.tool), this.app.server), 'run', 'dontRun', args)
      .then((yes) => respond(yes));
  }

  /** @param {any} params */
  message(params) {
    const blocks = Array.isArray(params?.content) ? params.content : [];
    const text = blocks.filter((/** @type {any} */ b) => b?.type === 'text' && typeof b.text === 'string').map((/** @type {any} */ b) => b.text).join('\n\n');
    const composer = this.frames.env.composer();
    if (!text.trim() || text.length > MAX_MESSAGE_CHARACTERS || !composer?.input) return { isError: true };
    composer.input.value = text;
    composer.input.dispatchEvent(new Event('input', { bubbles: true }));
    composer.input.focus();
    return {};
  }

  /** @param {any} params */
  async openLink(params) {
    let url;
    try { url = new URL(String(params?.url ?? '')); } catch { throw rpcError(RPC.INVALID_PARAMS, 'ui/open-link needs a URL'); }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return { isError: true };
    const yes = await this.ask(`link:${url.href}`, this.frames.text('linkAsk', url.href), 'open', 'cancel');
    if (!yes || this.state !== 'live') return { isError: true };
    globalThis.open?.(url.href, '_blank', 'noopener,noreferrer');
    return {};
  }

  /**
   * A question in the card (one at a time: a newer one answers the older with no).
   * @param {string} key
   * @param {string} text
   * @param {string} yesKey
   * @param {string} noKey
   * @param {string} [detail]
   * @returns {Promise<boolean>}
   */
  ask(key, text, yesKey, noKey, detail = '') {
    this.answerAsk(false);
    return new Promise((resolve) => {
      const yes = h('button', { type: 'button', part: 'app-ask-yes', onclick: () => this.answerAsk(true) }, this.frames.text(yesKey));
      const no = h('button', { type: 'button', part: 'app-ask-no', onclick: () => this.answerAsk(false) }, this.frames.text(noKey));
      const el = h('div', { className: 'app-ask', part: 'app-ask', role: 'group' }, h('span', {}, text), detail ? h('pre', {}, detail) : null, yes, no);
      this.asking = { el, resolve, key };
      (this.iframe ?? this.card.el.lastElementChild)?.after(el);
      yes.focus();
    });
  }

  /** @param {boolean} yes */
  answerAsk(yes) {
    const asking = this.asking;
    if (!asking) return;
    this.asking = null;
    asking.el.remove();
    asking.resolve(yes);
  }

  /** @param {unknown} value */
  resize(value) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return;
    const now = performance.now();
    const g = this.growth;
    if (value > g.last) {
      if (g.steps === 0 || now - g.since > GROWTH_WINDOW_MS) { g.steps = 0; g.since = now; }
      g.steps += 1;
    } else {
      g.steps = 0;
    }
    g.last = value;
    if (g.steps >= GROWTH_STEPS) { this.fail('APP_RUNAWAY_SIZE', `the app grew ${GROWTH_STEPS} times in a row within ${GROWTH_WINDOW_MS} ms`); return; }
    if (this.iframe) this.iframe.style.height = `${Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(value)))}px`;
  }

  contextChanged() {
    if (this.state !== 'live' || !this.initialized) return;
    this.channel?.notify('ui/notifications/host-context-changed', hostContext(this.frames.context(), this.card?.el.clientWidth ?? 0));
  }

  /** Removes the frame and its questions, cancels its calls. */
  #remove() {
    clearTimeout(this.timer);
    this.abort.abort();
    this.answerAsk(false);
    this.channel?.close();
    this.iframe?.remove();
    this.card?.el.classList.remove('app');
    if (this.card) delete this.card.el.dataset.app;
    if (this.anchor) this.frames.observer?.unobserve(this.anchor);
  }

  /**
   * Falls back to the generic card with a note, and tells the page.
   * @param {string} code one of APP_ERROR_CODES
   * @param {string} message
   */
  fail(code, message) {
    if (this.state === 'failed' || this.state === 'closed') return;
    this.state = 'failed';
    this.#remove();
    this.card.el.dataset.app = 'failed';
    this.iframe = null;
    const note = h('p', { className: 'app-note', part: 'app-note', 'data-code': code }, code === 'APP_NO_SANDBOX' ? message : this.frames.text('failed', code));
    adoptStyles(this.card.el);
    const head = this.card.el.querySelector(':scope > .head');
    if (head) head.after(note); else this.card.el.prepend(note);
    console.warn(`patchbridge-agent: the MCP App of "${this.app.tool}" (${this.app.server}) is not shown: ${code}: ${message}`);
    this.frames.env.host.dispatchEvent(new CustomEvent(APP_ERROR_EVENT, {
      bubbles: true, composed: true, detail: { code, tool: this.app.tool, server: this.app.server, callId: this.callId, message },
    }));
  }

  /** Teardown: the app is told, then its frame goes and its calls are cancelled. */
  close() {
    if (this.state === 'closed') return;
    const live = this.state === 'live' && this.initialized;
    if (live) this.channel?.request('ui/resource-teardown', {}).catch(() => {});
    this.state = 'closed';
    this.#remove();
  }
}
