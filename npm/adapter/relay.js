// The relay transport: fetch plus SSE framing for the relay protocol (docs/protocol.md §2, §6). Status codes and
// error bodies go to Rust unchanged (core/relay.rs maps them); every failure, a throwing `fetch` or headers
// provider included, is a rejection of the returned promise.
import { resolveHeaders } from './headers.js';

/**
 * One JSON request to the relay. Resolves to `[status, bodyText]` for any HTTP status (Rust maps statuses and
 * error bodies to codes); rejects only when the request could not be made at all.
 * @param {string} method
 * @param {string} url
 * @param {Parameters<typeof resolveHeaders>[0]} headersProvider
 * @param {string | null | undefined} bodyText
 * @param {AbortSignal | null | undefined} signal
 * @returns {Promise<[number, string]>}
 */
export async function relayRequest(method, url, headersProvider, bodyText, signal) {
  const headers = await resolveHeaders(headersProvider);
  /** @type {Record<string, string>} */
  const requestHeaders = { accept: 'application/json', ...headers };
  /** @type {RequestInit} */
  const init = { method, headers: requestHeaders, signal: signal ?? undefined };
  if (bodyText !== undefined && bodyText !== null) {
    requestHeaders['content-type'] = 'application/json';
    init.body = bodyText;
  }
  const response = await fetch(url, init);
  return [response.status, await response.text()];
}

/**
 * POST {endpoint}/model and frame its text/event-stream body into JSON payloads. Resolves to
 * `[status, body]`: for 2xx `body` is an async iterable of `data:` payloads (JSON text, for a raw Pump); for any
 * other status it is the error body text.
 * @param {string} url
 * @param {Parameters<typeof resolveHeaders>[0]} headersProvider
 * @param {string} bodyText
 * @param {AbortSignal | null | undefined} signal
 * @returns {Promise<[number, string | AsyncGenerator<string>]>}
 */
export async function relayStream(url, headersProvider, bodyText, signal) {
  const headers = await resolveHeaders(headersProvider);
  const response = await fetch(url, {
    method: 'POST',
    headers: { accept: 'text/event-stream', ...headers, 'content-type': 'application/json' },
    body: bodyText,
    signal: signal ?? undefined,
  });
  if (response.status < 200 || response.status > 299) return [response.status, await response.text()];
  return [response.status, sseData(/** @type {ReadableStream<BufferSource>} */ (response.body))];
}

/**
 * The `data:` payloads of a text/event-stream body, one string per event.
 * @param {ReadableStream<BufferSource>} body
 * @returns {AsyncGenerator<string>}
 */
async function* sseData(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  /** @type {string[]} */
  let data = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let start = 0;
      for (;;) {
        const nl = buffer.indexOf('\n', start);
        if (nl < 0) break;
        let line = buffer.slice(start, nl);
        start = nl + 1;
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') {
          if (data.length > 0) { yield data.join('\n'); data = []; }
        } else if (line.startsWith('data:')) {
          data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
        }
        // `event:`, `id:`, `retry:` and comments carry nothing the JSON payload does not (docs/protocol.md §3).
      }
      buffer = buffer.slice(start);
    }
    if (data.length > 0) yield data.join('\n');
  } finally {
    reader.cancel().catch(() => {});
  }
}
