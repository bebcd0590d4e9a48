// A README's runnable snippets: fenced code blocks whose info string names a file (```js title="public/app.js"),
// read from README.md itself so that what the consumer test runs is exactly what a reader copies.
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { ROOT } from '../e2e/support/relay.mjs';

/** Every titled block of a README (README.md by default) as a Map from its title (a path in the reader's project) to its text. */
export function readmeFiles(readme = path.join(ROOT, 'README.md')) {
  const text = readFileSync(readme, 'utf8');
  const files = new Map();
  const fence = /^```[\w-]* title="([^"]+)"\n([\s\S]*?)^```$/gm;
  for (const [, title, body] of text.matchAll(fence)) {
    if (files.has(title)) throw new Error(`${readme} has two blocks titled ${title}`);
    files.set(title, body);
  }
  return files;
}

/** The named blocks (all must exist), for writing into a project folder. */
export function pick(files, names) {
  return names.map((name) => {
    const body = files.get(name);
    if (body === undefined) throw new Error(`no README block titled ${name} (found: ${[...files.keys()].join(', ')})`);
    return [name, body];
  });
}
