// Type declarations of `@patchbridge/agent/react`: the widget module (`@patchbridge/agent/widget`, re-exported)
// plus the JSX typing of <patchbridge-agent> for React 19, whose JSX namespace is `React.JSX` (module `react`).
// A separate entry, because augmenting `react` needs @types/react, which only React projects have.

import type { DetailedHTMLProps, HTMLAttributes } from 'react';
import type { PatchBridgeAgentAttributes, PatchBridgeAgentElement } from './widget.js';

export * from './widget.js';

declare module 'react' {
  namespace JSX {
    interface IntrinsicElements {
      /** `<patchbridge-agent endpoint="/api" />`; set `tools`, `headers`, … on the element through a ref. */
      'patchbridge-agent': DetailedHTMLProps<HTMLAttributes<PatchBridgeAgentElement>, PatchBridgeAgentElement> & PatchBridgeAgentAttributes;
    }
  }
}
