// Page entry: the runtime alone (`@patchbridge/agent`), as a page with its own UI imports it: a controller over
// a custom model. Bundled by bench/weight/bench.mjs; the .wasm it fetches is counted beside the JS.
import { createAgentController, DefaultAgentRuntime } from '@patchbridge/agent';

export { createAgentController, DefaultAgentRuntime };
