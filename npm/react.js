// @patchbridge/agent/react: the widget module for React projects. At run time it is `@patchbridge/agent/widget`
// (defines <patchbridge-agent> where there is a DOM, safe to import during server-side rendering); its
// declarations (react.d.ts) add the element to React 19's JSX.
export * from './widget.js';
