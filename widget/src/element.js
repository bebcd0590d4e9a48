// <patchbridge-agent>: the chat widget as a framework-free custom element over the same controller that
// `createAgentController` returns. It renders the controller's state and forwards the person's actions; every
// agent rule (tool loop, confirmation, limits, cancellation, saving) is decided by the WebAssembly runtime.
//
// Lifecycle: the constructor builds the shell (header, banner slot, log, input) so it paints at once; connecting
// starts loading the runtime in the background and creates the controller when it is ready; a message sent
// before that is queued, shown, and sent then. Disconnecting (after a microtask, so a move within the page is
// not a teardown) destroys what connecting made: controller, listeners, animation frame, WebMCP bridge.
import { CSS } from './styles.js';
import { pickLanguage, makeTranslator } from './strings.js';
import { h, iconButton } from './dom.js';
import { MessageLog } from './messages.js';
import { Composer } from './composer.js';
import { confirmationCard } from './confirm.js';
import { HistoryPanel } from './history.js';
import { bridgeWebMcp } from './webmcp.js';
import { loadRuntime } from './runtime.js';
import { NoticeBar } from './notice.js';
import { Recovery } from './recovery.js';
import { schemeOf } from './theme.js';
import { drawView, pickView } from './views.js';
import { forgetConversation, rememberConversation, storedConversation } from './storage.js';
import { EVENTS } from './events.js';

const BUSY = new Set(['running', 'awaiting-confirmation', 'saving']);
/** Properties a page may set before the element is upgraded (they are re-applied through the setters). */
const UPGRADE_PROPS = ['runtimeOptions', 'tools', 'model', 'headers', 'strings', 'maxImageBytes', 'suggestions', 'toolViews'];
const CONFIRM_SLOT = 'pb-confirm-view';
const DEFAULT_MAX_IMAGE_BYTES = 3 * 1024 * 1024;

let sheet = null;
function styleSheet() {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
  }
  return sheet;
}

export { EVENTS };

export class PatchBridgeAgentElement extends HTMLElement {
  static observedAttributes = ['endpoint', 'conversation', 'lang', 'theme', 'suggestions', 'feedback'];

