// Anthropic Messages streaming responses, event by event, in the provider's real wire format (`event: <type>`
// plus `data: <JSON>` frames: message_start, content_block_start / _delta / _stop with text_delta,
// thinking_delta, signature_delta and input_json_delta, ping, message_delta with stop_reason and usage,
// message_stop), as recorded from api.anthropic.com. Each builder returns a turn for ./fake-upstream.mjs.

import { split } from './openai-chat.mjs';

let counter = 0;

const frame = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/**
 * One assistant message. `blocks` in order:
 *   { type: 'thinking', thinking, signature }   — extended thinking (shown reasoning + a signature that must be
 *                                                 sent back verbatim: it lives in the ModelState)
 *   { type: 'text', text, citations? }          — `citations`: web-search citation objects (citations_delta)
 *   { type: 'tool_use', id, name, input }        — `name` is the (sanitised) upstream tool name
 *   { type: 'server_tool_use', id, input }        — Anthropic's own web search running (`name: web_search`)
 *   { type: 'web_search_tool_result', toolUseId, results } — its results: [{ title, url }] (sent whole in the
 *                                                 block's start, with `encrypted_content` and `page_age`)
 * `stopReason`: end_turn, tool_use, max_tokens, …
 */
export function messageTurn(blocks, { stopReason, id, usage = { input: 50, output: 30 }, ...timing } = {}) {
  counter += 1;
  const mid = id ?? `msg_e2e${String(counter).padStart(4, '0')}`;
  const stop = stopReason ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const frames = [frame('message_start', {
    message: {
      id: mid, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [],
      stop_reason: null, stop_sequence: null,
      usage: { input_tokens: usage.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
    },
  })];
  frames.push(frame('ping', {}));
  blocks.forEach((block, index) => {
    switch (block.type) {
      case 'thinking':
        frames.push(frame('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
        for (const part of split(block.thinking, 2)) {
          frames.push(frame('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: part } }));
        }
        frames.push(frame('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } }));
        break;
      case 'text':
        // A text block that cites (web search) starts with `citations: []` and gets one citations_delta per source.
        frames.push(frame('content_block_start', { index, content_block: { type: 'text', text: '', ...(block.citations ? { citations: [] } : {}) } }));
        for (const citation of block.citations ?? []) {
          frames.push(frame('content_block_delta', { index, delta: { type: 'citations_delta', citation } }));
        }
        for (const part of split(block.text, block.pieces ?? 3)) {
          frames.push(frame('content_block_delta', { index, delta: { type: 'text_delta', text: part } }));
        }
        break;
      case 'tool_use': {
        frames.push(frame('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }));
        frames.push(frame('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } }));
        for (const part of split(JSON.stringify(block.input), 3)) {
          frames.push(frame('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: part } }));
        }
        break;
      }
      case 'server_tool_use':
        frames.push(frame('content_block_start', { index, content_block: { type: 'server_tool_use', id: block.id, name: 'web_search', input: {} } }));
        frames.push(frame('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }));
        break;
      case 'web_search_tool_result': {
        const content = block.results.map((r, n) => ({ type: 'web_search_result', title: r.title, url: r.url, encrypted_content: `EqgfCioIARgB${n}`, page_age: null }));
        frames.push(frame('content_block_start', { index, content_block: { type: 'web_search_tool_result', tool_use_id: block.toolUseId, content } }));
        break;
      }
      default:
        throw new Error(`unknown block type ${block.type}`);
    }
    frames.push(frame('content_block_stop', { index }));
  });
  frames.push(frame('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output } }));
  frames.push(frame('message_stop', {}));
  return { provider: 'anthropic-messages', frames, ...timing };
}
