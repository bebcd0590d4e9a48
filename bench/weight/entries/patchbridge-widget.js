// Page entry: the `<patchbridge-agent>` element through the module export `@patchbridge/agent/widget` (element,
// Markdown parser, and the runtime glue it loads in the background). The .wasm is counted beside the JS.
import '@patchbridge/agent/widget';
