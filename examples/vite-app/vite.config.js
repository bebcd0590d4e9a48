// Vite configuration of the example app. Nothing here is specific to the agent: Vite sees the literal
// `new URL('./pkg/patchbridge_agent_bg.wasm', import.meta.url)` in the package and emits the .wasm as an asset.
//
// `base: './'` makes every URL in the build relative, so `dist/` works wherever it is served: by `vite preview`,
// or by the relay from the examples directory at /examples/vite-app/dist/ (which is how the end-to-end test runs
// it, same origin as the relay's /api). In `vite` (dev), /api is proxied to a relay on 127.0.0.1:8787
// (examples/relay-config/demo.json); set PATCHBRIDGE_RELAY to point elsewhere.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const relay = process.env.PATCHBRIDGE_RELAY ?? 'http://127.0.0.1:8787';

export default defineConfig({
  base: './',
  server: {
    // changeOrigin stays false: the relay then sees the dev server's Host, which equals the page's Origin, so its
    // same-origin check passes for POST/PUT/DELETE (and `localhost` is a loopback Host, as development identity
    // requires). The string shorthand `'/api': relay` would rewrite Host and every write would be 403.
    proxy: { '/api': { target: relay, changeOrigin: false } },
    // `file:../../npm` is a symlink, so the package's real files live outside this folder; let the dev server read them.
    fs: { allow: ['.', fileURLToPath(new URL('../../npm', import.meta.url))] },
  },
});
