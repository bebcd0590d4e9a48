// <patchbridge-agent>: the chat widget as a framework-free custom element over the same controller that
// `createAgentController` returns. It renders the controller's state and forwards the person's actions; every
// agent rule (tool loop, confirmation, limits, cancellation, saving) is decided by the WebAssembly runtime, and
// what a state means for the widget (events, view, ways forward from an error) by model.js. This file is the DOM
// glue and the lifecycle; its internals are private, its public surface is the one widget.d.ts declares.
//
// Lifecycle: the constructor builds the shell (header, banner slot, log, input) so it paints at once; connecting
// starts loading the runtime in the background and creates the controller when it is ready; a message sent
// before that is queued, shown, and sent then. Disconnecting (after a microtask, so a move within the page is
// not a teardown) destroys what connecting made: controller, listeners, animation frame, WebMCP bridge.
import { CSS } from './styles.js';
import { loadStrings, pickLanguage, makeTranslator } from './strings.js';
import { MessageLog } from './messages.js';
import { Composer } from './composer.js';
import { ConfirmationDock } from './confirm.js';
import { HistoryPanel } from './history.js';
import { bridgeWebMcp } from './webmcp.js';
import { AppsHook, appsSetting } from './apps/hook.js';
import { AUTH_MESSAGE, applyMcpServers, mcpConfirmationText, McpStatusList, withPopupAuth } from './mcp.js';
import { loadElicitation } from './runtime.js';
import { loadRuntime } from './runtime.js';
import { NoticeBar } from './notice.js';
import { Recovery } from './recovery.js';
import { Actions } from './actions.js';
import { schemeOf } from './theme.js';
import { pickView } from './views.js';
import { buildShell, followEnd, translateShell } from './shell.js';
import { forgetConversation, rememberConversation, storedConversation } from './storage.js';
import { EVENTS } from './events.js';
import { h } from './dom.js';
import {
  DEFAULT_MAX_IMAGE_BYTES, NOTHING_SEEN, follow, headersFrom, imageLimit, modelInputs, relayModels, runtimeLoadError,
  suggestionList, suggestionsAttribute, textOf, viewOf,
} from './model.js';
import { DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_FILES, attachmentLimits, positiveLimit } from './attachments.js';

/** @typedef {import('../../npm/index.js').AgentController} AgentController */
/** @typedef {import('../../npm/index.js').AgentState} AgentState */
/** @typedef {import('../../npm/index.js').AnyAgentTool} AnyAgentTool */
/** @typedef {import('../../npm/widget.js').ToolViews} ToolViews */
/** @typedef {import('./model.js').HeadersValue} HeadersValue */
/** @typedef {import('./model.js').Translate} Translate */
/**
 * Everything one connection made, torn down together: the abort signal of its listeners, the controller, and
 * the demo check (`checks` counts them so only the latest answer counts; `preview` is that answer).
 * @typedef {{ abort: AbortController, controller: AgentController | null, unsubscribe: (() => void) | null,
 *             webmcp: { stop(): void } | null, mcp: Promise<unknown> | null, endpoint: string | null, checks: number,
 *             preview: boolean | 'refused' | null | undefined }} Session
 */

/** Properties a page may set before the element is upgraded (they are re-applied through the setters). */
const UPGRADE_PROPS = ['runtimeOptions', 'tools', 'mcpServers', 'model', 'headers', 'strings', 'maxImageBytes', 'maxFileBytes', 'maxFiles', 'suggestions', 'toolViews', 'mcpApps', 'appSandbox'];

/** @type {CSSStyleSheet | null} */
let sheet = null;
function styleSheet() {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
  }
  return sheet;
}

/** @type {CSSStyleSheet | null} */
let waitingSheet = null;
/** Hides the shadow content while the strings of the element's language load (see #awaitStrings). */
function waitingStyleSheet() {
  if (!waitingSheet) {
    waitingSheet = new CSSStyleSheet();
    waitingSheet.replaceSync('*{visibility:hidden!important}');
  }
  return waitingSheet;
}

