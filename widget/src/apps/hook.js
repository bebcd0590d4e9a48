// The first-load side of MCP Apps in <patchbridge-agent> (issue 28, docs/adr/018): which tool cards carry an app,
// and the import of the app host (./host.js, a chunk of its own: npm/widget-apps.js) the first time one does. A
// page whose tools never declare a `ui://` view downloads nothing more than this file. The message log calls
// `card` for every card it renders (cheap: one lookup per call id once decided), `gone` for a removed card and
// `reset` when another conversation opens; the element calls `recheck` when its MCP servers change (a stored
// conversation renders before the servers have listed their tools) and `contextChanged` on a theme or language
// change.
//
// Page control (`mcpApps` property, `mcp-apps` attribute): 'off', 'on' (the default) or a list of server names
// (the attribute: names separated by spaces) whose apps may render. The sandbox proxy's URL (`appSandbox`,
// `app-sandbox`) names the sandbox origin; without it an app card stays the generic card, with a note.

/** The event of an app that could not be shown or was stopped: `{ code, tool, server, callId, message }`. */
export const APP_ERROR_EVENT = 'patchbridge-app-error';

/**
 * 'off' | 'on' | readonly server names, from the property's value or the attribute's text (unknown text: 'on').
 * @param {unknown} value
 * @returns {'off' | 'on' | string[]}
 */
export function appsSetting(value) {
  if (Array.isArray(value)) return value.map(String);
  const text = String(value ?? 'on').trim();
  return value === false || text === 'off' ? 'off' : text && text !== 'on' && text !== 'true' ? text.split(/\s+/) : 'on';
}

/** @type {Promise<any> | null} */
let chunk = null;

/** The app host chunk, imported at most once (retried after a failed load). */
export function loadApps() {
  if (!chunk) {
    // @ts-ignore: replaced at build time by a string literal.
    const url = globalThis.PATCHBRIDGE_APPS_URL ?? new URL(__PB_APPS_PATH__, import.meta.url);
    chunk = import(/* @vite-ignore */ String(url));
    chunk.catch(() => { chunk = null; });
  }
  return chunk;
}

/**
 * What the host needs from the element: the element itself (`host`: its `mcpApps`, `appSandbox`, theme, `lang`,
 * and the target of `patchbridge-app-error`), `controller()`, `composer()`.
 * @typedef {{ host: HTMLElement & { mcpApps: 'off' | 'on' | string[], appSandbox: string | null },
 *             controller: () => any, composer: () => any }} AppsEnv
 */

export class AppsHook {
  /** @type {Map<string, { server: string, tool: string, uri: string } | null>} decided per call id */
  #decided = new Map();
  /** @type {Map<string, any>} cards of MCP-named tools the runtime does not describe yet, and app cards waiting for the chunk */
  #waiting = new Map();
  /** @type {any} the chunk's AppFrames, once loaded (null: loading or never needed) */
  #frames = null;
  #loading = false;

  /** @param {AppsEnv} env */
  constructor(env) { this.env = env; }

  /**
   * A tool card was rendered (its status or result may have changed).
   * @param {string} callId
   * @param {any} card
   */
  card(callId, card) {
    let app = this.#decided.get(callId);
    if (app === undefined) {
      app = this.#appOf(card.name);
      if (app === undefined) { this.#waiting.set(callId, card); return; }
      this.#decided.set(callId, app);
    }
    if (!app) { this.#waiting.delete(callId); return; }
    if (this.#frames) { this.#waiting.delete(callId); this.#frames.card(callId, card, app); return; }
    this.#waiting.set(callId, card);
    if (this.#loading) return;
    this.#loading = true;
    loadApps().then((module) => {
      this.#frames = new module.AppFrames(this.env);
      this.recheck();
    }, (error) => {
      this.env.host.dispatchEvent(new CustomEvent(APP_ERROR_EVENT, { bubbles: true, composed: true, detail: { code: 'APP_HOST_UNAVAILABLE', message: String(error) } }));
    }).finally(() => { this.#loading = false; });
  }

  /** The card of `callId` left the log. @param {string} callId */
  gone(callId) {
    this.#decided.delete(callId);
    this.#waiting.delete(callId);
    this.#frames?.gone(callId);
  }

  /** Another conversation opened (or the element stopped): every app is torn down. */
  reset() {
    this.#decided.clear();
    this.#waiting.clear();
    this.#frames?.reset();
  }

  /** The MCP servers changed (or the host chunk arrived): the waiting cards are decided again. */
  recheck() {
    for (const [callId, card] of [...this.#waiting]) this.card(callId, card);
  }

  /** The theme or language changed. */
  contextChanged() { this.#frames?.contextChanged(); }

  /**
   * The app of a tool: `{ server, tool, uri }`, null (none, or not allowed by `mcpApps`), or undefined (an MCP
   * name the runtime does not describe yet).
   * @param {string} name
   */
  #appOf(name) {
    const setting = this.env.host.mcpApps;
    const controller = this.env.controller();
    if (!name.startsWith('mcp__') || setting === 'off') return null;
    // The MCP members arrive with the client chunk (a stored conversation renders before it): wait for them.
    if (!controller?.readMcpResource) return undefined;
    let info;
    try { info = controller.describeMcpTool(name); } catch { return null; }
    if (!info) return undefined;
    const uri = info.ui?.resourceUri;
    if (Array.isArray(setting) && !setting.includes(info.server)) return null;
    // A server that has not listed its tools yet describes each as having no view: decided once it is ready.
    if (!uri?.startsWith?.('ui://')) return controller.getMcpServers?.().some((/** @type {any} */ s) => s.name === info.server && s.status === 'ready') ? null : undefined;
    return { server: String(info.server), tool: String(info.tool), uri };
  }
}
