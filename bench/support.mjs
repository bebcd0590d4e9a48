// What the browser benchmarks share (bench/ready, bench/widget): a local static server that answers with the
// right content type (`.wasm` as application/wasm, so `instantiateStreaming` runs as on a real server), and the
// Debian Chromium they drive, launched as the browser tests launch it.
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

const TYPES = {
  '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html',
  '.css': 'text/css', '.map': 'application/json',
};

/** Answers `res` with `body` typed by `file`'s extension. */
function sendTyped(res, file, body) {
  res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' }).end(body);
}

/** Answers `res` with the file (its bytes, or `transform(bytes)`), or 404 when it cannot be read. */
export async function sendFile(res, file, transform = (body) => body) {
  try {
    sendTyped(res, file, transform(await readFile(file)));
  } catch {
    res.writeHead(404).end();
  }
}

/** Starts `handler` on a free loopback port: `{ server, base }` with `base` ending in `/`. */
export async function serve(handler) {
  const server = http.createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${server.address().port}/` };
}

// Chromium is launched exactly as the browser tests launch it.
export { launchChromium } from '../tests/e2e/support/browser.mjs';
