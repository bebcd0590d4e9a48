// Minifies the JavaScript the runtime loads from npm/pkg/ (run by scripts/build-wasm.sh on its staging directory;
// the wasm is the bulk of a page load, but comments and long names were half of the ~17 KiB gzip of JS glue):
//   <dir>/patchbridge_agent.js  the wasm-bindgen glue, minified in place (it is generated; tsc -p npm reads the
//                               .d.ts beside it)
//   <dir>/adapter.js            npm/adapter.js and its modules (npm/adapter/*.js) bundled into one file and
//                               minified; the glue imports it as "./adapter.js" (raw_module in
//                               controller-wasm/src/bindings/js.rs), and it imports the package's own
//                               ../errors.js, so AgentError stays one class for "." and "./errors"
// without source maps: the package ships none (npm/README.md, "What is in the package", says why).
// The glue keeps its identifiers (whitespace and syntax only): `.name` of its exported classes and functions is
// observable (`DefaultAgentRuntime.name`), and esbuild's keepNames helper costs as much as renaming saves. The
// adapter's names are internal, so it is minified fully.
// Usage: node scripts/minify-js.mjs <staging dir>
import { build, transform } from 'esbuild';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.resolve(process.argv[2] ?? path.join(root, 'npm', 'pkg'));

/**
 * Bundles the files under `inside` (the adapter's own modules); keeps the files named by `map` (absolute path →
 * specifier in the output) as external imports; any other import stops the build.
 */
const external = (inside, map) => ({
  name: 'external',
  setup(b) {
    b.onResolve({ filter: /./ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      const resolved = path.resolve(path.dirname(args.importer), args.path);
      if (map[resolved] !== undefined) return { path: map[resolved], external: true };
      if (resolved.startsWith(inside + path.sep)) return { path: resolved };
      throw new Error(`unexpected import ${args.path} in ${args.importer}`);
    });
  },
});

const common = {
  bundle: true,
  format: 'esm',
  target: ['es2022', 'chrome111', 'firefox113', 'safari16.4'],
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
  allowOverwrite: true,
};

await build({
  ...common,
  minify: true,
  entryPoints: [path.join(root, 'npm', 'adapter.js')],
  outfile: path.join(dir, 'adapter.js'),
  plugins: [external(path.join(root, 'npm', 'adapter'), { [path.join(root, 'npm', 'errors.js')]: '../errors.js' })],
});
// The glue is transformed as one file rather than bundled: bundling renames a class that refers to itself
// (`AgentController` became `_AgentController`), and the glue has no imports to resolve beyond ./adapter.js.
const gluePath = path.join(dir, 'patchbridge_agent.js');
const glueText = await readFile(gluePath, 'utf8');
const glue = await transform(glueText, {
  format: 'esm',
  target: common.target,
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
});
// wasm-bindgen's first-line `/* @ts-self-types="./patchbridge_agent.d.ts" */` tells Deno/JSR where the types are.
const selfTypes = glueText.match(/^\/\* @ts-self-types="[^"]*" \*\/\n/)?.[0] ?? '';
await writeFile(gluePath, `${selfTypes}${glue.code}`);
