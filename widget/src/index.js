// Entry of the widget: defines <patchbridge-agent> once (a second copy of the bundle on the page is harmless)
// and exports the class for hosts that want to subclass it or check `instanceof`.
//
// Importing it must be safe where there is no DOM: Next.js, Nuxt, SvelteKit and Astro evaluate a page's imports
// on the server too. Every module of the widget can be evaluated there (the element's class extends HTMLElement
// only where it exists, element.js); without a DOM the class export is undefined and nothing is defined; EVENTS
// and loadRuntime are the same everywhere (neither needs a DOM).
import { PatchBridgeAgentElement as ElementClass } from './element.js';

export { loadRuntime } from './runtime.js';

const dom = typeof HTMLElement === 'function' && typeof customElements === 'object';

/**
 * The element class (undefined where there is no DOM, e.g. during server-side rendering). Typed as widget.d.ts
 * declares it, so `tsc -p npm` fails when the class and its published declaration part ways.
 * @type {typeof import('../../npm/widget.js').PatchBridgeAgentElement | undefined}
 */
export const PatchBridgeAgentElement = dom ? ElementClass : undefined;

/** The events the element dispatches (one list, `events.js`, on the server too). */
export { EVENTS } from './events.js';

if (dom && !customElements.get('patchbridge-agent')) customElements.define('patchbridge-agent', ElementClass);
