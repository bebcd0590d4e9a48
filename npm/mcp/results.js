//! An MCP `tools/call` result as the contract's ToolCallResult: exactly `{ toolCallId, content, isError }`
//! (docs/protocol.md, "MCP tool results"). Text parts are joined with a newline; `structuredContent` is its JSON
//! text when there is no text part; other parts are one bracketed line each:
//!   image / audio          `[image image/png, 1234 bytes]`, `[audio audio/wav, 1234 bytes]` (the data is not sent on)
//!   resource_link          `[resource link <name>: <uri> (<mimeType>)]`
//!   embedded resource      its text after a `[resource <uri>]` line, or `[resource <uri>, <mimeType>, N bytes]`
//!   anything else          `[<type> content]`
//! A content that would begin like the runtime's own results (`[not run] `, `[rejected] `,
//! `[invalid arguments] `) gets one leading space, so a server cannot pass for the runtime. A content over
//! `maxToolResultCharacters` is cut to it, ending with `[cut: N of M characters]`, as the runtime's own texts are.

const RESERVED = ['[not run] ', '[rejected] ', '[invalid arguments] '];

/** Bytes of base64 data (approximate for odd padding). @param {unknown} data */
const base64Bytes = (data) => (typeof data === 'string' ? Math.floor((data.replace(/=+$/, '').length * 3) / 4) : 0);

/** @param {any} part @returns {string | null} the text of a text part, or null */
const textOf = (part) => (part && part.type === 'text' && typeof part.text === 'string' ? part.text : null);

/** @param {any} part */
function describePart(part) {
  const type = part && typeof part.type === 'string' ? part.type : 'unknown';
  switch (type) {
    case 'image': case 'audio':
      return `[${type} ${String(part.mimeType ?? 'unknown type')}, ${base64Bytes(part.data)} bytes]`;
    case 'resource_link':
      return `[resource link ${String(part.name ?? '')}: ${String(part.uri ?? '')}${part.mimeType ? ` (${String(part.mimeType)})` : ''}]`;
    case 'resource': {
      const resource = part.resource ?? {};
      if (typeof resource.text === 'string') return `[resource ${String(resource.uri ?? '')}]\n${resource.text}`;
      return `[resource ${String(resource.uri ?? '')}, ${String(resource.mimeType ?? 'unknown type')}, ${base64Bytes(resource.blob)} bytes]`;
    }
    default:
      return `[${type} content]`;
  }
}

/**
 * `text` cut to at most `max` characters (Unicode code points, as the runtime counts them).
 * @param {string} text
 * @param {number} max
 */
export function cutToCharacters(text, max) {
  if (text.length <= max) return text;
  const points = Array.from(text);
  if (points.length <= max) return text;
  const marker = `\n[cut: ${max} of ${points.length} characters]`;
  if (marker.length > max) return points.slice(0, max).join('');
  return points.slice(0, max - marker.length).join('') + marker;
}

/**
 * @param {string} callId
 * @param {any} result a CallToolResult the SDK has parsed
 * @param {number} maxCharacters maxToolResultCharacters of the turn
 * @returns {{ toolCallId: string, content: string, isError: boolean }}
 */
export function toToolCallResult(callId, result, maxCharacters) {
  const parts = Array.isArray(result?.content) ? result.content : [];
  const texts = parts.map(textOf);
  const lines = [];
  if (!texts.some((/** @type {string | null} */ t) => t !== null) && result?.structuredContent !== undefined) {
    lines.push(JSON.stringify(result.structuredContent));
  }
  parts.forEach((/** @type {any} */ part, /** @type {number} */ i) => { lines.push(texts[i] ?? describePart(part)); });
  let content = lines.join('\n');
  if (RESERVED.some((prefix) => content.startsWith(prefix))) content = ` ${content}`;
  return { toolCallId: callId, content: cutToCharacters(content, maxCharacters), isError: result?.isError === true };
}
