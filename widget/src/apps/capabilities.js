// What this host declares to an app in its `ui/initialize` answer (SEP-1865 McpUiInitializeResult), and the
// host context it sends. Declared is exactly what ./host.js implements:
//   openLinks        `ui/open-link`: http(s) only, the person is asked first (in the card)
//   serverTools      `tools/call` on the app's own server, through the runtime's `callToolFromApp` (validation,
//                    confirmation, limits); only when the runtime has it
//   message.text     `ui/message` with text content: it lands in the composer for the person to send
//   sandbox          the policy the proxy applied (the resource's `_meta.ui.csp`), no permissions granted
// Not declared, so an app must not count on them: serverResources, logging, downloadFile, updateModelContext
// (nothing an app says enters the model's context), sampling, display modes other than `inline`.
// Host context: theme, locale, timeZone, displayMode `inline` (the only one), containerDimensions (the card's
// width, the height bound), platform `web`. Changes of theme and locale follow as
// `ui/notifications/host-context-changed`.

/** The protocol version this host speaks (ext-apps 2.0, LATEST_PROTOCOL_VERSION). */
export const PROTOCOL_VERSION = '2026-01-26';
/** The tallest an app frame grows (px); an app asking for more scrolls inside. */
export const MAX_HEIGHT = 640;
/** The smallest app frame (px). */
export const MIN_HEIGHT = 32;

/**
 * @param {{ theme: 'light' | 'dark', locale: string }} context
 * @param {number} width
 */
export function hostContext(context, width) {
  /** @type {Record<string, unknown>} */
  const value = {
    theme: context.theme,
    locale: context.locale,
    displayMode: 'inline',
    availableDisplayModes: ['inline'],
    containerDimensions: { maxHeight: MAX_HEIGHT, ...(width > 0 ? { width: Math.round(width) } : { maxWidth: 100_000 }) },
    platform: 'web',
  };
  try { value.timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch { /* left out */ }
  return value;
}

/**
 * @param {{ tools: boolean, csp: object }} offer whether tool calls are available, the policy applied
 * @param {{ theme: 'light' | 'dark', locale: string }} context
 * @param {number} width
 */
export function initializeResult(offer, context, width) {
  /** @type {Record<string, unknown>} */
  const hostCapabilities = {
    openLinks: {},
    message: { text: {} },
    sandbox: { csp: offer.csp, permissions: {} },
  };
  if (offer.tools) hostCapabilities.serverTools = {};
  return {
    protocolVersion: PROTOCOL_VERSION,
    hostInfo: { name: 'patchbridge-agent', version: '0.1.0' },
    hostCapabilities,
    hostContext: hostContext(context, width),
  };
}