export { EVENTS };

/**
 * Calls `run` once the page's own scripts have run: at once if `DOMContentLoaded` has begun, else at that event,
 * which comes after the page's deferred and module scripts (those that may set `headers` after this one). While
 * those scripts run the document is already `interactive`, so the navigation timing tells whether the event came.
 * @param {() => void} run
 */
function afterPageScripts(run) {
  const navigation = /** @type {PerformanceNavigationTiming | undefined} */ (performance.getEntriesByType?.('navigation')[0]);
  const pending = document.readyState === 'loading'
    || (document.readyState === 'interactive' && navigation !== undefined && navigation.domContentLoadedEventStart === 0);
  if (pending) document.addEventListener('DOMContentLoaded', run, { once: true });
  else run();
}

/** HTMLElement, or a stand-in where there is none (a server evaluates this module too; index.js exports no class there). */
const Base = /** @type {typeof HTMLElement} */ (typeof HTMLElement === 'function' ? HTMLElement : class {});

export class PatchBridgeAgentElement extends Base {
  static observedAttributes = ['endpoint', 'conversation', 'lang', 'theme', 'suggestions', 'feedback'];

  /** @type {any} */
  #runtimeOptions = undefined;
  /** @type {AnyAgentTool[]} */
  #tools = [];
  /** @type {import('../../npm/index.js').McpServerOptions[]} */
  #mcpServers = [];
  #mcpStatus = new McpStatusList();
  /**
   * A running tool's question (`state.pendingElicitation`), answered through the controller. Its card's code
   * (./elicitation.js) is imported the first time a question appears, never on the first load.
   */
  #elicitSlot = h('div', { className: 'elicit-slot' });
  /** @type {import('./elicitation.js').ElicitationDock | null} */
  #elicitation = null;
  #elicitationLoading = false;
  /** The runtime's default maxToolResultCharacters (read from the runtime once it has loaded). */
  #defaultToolResult = 100_000;
  /** @type {(() => void) | null} */
  #mcpUnsubscribe = null;
  /** @type {any} */
  #model = undefined;
  /** @type {HeadersValue} */
  #headers = undefined;
  /** @type {Record<string, any> | undefined} */
  #strings = undefined;
  #maxImageBytes = DEFAULT_MAX_IMAGE_BYTES;
  #maxFileBytes = DEFAULT_MAX_FILE_BYTES;
  #maxFiles = DEFAULT_MAX_FILES;
  /** @type {string[] | null} set through the property; null: the attribute decides */
  #suggestions = null;
  /** @type {ToolViews | null} */
  #toolViews = null;
  /** MCP Apps (./apps/hook.js): the `mcpApps` property (undefined: the attribute decides) and `appSandbox`. */
  /** @type {unknown} */
  #mcpApps = undefined;
  /** @type {string | null} */
  #appSandbox = null;
  #apps = new AppsHook({ host: this, controller: () => this.#controller, composer: () => this.#composer });
  /** @type {Translate} */
  #t;
  /** @type {AgentController | null} */
  #controller = null;
  /** @type {Session | null} */
  #session = null;
  #teardownQueued = false;
  #frame = 0;
  /** @type {AgentState | null} */
  #latest = null;
  /** @type {((controller: AgentController) => void)[]} */
  #readyWaiters = [];
  #seen = NOTHING_SEEN;
  #reflecting = false;
  #follow = { stick: true }; // follow the end of the log (false once the person scrolls up)
  #shell; #notices; #recovery; #log; #confirmation; #actions;
  /** @type {Composer | null} */
  #composer = null;
  /** @type {HistoryPanel | null} */
  #history = null;

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.adoptedStyleSheets = [styleSheet()];
    this.#t = makeTranslator(pickLanguage(this.getAttribute('lang')), undefined);
    const t = this.#t;
    const shell = buildShell(t, { onHistory: () => this.#toggleHistory(), onNew: () => void this.#actions.newConversation() });
    this.#shell = shell;
    const notices = new NoticeBar(shell.notice, () => this.#t);
    this.#notices = notices;
    const log = new MessageLog(shell.log, t);
    this.#log = log;
    /** @type {{ feedback: boolean, onFeedback: Function | null, onRegenerate: Function | null, onEdit: Function | null }} */
    const logActions = log.actions;
    const actions = new Actions({
      controller: () => this.#controller, log, notices, recovery: () => this.#recovery, composer: () => this.#composer,
      forget: () => this.#forgetStored(), follow: this.#follow,
    });
    this.#actions = actions;
    this.#recovery = new Recovery({
      t: () => this.#t, notices, controller: () => this.#controller, composer: () => this.#composer,
      askPage: (detail) => this.#dispatch(EVENTS.unauthorized, detail), open: (id) => actions.open(id),
      newConversation: () => actions.newConversation(), continueInNew: () => actions.continueInNew(),
    });
    this.#confirmation = new ConfirmationDock({
      slot: shell.confirmSlot, host: this, views: () => this.#toolViews,
      onViewError: (tool, view, error) => this.#viewFailed(tool, view, error),
      onAnswer: (approve) => actions.answer(approve), onGone: () => this.#composer?.input.focus(),
    });
    logActions.onFeedback = (/** @type {string} */ messageId, /** @type {string | null} */ value) => {
      const conv = this.#controller?.getState().conversation;
      this.#dispatch(EVENTS.feedback, { messageId, value, conversation: conv ? { id: conv.id, revision: conv.revision } : null });
    };
    logActions.onRegenerate = () => actions.rewrite((controller) => controller.regenerate());
    logActions.onEdit = (/** @type {any} */ message) => this.#composer?.setEditing(true, textOf(message));
    logActions.feedback = this.hasAttribute('feedback');
    log.host = this;
    log.apps = this.#apps;
    log.views = (/** @type {string} */ name, /** @type {'card' | 'confirmation'} */ kind) => pickView(this.#toolViews, name, kind);
    log.onViewError = (/** @type {string} */ tool, /** @type {'card' | 'confirmation'} */ view, /** @type {unknown} */ error) => this.#viewFailed(tool, view, error);
    this.#applySuggestions();
    shell.dock.prepend(this.#mcpStatus.el, this.#elicitSlot);
    root.append(shell.header, shell.banner, shell.scroller, shell.dock);
    this.#awaitStrings();
    const self = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (this));
    for (const prop of UPGRADE_PROPS) {
      // A value set on the element before this class was defined is an own property shadowing our accessor.
      if (Object.prototype.hasOwnProperty.call(this, prop)) {
        const value = self[prop];
        delete self[prop];
        self[prop] = value;
      }
    }
  }

  // ---- public properties -------------------------------------------------------------------------------------

  /** The live controller (null until the runtime is ready), for headless extensions. */
  get controller() { return this.#controller; }

  /**
   * Resolves with the controller once it exists.
   * @returns {Promise<AgentController>}
   */
  whenReady() {
    const controller = this.#controller;
    return controller ? Promise.resolve(controller) : new Promise((resolve) => this.#readyWaiters.push(resolve));
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

  /**
   * Remote MCP servers `{ name, url, headers?, tools?, readOnly? }` whose tools join the agent's (the MCP client
   * is loaded only once servers are set). Changes take effect from the next turn.
   */
  get mcpServers() { return this.#mcpServers; }
  set mcpServers(value) {
    this.#mcpServers = Array.isArray(value) ? [...value] : [];
    const session = this.#session;
    if (session?.controller) session.mcp = this.#attachMcp(session.controller);
  }

  /** A custom model `{ stream(request, signal) }` instead of the relay, or a relay model id. Applies on (re)connect. */
  get model() { return this.#model; }
  set model(value) {
    this.#model = value;
    this.#restart();
  }

  /**
   * Headers for relay requests: an object, or a (possibly async) function called per request. A page may set
   * them after the runtime is ready: what the relay refused for lack of them is asked again.
   */
  get headers() { return this.#headers; }
  set headers(value) {
    this.#headers = value;
    this.#credentialsChanged();
  }

  /** Overrides of the built-in strings (see strings.js for the keys). */
  get strings() { return this.#strings; }
  set strings(value) {
    this.#strings = value ?? undefined;
    this.#applyLanguage();
  }

  /** The largest image a person may attach, in bytes (default 3 MiB). */
  get maxImageBytes() { return this.#maxImageBytes; }
  set maxImageBytes(value) {
    this.#maxImageBytes = imageLimit(value);
    if (this.#composer) this.#composer.options.maxImageBytes = this.#maxImageBytes;
  }

  /** The largest document (PDF or text file) a person may attach, in bytes (default 3 MiB). */
  get maxFileBytes() { return this.#maxFileBytes; }
  set maxFileBytes(value) {
    this.#maxFileBytes = positiveLimit(value, DEFAULT_MAX_FILE_BYTES);
    if (this.#composer) this.#composer.options.maxFileBytes = this.#maxFileBytes;
  }

  /** How many files (images and documents) one message may carry (default 5). */
  get maxFiles() { return this.#maxFiles; }
  set maxFiles(value) {
    this.#maxFiles = positiveLimit(value, DEFAULT_MAX_FILES);
    if (this.#composer) this.#composer.options.maxFiles = this.#maxFiles;
  }

  /**
   * Starter prompts shown while the conversation is empty (strings; a click sends one). The `suggestions`
   * attribute takes a JSON array of strings; the property, when set, wins over it.
   * @type {string[]}
   */
  get suggestions() { return this.#suggestions ?? suggestionsAttribute(this.getAttribute('suggestions')); }
  set suggestions(value) {
    this.#suggestions = suggestionList(value);
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

  /**
   * MCP Apps, a tool's own view in its card: 'off', 'on' (default) or the names of the servers whose apps may
   * render (the `mcp-apps` attribute: 'off', 'on' or names separated by spaces). Applies to calls shown from now on.
   * @type {'off' | 'on' | string[]}
   */
  get mcpApps() { return appsSetting(this.#mcpApps !== undefined ? this.#mcpApps : this.getAttribute('mcp-apps')); }
  set mcpApps(value) { this.#mcpApps = value ?? undefined; }

  /** The sandbox proxy page's URL, on an origin other than the page's (`app-sandbox` attribute; docs/adr/018). */
  get appSandbox() { return this.#appSandbox ?? this.getAttribute('app-sandbox'); }
  set appSandbox(value) { this.#appSandbox = typeof value === 'string' && value ? value : null; }

  /**
   * Sends a message as if typed (queued until the runtime is ready), with image and document blocks.
   * @param {string} text
   * @param {any[]} [blocks]
   */
  send(text, blocks = []) { this.#actions.send(String(text), blocks); }

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

  /**
   * @param {string} name
   * @param {string | null} oldValue
   * @param {string | null} value
   */
  attributeChangedCallback(name, oldValue, value) {
    if (oldValue === value) return;
    if (name === 'lang') this.#applyLanguage();
    else if (name === 'theme') this.#applyTheme();
    else if (name === 'endpoint') this.#restart();
    else if (name === 'suggestions') this.#applySuggestions();
    else if (name === 'feedback') this.#log.actions.feedback = value !== null; // applies to answers shown from now on
    else if (name === 'conversation' && !this.#reflecting && this.#controller && value) void this.#actions.open(value);
  }

  #start() {
    const abort = new AbortController();
    const signal = abort.signal;
    /** @type {Session} */
    const session = { abort, controller: null, unsubscribe: null, webmcp: null, mcp: null, endpoint: null, checks: 0, preview: undefined };
    this.#session = session;
    this.#applyTheme();
    this.#applyLanguage();
    const composer = new Composer({
      t: this.#t, signal, maxImageBytes: this.#maxImageBytes, maxFileBytes: this.#maxFileBytes, maxFiles: this.#maxFiles,
      dropZone: this.#shell.scroller,
      onSend: (text, images) => this.#actions.send(text, images),
      onStop: () => this.#controller?.abort(),
      onProblem: (text) => this.#notices.show('info', text),
    });
    this.#composer = composer;
    this.#shell.dock.querySelector('.composer-wrap')?.remove();
    this.#shell.dock.append(composer.el);
    this.#history?.el.remove();
    const history = new HistoryPanel({
      t: this.#t, signal,
      getController: () => this.#controller,
      currentId: () => this.#controller?.getState().conversation?.id ?? null,
      onOpen: (id) => { void this.#actions.open(id); this.#toggleHistory(false); },
      onNew: () => { void this.#actions.newConversation(); this.#toggleHistory(false); },
      onDeleted: (id) => { if (this.#controller?.getState().conversation?.id === id) { this.#forgetStored(); this.#log.reset(); } },
      // The open conversation can only be deleted while idle: stop its turn first and wait for the end.
      beforeDelete: (id) => this.#actions.stopTurnOf(id),
      onClose: () => this.#toggleHistory(false),
      lang: () => pickLanguage(this.getAttribute('lang')),
    });
    this.#history = history;
    this.shadowRoot?.append(history.el);
    // Escape closes the history panel wherever focus is inside the element.
    this.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && history.open) { event.preventDefault(); this.#toggleHistory(false); }
    }, { signal });
    followEnd(this.#shell, this.#follow, signal);
    const media = globalThis.matchMedia?.('(prefers-color-scheme: dark)');
    media?.addEventListener?.('change', () => this.#applyTheme(), { signal });
    composer.setPlaceholder(this.#t('inputPlaceholderLoading'));
    composer.setBusy(false, false);

    loadRuntime().then((runtime) => {
      if (this.#session !== session) return;
      this.#createController(runtime, session);
    }, (cause) => {
      if (this.#session !== session) return;
      // The host hears of it too (an event and the console): a page cannot see the notice inside the shadow root.
      const error = runtimeLoadError(cause, this.#t);
      console.error('patchbridge-agent: the runtime did not load:', cause);
      this.#recovery.show(error, () => this.#restart());
      this.#dispatch(EVENTS.error, { error });
    });
  }

  /**
   * @param {any} runtime the runtime module (`createAgentController`, …)
   * @param {Session} session
   */
  #createController(runtime, session) {
    const endpoint = this.getAttribute('endpoint');
    /** @type {import('../../npm/index.js').ControllerOptions} */
    const options = { tools: this.#tools };
    if (endpoint) {
      options.endpoint = endpoint;
      // A function the controller calls per request, so a later change of the `headers` property applies at once.
      options.headers = () => headersFrom(this.#headers);
    }
    if (this.#model !== undefined && this.#model !== null) options.model = this.#model;
    if (this.#runtimeOptions !== undefined) options.runtime = this.#runtimeOptions;
    // The runtime checks attached files on `send` against the same limits the composer checks when they are
    // attached (a larger maxFileBytes or maxImageBytes raises both).
    options.attachments = attachmentLimits(this.#maxFileBytes, this.#maxImageBytes);
    /** @type {AgentController} */
    let controller;
    try {
      controller = runtime.createAgentController(options);
    } catch (error) {
      this.#recovery.show(error, null);
      this.#dispatch(EVENTS.error, { error });
      return;
    }
    session.controller = controller;
    session.endpoint = endpoint;
    this.#controller = controller;
    session.unsubscribe = controller.subscribe((state) => this.#onState(state));
    session.webmcp = bridgeWebMcp(controller, (/** @type {unknown} */ error) => console.warn('patchbridge-agent: WebMCP tool skipped:', error));
    this.#defaultToolResult = runtime.defaultLimits?.().maxToolResultCharacters ?? this.#defaultToolResult;
    session.mcp = this.#mcpServers.length ? this.#attachMcp(controller) : null;
    this.#composer?.setPlaceholder(this.#t('inputPlaceholder'));
    // History lives in the relay: without an endpoint there is none to show.
    this.#shell.historyButton.hidden = !endpoint;
    // The first relay requests wait until the page's own scripts have run: a later module script of the page may
    // still set `headers`, and a request without them would only earn a 401 (and a console error) to be retried.
    /** @type {Promise<unknown>} */
    const restore = new Promise((resolve) => afterPageScripts(() => {
      if (this.#session !== session) return resolve(undefined);
      if (endpoint) void this.#checkDemo(session);
      const wanted = this.getAttribute('conversation') ?? storedConversation(this);
      resolve(wanted ? this.#actions.open(wanted, !this.hasAttribute('conversation')) : undefined);
    }));
    this.#dispatch(EVENTS.ready, { controller });
    for (const resolve of this.#readyWaiters.splice(0)) resolve(controller);
    this.#onState(controller.getState());
    // Messages typed while loading are sent once the open conversation is in place.
    Promise.all([restore, session.mcp]).finally(() => { if (this.#session === session) this.#actions.flushQueue(); });
  }

  /** @param {any} pending the state's pendingElicitation */
  #renderElicitation(pending) {
    if (this.#elicitation) { this.#elicitation.render(pending, this.#t); return; }
    if (!pending || this.#elicitationLoading) return;
    this.#elicitationLoading = true;
    loadElicitation().then((module) => {
      this.#elicitation = new module.ElicitationDock(this.#elicitSlot, (/** @type {any} */ answer) => {
        try { this.#controller?.answerElicitation(answer); } catch (error) { this.#notices.show('info', String(error instanceof Error ? error.message : error)); }
      });
      this.#renderElicitation(this.#controller?.getState().pendingElicitation ?? null);
    }, (error) => {
      console.error('patchbridge-agent: the question form did not load:', error);
    }).finally(() => { this.#elicitationLoading = false; });
  }

  /**
   * Gives the controller the element's MCP servers and shows their status; a refusal (AGENT_INVALID_OPTIONS) or a
   * chunk that did not load is reported like the controller's own construction errors.
   * @param {any} controller
   */
  #attachMcp(controller) {
    // Entries with `auth: { popup: callbackUrl }` get the element's own OAuth client ("Connect <server>").
    const { entries, clients } = withPopupAuth(this.#mcpServers, () => {});
    const signal = this.#session?.abort.signal;
    if (clients.size) {
      globalThis.addEventListener?.('message', (/** @type {MessageEvent} */ event) => {
        const data = event.data;
        if (event.origin !== globalThis.location?.origin || data?.type !== AUTH_MESSAGE) return;
        const name = String(data.state ?? '').split(':')[0];
        const client = clients.get(name);
        if (!client || data.state !== client.state() || typeof data.code !== 'string') return;
        client.pending = null;
        controller.finishMcpAuth(name, data.code).catch((/** @type {unknown} */ error) => this.#dispatch(EVENTS.error, { error }));
      }, { signal });
    }
    /** @param {string} name */
    const connect = (name) => {
      const client = clients.get(name);
      const url = client?.pending;
      return url ? () => { globalThis.open?.(url.href, 'patchbridge-mcp-auth', 'popup,width=520,height=680'); } : null;
    };
    return applyMcpServers(controller, entries, this.#runtimeOptions?.limits, this.#defaultToolResult, this.#runtimeOptions).then(() => {
      if (this.#controller !== controller || typeof controller.subscribeMcp !== 'function') return;
      this.#mcpUnsubscribe?.();
      const show = (/** @type {any} */ servers) => { this.#mcpStatus.render(servers, this.#t, connect); this.#apps.recheck(); };
      const unsubscribe = controller.subscribeMcp(show);
      const progress = (/** @type {any} */ entries) => this.#log.renderProgress(entries);
      const unsubscribeProgress = typeof controller.subscribeMcpProgress === 'function' ? controller.subscribeMcpProgress(progress) : null;
      this.#mcpUnsubscribe = () => { unsubscribe(); unsubscribeProgress?.(); };
      show(controller.getMcpServers());
    }, (error) => {
      if (this.#controller !== controller) return;
      this.#recovery.show(error, null);
      this.#dispatch(EVENTS.error, { error });
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
    this.#mcpUnsubscribe?.();
    this.#mcpUnsubscribe = null;
    this.#mcpStatus.render([], this.#t);
    this.#renderElicitation(null);
    try { session.controller?.destroy(); } catch { /* already destroyed */ }
    if (this.#frame) cancelAnimationFrame(this.#frame);
    this.#frame = 0;
    this.#latest = null;
    this.#actions.awaitingCredentials = null;
    this.#log.reset();
    this.#confirmation.clear();
    this.#seen = NOTHING_SEEN;
  }

  #restart() {
    if (!this.#session) return;
    this.#stop();
    if (this.isConnected) this.#start();
  }

  // ---- actions --------------------------------------------------------------------------------------------------

  /** The page set `headers`: ask the relay again what it refused for lack of them. */
  #credentialsChanged() {
    const session = this.#session;
    if (!session?.controller || !session.endpoint) return;
    if (typeof session.preview !== 'boolean') void this.#checkDemo(session);
    this.#actions.credentialsChanged();
  }

  /** The panel covers the element, so it is modal: what it covers is inert (no focus, no clicks) while it is open,
   *  and focus returns to the history button when it closes.
   *  @param {boolean} [force] */
  #toggleHistory(force) {
    const history = this.#history;
    if (!history) return;
    const open = force ?? !history.open;
    const { header, banner, scroller, dock, historyButton } = this.#shell;
    for (const el of [header, banner, scroller, dock]) el.inert = open;
    if (open) history.show();
    else if (history.open) { history.hide(); historyButton.focus(); }
    historyButton.setAttribute('aria-expanded', String(open));
  }

  /** Shows the demo banner when the relay runs its scripted demo model (only the latest check counts). @param {Session} session */
  async #checkDemo(session) {
    const check = ++session.checks;
    const { preview: answer, info } = await relayModels({
      endpoint: /** @type {string} */ (session.endpoint), headers: this.#headers, signal: session.abort.signal,
      fetch: globalThis.fetch.bind(globalThis),
    });
    if (this.#session !== session || check !== session.checks) return;
    session.preview = answer;
    // The file picker offers only what the model in use takes.
    this.#composer?.setInputs(modelInputs(info, this.#model));
    if (typeof answer !== 'boolean') return;
    this.#shell.banner.hidden = !answer;
    this.#shell.banner.textContent = this.#t('demoBanner');
  }

  // ---- state → DOM ----------------------------------------------------------------------------------------------

  /** Events and the remembered conversation follow every snapshot; the DOM follows at most once per frame. @param {AgentState} state */
  #onState(state) {
    const { events, remember, turnEnded, seen } = follow(this.#seen, state);
    this.#seen = seen;
    if (turnEnded) this.#recovery.authAsked = false;
    for (const { type, detail } of events) {
      if (type === EVENTS.conversation && remember) this.#remember(remember);
      this.#dispatch(type, detail);
    }
    this.#latest = state;
    if (!this.#frame) this.#frame = requestAnimationFrame(() => { this.#frame = 0; if (this.#latest) this.#render(this.#latest); });
  }

  /** @param {AgentState} state */
  #render(state) {
    const t = this.#t;
    const view = viewOf(state);
    if (view.log) this.#log.render(state);
    this.#composer?.setBusy(view.inputBusy, view.canStop);
    this.#shell.title.textContent = view.title || t('title');
    this.#renderElicitation(state.pendingElicitation ?? null);
    this.#confirmation.render(view.pending, () => {
      const name = view.pending?.tool ?? '';
      const description = this.#controller?.getToolInspectionSource()?.snapshot?.tools?.find((tool) => tool.name === name)?.description;
      return mcpConfirmationText(this.#controller, name, description, t) ?? description;
    }, t);
    // Notices: an error (with its code and a way forward), max-tokens (not an error), or cancelled.
    if (view.notice === 'error') {
      if (state.error !== this.#notices.shownError) this.#recovery.show(state.error, () => this.#actions.retry());
    } else if (view.notice === 'max-tokens') {
      this.#notices.show('info', t('maxTokens'), 'max-tokens');
    } else if (view.notice === 'cancelled') {
      this.#notices.show('plain', t('cancelled'), 'cancelled');
    } else if (this.#notices.kind !== 'problem' || !view.keepProblem) {
      this.#notices.hide();
    }
  }

  /**
   * @param {string} tool
   * @param {'card' | 'confirmation'} view
   * @param {unknown} error
   */
  #viewFailed(tool, view, error) {
    console.error(`patchbridge-agent: the ${view} view of "${tool}" failed; the generic view is shown:`, error);
    this.#dispatch(EVENTS.viewError, { tool, view, error });
  }

  // ---- theme, language, suggestions, remembered conversation ---------------------------------------------------

  #applySuggestions() {
    this.#log?.setSuggestions(this.suggestions, (/** @type {string} */ text) => this.#actions.send(text));
  }

  #applyTheme() {
    this.dataset.scheme = schemeOf(this.getAttribute('theme') ?? 'auto', this);
    this.#apps?.contextChanged();
  }

  #applyLanguage() {
    this.#awaitStrings();
    const t = makeTranslator(pickLanguage(this.getAttribute('lang')), this.#strings);
    this.#t = t;
    this.#log?.setTranslator(t);
    this.#composer?.setTranslator(t);
    this.#composer?.setPlaceholder(t(this.#controller ? 'inputPlaceholder' : 'inputPlaceholderLoading'));
    this.#history?.setTranslator(t);
    translateShell(this.#shell, t, Boolean(this.#controller?.getState().conversation));
    this.#log.emptyEl.textContent = t('empty');
    this.#apps?.contextChanged();
  }

  /**
   * The strings of a language other than English are a chunk of their own (strings.js, loadStrings): until it is
   * in, the shadow content stays hidden, so the element never shows English first; then it is translated and
   * shown. A failed load shows it in English (the next connect or `lang` change tries again).
   */
  #awaitStrings() {
    const loading = loadStrings(pickLanguage(this.getAttribute('lang')));
    const root = this.shadowRoot;
    if (!loading || !root) return;
    const waiting = waitingStyleSheet();
    if (!root.adoptedStyleSheets.includes(waiting)) root.adoptedStyleSheets = [...root.adoptedStyleSheets, waiting];
    const show = () => { root.adoptedStyleSheets = root.adoptedStyleSheets.filter((s) => s !== waiting); };
    loading.then(() => { show(); this.#applyLanguage(); }, show);
  }

  /** @param {string} id */
  #remember(id) {
    rememberConversation(this, id);
    if (this.getAttribute('conversation') !== id && this.hasAttribute('conversation')) this.#reflect(id);
  }

  #forgetStored() {
    forgetConversation(this);
    if (this.hasAttribute('conversation')) this.#reflect(null);
  }

  /** Keeps the `conversation` attribute in step with the open conversation without opening it again. @param {string | null} id */
  #reflect(id) {
    this.#reflecting = true;
    if (id === null) this.removeAttribute('conversation');
    else this.setAttribute('conversation', id);
    this.#reflecting = false;
  }

  /**
   * @param {string} type
   * @param {unknown} detail
   */
  #dispatch(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }
}
