// Entry of the widget: defines <patchbridge-agent> once (a second copy of the bundle on the page is harmless)
// and exports the class for hosts that want to subclass it or check `instanceof`.
import { PatchBridgeAgentElement, EVENTS } from './element.js';

export { PatchBridgeAgentElement, EVENTS };
export { loadRuntime } from './runtime.js';

if (globalThis.customElements && !customElements.get('patchbridge-agent')) {
  customElements.define('patchbridge-agent', PatchBridgeAgentElement);
}