  #runtimeOptions = undefined;
  #tools = [];
  #model = undefined;
  #headers = undefined;
  #strings = undefined;
  #maxImageBytes = DEFAULT_MAX_IMAGE_BYTES;
  #suggestions = null; // set through the property; null: the attribute decides
  #toolViews = null;
  #confirmView = null; // the light-DOM holder of a page's confirmation view
  #t = makeTranslator('en');
  #controller = null;
  #session = null; // everything one connection made: { abort, controller, unsubscribe, ... }
  #teardownQueued = false;
  #frame = 0;
  #latest = null;
  #readyWaiters = [];
  #queue = [];
  #lastInput = null;
  #previous = { status: 'idle', error: null, pendingId: null, conversationKey: null };
  #reflecting = false;
  #stick = true; // follow the end of the log (false once the person scrolls up)

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.adoptedStyleSheets = [styleSheet()];
    this.#t = makeTranslator(pickLanguage(this.getAttribute('lang')), undefined);
    const t = this.#t;
    this.titleEl = h('h2', { part: 'title' }, t('title'));
    this.historyButton = iconButton('history', t('history'), { part: 'history-button', onclick: () => this.#toggleHistory() });
    this.newButton = iconButton('plus', t('newConversation'), { part: 'new-button', onclick: () => this.#newConversation() });
    this.banner = h('p', { className: 'banner', part: 'banner', role: 'status', hidden: true });
    this.logEl = h('div', { className: 'log', part: 'messages', role: 'log', 'aria-live': 'polite', 'aria-relevant': 'additions', 'aria-label': t('title') });
    this.scroller = h('div', { className: 'scroller' }, this.logEl);
    this.confirmSlot = h('div', { className: 'confirm-slot' });
    this.notice = h('div', { className: 'notice', part: 'notice', role: 'alert', hidden: true });
    this.dock = h('div', { className: 'dock', part: 'dock' }, this.confirmSlot, this.notice);
    this.notices = new NoticeBar(this.notice, () => this.#t);
    this.recovery = new Recovery({
      t: () => this.#t, notices: this.notices, controller: () => this.#controller, composer: () => this.composer,
      askPage: (detail) => this.#dispatch(EVENTS.unauthorized, detail), open: (id) => this.#open(id),
      newConversation: () => this.#newConversation(), continueInNew: () => this.#continueInNew(),
    });
    this.log = new MessageLog(this.logEl, t);
    this.log.actions.onFeedback = (messageId, value) => {
      const conv = this.#controller?.getState().conversation;
      this.#dispatch(EVENTS.feedback, { messageId, value, conversation: conv ? { id: conv.id, revision: conv.revision } : null });
    };
    this.log.actions.onRegenerate = () => this.#rewrite(() => this.#controller.regenerate());
    this.log.actions.onEdit = (message) => {
      const text = message.blocks.filter((b) => b.type === 'text').map((b) => b.text).join('\n');
      this.composer?.setEditing(true, text);
    };
    this.log.actions.feedback = this.hasAttribute('feedback');
    this.log.host = this;
    this.log.views = (name, kind) => pickView(this.#toolViews, name, kind);
    this.log.onViewError = (tool, view, error) => this.#viewFailed(tool, view, error);
    this.#applySuggestions();
    this.headerEl = h('header', { part: 'header' }, this.historyButton, this.titleEl, this.newButton);
    root.append(this.headerEl, this.banner, this.scroller, this.dock);
    for (const prop of UPGRADE_PROPS) {
      // A value set on the element before this class was defined is an own property shadowing our accessor.
      if (Object.prototype.hasOwnProperty.call(this, prop)) {
        const value = this[prop];
        delete this[prop];
        this[prop] = value;
      }
    }
  }

  // ---- public properties -------------------------------------------------------------------------------------

  /** The live controller (null until the runtime is ready), for headless extensions. */
  get controller() { return this.#controller; }

  /** Resolves with the controller once it exists. */
  whenReady() {
    return this.#controller ? Promise.resolve(this.#controller) : new Promise((resolve) => this.#readyWaiters.push(resolve));
  }

  /**
   * `{ limits?, hooks?, onHookError?, modelInterceptors?, toolInterceptors? }` (limits: a partial override of the
   * factory defaults). Honoured when set before the bundle loads or before the element connects; set later, it
   * applies from the next turn.
   */
  get runtimeOptions() { return this.#runtimeOptions; }
  set runtimeOptions(value) {
    this.#runtimeOptions = value;
    if (this.#controller) this.#controller.setRuntimeOptions(value ?? {});
  }

  /** Page tools (AgentTool objects). Changes take effect from the next turn. */
  get tools() { return this.#tools; }
  set tools(value) {
    const next = Array.isArray(value) ? [...value] : [];
    const controller = this.#controller;
    if (controller) {
      for (const tool of this.#tools) controller.unregisterTool(tool.name);
      for (const tool of next) controller.registerTool(tool);
    }
    this.#tools = next;
  }

  /** A custom model `{ stream(request, signal) }` instead of the relay, or a relay model id. Applies on (re)connect. */
  get model() { return this.#model; }
  set model(value) {
    this.#model = value;
    this.#restart();
  }

  /** Headers for relay requests: an object, or a (possibly async) function called per request. */
  get headers() { return this.#headers; }
  set headers(value) { this.#headers = value; }

  /** Overrides of the built-in strings (see strings.js for the keys). */
  get strings() { return this.#strings; }
  set strings(value) {
    this.#strings = value ?? undefined;
    this.#applyLanguage();
  }

  /** The largest image a person may attach, in bytes (default 3 MiB). */
  get maxImageBytes() { return this.#maxImageBytes; }
  set maxImageBytes(value) {
    const n = Number(value);
    this.#maxImageBytes = Number.isSafeInteger(n) && n > 0 ? n : DEFAULT_MAX_IMAGE_BYTES;
    if (this.composer) this.composer.options.maxImageBytes = this.#maxImageBytes;
  }

  /**
   * Starter prompts shown while the conversation is empty (strings; a click sends one). The `suggestions`
   * attribute takes a JSON array of strings; the property, when set, wins over it.
   */
  get suggestions() {
    if (this.#suggestions) return this.#suggestions;
    try {
      const parsed = JSON.parse(this.getAttribute('suggestions') ?? '[]');
      return Array.isArray(parsed) ? parsed.filter((s) => typeof s === 'string' && s.trim()) : [];
    } catch {
      return [];
    }
  }
  set suggestions(value) {
    this.#suggestions = Array.isArray(value) ? value.map(String).filter((s) => s.trim()) : null;
    this.#applySuggestions();
  }

  /**
   * Page views of tool calls (generative UI): `{ [toolName]: renderer | { card?, confirmation? }, '*': … }`.
   * `card({ name, callId, arguments, status, result })` replaces the generic card and is called again when the
   * status or result changes; `confirmation({ name, callId, arguments, description })` replaces the argument list
   * of the confirmation card. Both return a DOM Node, which the element places in its light DOM (slotted), so the
   * page's styles apply. A renderer that throws falls back to the generic view and is reported
   * (`patchbridge-view-error`). Applies to calls shown from now on.
   */
  get toolViews() { return this.#toolViews; }
  set toolViews(value) { this.#toolViews = value && typeof value === 'object' ? value : null; }

  #viewFailed(tool, view, error) {
    console.error(`patchbridge-agent: the ${view} view of "${tool}" failed; the generic view is shown:`, error);
    this.#dispatch(EVENTS.viewError, { tool, view, error });
  }

  /** The page's view of a pending confirmation, placed in the light DOM; the slot name, or undefined. */
  #confirmationView(pending, description) {
    this.#confirmView?.remove();
    const render = pickView(this.#toolViews, pending.tool, 'confirmation');
    if (!render) return undefined;
    try {
      const node = drawView(render, { name: pending.tool, callId: pending.callId, arguments: pending.arguments, description });
      this.#confirmView = h('div', { slot: CONFIRM_SLOT }, node);
      this.append(this.#confirmView);
      return CONFIRM_SLOT;
    } catch (error) {
      this.#viewFailed(pending.tool, 'confirmation', error);
      return undefined;
    }
  }

  #applySuggestions() {
    this.log?.setSuggestions(this.suggestions, (text) => this.#send(text));
  }

  /** Sends a message as if typed (queued until the runtime is ready). */
  send(text, images = []) { this.#send(String(text), images); }

  // ---- lifecycle ------------------------------------------------------------------------------------------------

  connectedCallback() {
    this.#teardownQueued = false;
    if (this.#session) return; // moved within the page: keep everything
    this.#start();
  }

  disconnectedCallback() {
    this.#teardownQueued = true;
    queueMicrotask(() => {
      if (this.#teardownQueued && !this.isConnected) this.#stop();
    });
  }

  attributeChangedCallback(name, oldValue, value) {
    if (oldValue === value) return;
    if (name === 'lang') this.#applyLanguage();
    else if (name === 'theme') this.#applyTheme();
    else if (name === 'endpoint') this.#restart();
    else if (name === 'suggestions') this.#applySuggestions();
    else if (name === 'feedback') this.log.actions.feedback = value !== null; // applies to answers shown from now on
    else if (name === 'conversation' && !this.#reflecting && this.#controller && value) this.#open(value);
  }

  #start() {
    const abort = new AbortController();
    const signal = abort.signal;
    const session = { abort, controller: null, unsubscribe: null, webmcp: null, media: null };
    this.#session = session;
    this.#applyTheme();
    this.#applyLanguage();
    this.composer = new Composer({
      t: this.#t, signal, maxImageBytes: this.#maxImageBytes, dropZone: this.scroller,
      onSend: (text, images) => this.#send(text, images),
      onStop: () => this.#controller?.abort(),
      onProblem: (text) => this.notices.show('info', text),
    });
    this.dock.querySelector('.composer-wrap')?.remove();
    this.dock.append(this.composer.el);
    this.history?.el.remove();
    this.history = new HistoryPanel({
      t: this.#t, signal,
      getController: () => this.#controller,
      currentId: () => this.#controller?.getState().conversation?.id ?? null,
      onOpen: (id) => { this.#open(id); this.#toggleHistory(false); },
      onNew: () => { this.#newConversation(); this.#toggleHistory(false); },
      onDeleted: (id) => { if (this.#controller?.getState().conversation?.id === id) { this.#forgetStored(); this.log.reset(); } },
      // The open conversation can only be deleted while idle: stop its turn first and wait for the end.
      beforeDelete: (id) => this.#stopTurnOf(id),
      onClose: () => this.#toggleHistory(false),
      lang: () => this.#language(),
    });
    this.shadowRoot.append(this.history.el);
    // Escape closes the history panel wherever focus is inside the element.
    this.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && this.history.open) { event.preventDefault(); this.#toggleHistory(false); }
    }, { signal });
    // Following the end: the person's own scrolling decides (read when the browser scrolls, where layout is
    // clean), and the jump to the end happens after layout (a ResizeObserver), so streaming never forces a
    // layout per frame.
    this.scroller.addEventListener('scroll', () => {
      const el = this.scroller;
      this.#stick = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
    }, { signal, passive: true });
    if (typeof ResizeObserver === 'function') {
      const follow = new ResizeObserver(() => { if (this.#stick) this.scroller.scrollTop = this.scroller.scrollHeight; });
      follow.observe(this.logEl);
      follow.observe(this.scroller);
      signal.addEventListener('abort', () => follow.disconnect());
    }
    const media = globalThis.matchMedia?.('(prefers-color-scheme: dark)');
    media?.addEventListener?.('change', () => this.#applyTheme(), { signal });
    this.composer.setPlaceholder(this.#t('inputPlaceholderLoading'));
    this.#render(null);

    loadRuntime().then((runtime) => {
      if (this.#session !== session) return;
      this.#createController(runtime, session);
    }, (cause) => {
      if (this.#session !== session) return;
      // The host hears of it too (an event and the console): a page cannot see the notice inside the shadow root.
      const error = { code: cause?.code ?? 'AGENT_RUNTIME_LOAD_FAILED', message: `${this.#t('runtimeFailed')} ${cause?.message ?? ''}`.trim(), cause };
      console.error('patchbridge-agent: the runtime did not load:', cause);
      this.#showError(error, () => this.#restart());
      this.#dispatch(EVENTS.error, { error });
    });
  }

  #createController(runtime, session) {
    const endpoint = this.getAttribute('endpoint');
    const options = { tools: this.#tools };
    if (endpoint) {
      options.endpoint = endpoint;
      // A function the controller calls per request, so a later change of the `headers` property applies at once.
      options.headers = async () => {
        const value = this.#headers;
        return (typeof value === 'function' ? await value() : value) ?? {};
      };
    }
    if (this.#model !== undefined && this.#model !== null) options.model = this.#model;
    if (this.#runtimeOptions !== undefined) options.runtime = this.#runtimeOptions;
    let controller;
    try {
      controller = runtime.createAgentController(options);
    } catch (error) {
      this.#showError(error, null);
      this.#dispatch(EVENTS.error, { error });
      return;
    }
    session.controller = controller;
    this.#controller = controller;
    session.unsubscribe = controller.subscribe((state) => this.#onState(state));
    session.webmcp = bridgeWebMcp(controller, (error) => console.warn('patchbridge-agent: WebMCP tool skipped:', error));
    this.composer.setPlaceholder(this.#t('inputPlaceholder'));
    // History lives in the relay: without an endpoint there is none to show.
    this.historyButton.hidden = !endpoint;
    if (endpoint) void this.#checkDemo(endpoint, session);
    const wanted = this.getAttribute('conversation') ?? storedConversation(this);
    const restore = wanted ? this.#open(wanted, !this.hasAttribute('conversation')) : Promise.resolve();
    this.#dispatch(EVENTS.ready, { controller });
    for (const resolve of this.#readyWaiters.splice(0)) resolve(controller);
    this.#onState(controller.getState());
    // Messages typed while loading are sent once the open conversation is in place.
    restore.finally(() => {
      if (this.#session !== session) return;
      const queued = this.#queue.splice(0);
      this.log.clearQueued();
      for (const item of queued) this.#send(item.text, item.images);
    });
  }

  #stop() {
    const session = this.#session;
    if (!session) return;
    this.#session = null;
    this.#controller = null;
    session.abort.abort();
    session.unsubscribe?.();
    session.webmcp?.stop();
    try { session.controller?.destroy(); } catch { /* already destroyed */ }
    if (this.#frame) cancelAnimationFrame(this.#frame);
    this.#frame = 0;
    this.#latest = null;
    this.log.reset();
    this.confirmSlot.replaceChildren();
    this.#confirmView?.remove();
    this.#confirmView = null;
    this.#previous = { status: 'idle', error: null, pendingId: null, conversationKey: null };
  }

  #restart() {
    if (!this.#session) return;
    this.#stop();
    if (this.isConnected) this.#start();
  }

  // ---- actions --------------------------------------------------------------------------------------------------

  #send(text, images = []) {
    const controller = this.#controller;
    const blocks = [...(text ? [{ type: 'text', text }] : []), ...images];
    if (!blocks.length) return;
    if (!controller) {
      this.#queue.push({ text, images });
      this.log.addQueued(text, images);
      this.#scrollToEnd();
      return;
    }
    const input = images.length ? blocks : text;
    this.#lastInput = input;
    this.notices.hide();
    this.recovery.authAsked = false;
    if (this.composer?.editing) {
      this.composer.setEditing(false);
      this.#rewrite(() => controller.editLastMessage(input));
      return;
    }
    controller.send(input).catch(() => { /* shown from state.error */ });
    this.#scrollToEnd();
  }

  /**
   * Regenerate or edit-and-resend: the controller rewrites the conversation's tail (a new revision; refused while
   * a turn runs) and runs the turn; a refusal is shown like any other error.
   */
  #rewrite(run) {
    const controller = this.#controller;
    if (!controller) return;
    this.notices.hide();
    let turn;
    try { turn = run(); } catch (error) { this.#showError(error, null); return; }
    Promise.resolve(turn).catch((error) => {
      // A refusal before the turn started is not in state.error: show it here.
      if (controller.getState().error !== error) this.#showError(error, null);
    });
    this.#scrollToEnd();
  }

  #retry() {
    const controller = this.#controller;
    if (!controller) return;
    this.notices.hide();
    if (typeof controller.retry === 'function') controller.retry().catch(() => {});
    else if (this.#lastInput != null) controller.send(this.#lastInput).catch(() => {});
  }

  /** Cancels a running turn and resolves once the controller is idle again (loads and resets need idle). */
  #settle() {
    const controller = this.#controller;
    if (!controller || !BUSY.has(controller.getState().status)) return Promise.resolve();
    controller.abort();
    return new Promise((resolve) => {
      const off = controller.subscribe((state) => {
        if (!BUSY.has(state.status)) { off(); resolve(); }
      });
    });
  }

  async #open(id, quietIfMissing = false) {
    const controller = this.#controller;
    if (!controller) return;
    await this.#settle();
    if (this.#controller !== controller) return;
    this.log.reset();
    try {
      await controller.loadConversation(id);
    } catch {
      // A remembered conversation that is gone (deleted, another user) starts fresh without alarming anyone;
      // any other failure is shown from state.error.
      if (quietIfMissing) {
        this.#forgetStored();
        try { controller.newConversation(); } catch { /* keep state */ }
        this.notices.hide();
      }
    }
  }

  async #newConversation(options) {
    const controller = this.#controller;
    if (!controller) return;
    await this.#settle();
    try {
      if (options) controller.newConversation(options);
      else controller.newConversation();
    } catch (error) {
      this.#showError(error, null);
      return;
    }
    this.#forgetStored();
    this.notices.hide();
    if (!options?.keepMessages) this.log.reset();
    this.composer?.input.focus();
  }

  /** The way forward from a conversation whose stored provider state the relay refuses: the same messages in a
   *  new conversation without that state, and the refused turn runs again there. */
  async #continueInNew() {
    await this.#newConversation({ keepMessages: true });
    const controller = this.#controller;
    const last = controller?.getState().messages.at(-1);
    if (controller && last?.role === 'user') controller.retry().catch(() => { /* shown from state.error */ });
  }

  #approve() {
    try { this.#controller?.approveTool(); } catch (error) { this.#showError(error, null); }
  }

  #reject() {
    try { this.#controller?.rejectTool(); } catch (error) { this.#showError(error, null); }
  }

  #stopTurnOf(id) {
    return this.#controller?.getState().conversation?.id === id ? this.#settle() : Promise.resolve();
  }

  /** The panel covers the element, so it is modal: what it covers is inert (no focus, no clicks) while it is open,
   *  and focus returns to the history button when it closes. */
  #toggleHistory(force) {
    const open = force ?? !this.history.open;
    for (const el of [this.headerEl, this.banner, this.scroller, this.dock]) el.inert = open;
    if (open) this.history.show();
    else if (this.history.open) { this.history.hide(); this.historyButton.focus(); }
    this.historyButton.setAttribute('aria-expanded', String(open));
  }

  async #checkDemo(endpoint, session) {
    try {
      const value = this.#headers;
      const headers = (typeof value === 'function' ? await value() : value) ?? {};
      const response = await fetch(`${endpoint.replace(/\/+$/, '')}/models`, { headers, signal: session.abort.signal });
      if (!response.ok) return;
      const info = await response.json();
      if (this.#session !== session) return;
      this.banner.hidden = info?.previewOnly !== true;
      this.banner.textContent = this.#t('demoBanner');
    } catch { /* the banner is informative only */ }
  }

  // ---- state → DOM ----------------------------------------------------------------------------------------------

  #onState(state) {
    this.#events(state);
    this.#latest = state;
    if (!this.#frame) this.#frame = requestAnimationFrame(() => { this.#frame = 0; this.#render(this.#latest); });
  }

  /** Events and remembered conversation follow every snapshot (not only rendered frames). */
  #events(state) {
    const prev = this.#previous;
    const busy = BUSY.has(state.status) || state.status === 'loading';
    if (state.error && state.error !== prev.error) this.#dispatch(EVENTS.error, { error: state.error });
    if (BUSY.has(prev.status) && state.status === 'idle' && !state.error && state.lastOutcome) {
      this.recovery.authAsked = false;
      this.#dispatch(EVENTS.outcome, { outcome: state.lastOutcome, conversation: state.conversation });
    }
    const pendingId = state.pendingConfirmation?.interruptId ?? null;
    if (pendingId && pendingId !== prev.pendingId) this.#dispatch(EVENTS.confirmation, { pendingConfirmation: state.pendingConfirmation });
    const conv = state.conversation;
    const conversationKey = conv ? `${conv.id}@${conv.revision}:${conv.title}` : null;
    if (conversationKey !== prev.conversationKey) {
      if (conv) this.#remember(conv.id);
      this.#dispatch(EVENTS.conversation, { conversation: conv });
    }
    this.#previous = { status: state.status, error: state.error, pendingId, conversationKey, busy };
  }

  #render(state) {
    const t = this.#t;
    if (!state) {
      this.composer?.setBusy(false, false);
      return;
    }
    // While another conversation loads, the old messages stay cleared (the log was reset when it was asked for).
    if (state.status !== 'loading') this.log.render(state);
    const busy = BUSY.has(state.status);
    this.composer?.setBusy(busy || state.status === 'loading', busy);
    this.titleEl.textContent = state.conversation?.title || t('title');

    // Confirmation card.
    const pending = state.pendingConfirmation;
    const shown = this.confirmSlot.firstElementChild;
    if (!pending) {
      if (shown) {
        const hadFocus = this.shadowRoot.activeElement && shown.contains(this.shadowRoot.activeElement);
        this.confirmSlot.replaceChildren();
        this.#confirmView?.remove();
        this.#confirmView = null;
        if (hadFocus) this.composer?.input.focus();
      }
    } else if (shown?.dataset.interruptId !== pending.interruptId) {
      const inspection = this.#controller?.getToolInspectionSource();
      const description = inspection?.snapshot?.tools?.find((tool) => tool.name === pending.tool)?.description;
      const slot = this.#confirmationView(pending, description);
      const card = confirmationCard(pending, { t, description, slot, onApprove: () => this.#approve(), onReject: () => this.#reject() });
      this.confirmSlot.replaceChildren(card);
      card.focus();
    }

    // Notices: an error (with its code and a way forward), max-tokens (not an error), or cancelled.
    if (state.error) {
      if (state.error !== this.notices.shownError) this.#showError(state.error, () => this.#retry());
    } else if (!busy && state.lastOutcome === 'max-tokens') {
      this.notices.show('info', t('maxTokens'), 'max-tokens');
    } else if (!busy && state.lastOutcome === 'cancelled') {
      this.notices.show('plain', t('cancelled'), 'cancelled');
    } else if (this.notices.kind !== 'problem' || busy) {
      this.notices.hide();
    }
  }

  /** Follows the end again (the person sent something); the jump itself happens after the next layout. */
  #scrollToEnd() {
    this.#stick = true;
  }

  /** Shows an error with the way forward that fits it (and Dismiss). */
  #showError(error, retry) {
    this.recovery.show(error, retry);
  }

  // ---- theme, language, remembered conversation ----------------------------------------------------------------

  #applyTheme() {
    this.dataset.scheme = schemeOf(this.getAttribute('theme') ?? 'auto', this);
  }

  #language() {
    return pickLanguage(this.getAttribute('lang'));
  }

  #applyLanguage() {
    const t = makeTranslator(this.#language(), this.#strings);
    this.#t = t;
    this.log?.setTranslator(t);
    this.composer?.setTranslator(t);
    if (this.history) this.history.options.t = t;
    this.historyButton.title = t('history');
    this.historyButton.setAttribute('aria-label', t('history'));
    this.newButton.title = t('newConversation');
    this.newButton.setAttribute('aria-label', t('newConversation'));
    this.logEl.setAttribute('aria-label', t('title'));
    this.log.emptyEl.textContent = t('empty');
    if (!this.#controller?.getState().conversation) this.titleEl.textContent = t('title');
    if (!this.banner.hidden) this.banner.textContent = t('demoBanner');
  }

  #remember(id) {
    rememberConversation(this, id);
    if (this.getAttribute('conversation') !== id && this.hasAttribute('conversation')) {
      this.#reflecting = true;
      this.setAttribute('conversation', id);
      this.#reflecting = false;
    }
  }

  #forgetStored() {
    forgetConversation(this);
    if (this.hasAttribute('conversation')) {
      this.#reflecting = true;
      this.removeAttribute('conversation');
      this.#reflecting = false;
    }
  }

  #dispatch(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }
}
