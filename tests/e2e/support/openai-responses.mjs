// OpenAI Responses streaming responses, event by event, in the provider's real wire format (`event: <type>` plus
// `data: <JSON>` with `sequence_number`): response.created, output items added / done (reasoning with summary
// parts and `encrypted_content`, message with output_text parts, function_call with argument deltas), then
// response.completed or response.incomplete. Each builder returns a turn for ./fake-upstream.mjs.

import { split } from './openai-chat.mjs';

let counter = 0;

/**
 * One response. `items` in order:
 *   { type: 'reasoning', summary: [text, ...], encrypted }  — shown summary + encrypted reasoning that must be
 *                                                             sent back verbatim (it lives in the ModelState)
 *   { type: 'message', text }
 *   { type: 'function_call', callId, name, arguments }      — `name` is the (sanitised) upstream tool name
 * `incomplete`: end with response.incomplete (reason max_output_tokens) instead of response.completed.
 */
export function responseTurn(items, { incomplete = false, id, usage = { input: 80, output: 40 }, ...timing } = {}) {
  counter += 1;
  const rid = id ?? `resp_e2e${String(counter).padStart(4, '0')}`;
  let seq = 0;
  const frames = [];
  const emit = (type, data) => {
    frames.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq, ...data })}\n\n`);
    seq += 1;
  };
  const response = (status, output) => ({
    id: rid, object: 'response', created_at: 1764480000, status, model: 'o4-mini-2025-04-16', output,
    ...(status === 'incomplete' ? { incomplete_details: { reason: 'max_output_tokens' } } : {}),
    usage: status === 'in_progress' ? null : {
      input_tokens: usage.input, input_tokens_details: { cached_tokens: 0 },
      output_tokens: usage.output, output_tokens_details: { reasoning_tokens: Math.floor(usage.output / 2) },
      total_tokens: usage.input + usage.output,
    },
  });
  emit('response.created', { response: response('in_progress', []) });
  emit('response.in_progress', { response: response('in_progress', []) });
  const done = [];
  items.forEach((item, output_index) => {
    const itemId = `${item.type.slice(0, 2)}_${rid}_${output_index}`;
    switch (item.type) {
      case 'reasoning': {
        emit('response.output_item.added', { output_index, item: { id: itemId, type: 'reasoning', summary: [] } });
        item.summary.forEach((text, summary_index) => {
          emit('response.reasoning_summary_part.added', { item_id: itemId, output_index, summary_index, part: { type: 'summary_text', text: '' } });
          for (const delta of split(text, 2)) {
            emit('response.reasoning_summary_text.delta', { item_id: itemId, output_index, summary_index, delta });
          }
          emit('response.reasoning_summary_text.done', { item_id: itemId, output_index, summary_index, text });
          emit('response.reasoning_summary_part.done', { item_id: itemId, output_index, summary_index, part: { type: 'summary_text', text } });
        });
        const full = { id: itemId, type: 'reasoning', summary: item.summary.map((text) => ({ type: 'summary_text', text })), encrypted_content: item.encrypted };
        emit('response.output_item.done', { output_index, item: full });
        done.push(full);
        break;
      }
      case 'message': {
        emit('response.output_item.added', { output_index, item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
        emit('response.content_part.added', { item_id: itemId, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
        for (const delta of split(item.text, 3)) {
          emit('response.output_text.delta', { item_id: itemId, output_index, content_index: 0, delta, logprobs: [] });
        }
        emit('response.output_text.done', { item_id: itemId, output_index, content_index: 0, text: item.text, logprobs: [] });
        const part = { type: 'output_text', text: item.text, annotations: [] };
        emit('response.content_part.done', { item_id: itemId, output_index, content_index: 0, part });
        const full = { id: itemId, type: 'message', status: incomplete ? 'incomplete' : 'completed', role: 'assistant', content: [part] };
        emit('response.output_item.done', { output_index, item: full });
        done.push(full);
        break;
      }
      case 'function_call': {
        const args = typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments);
        emit('response.output_item.added', { output_index, item: { id: itemId, type: 'function_call', status: 'in_progress', arguments: '', call_id: item.callId, name: item.name } });
        for (const delta of split(args, 3)) emit('response.function_call_arguments.delta', { item_id: itemId, output_index, delta });
        emit('response.function_call_arguments.done', { item_id: itemId, output_index, arguments: args });
        const full = { id: itemId, type: 'function_call', status: 'completed', arguments: args, call_id: item.callId, name: item.name };
        emit('response.output_item.done', { output_index, item: full });
        done.push(full);
        break;
      }
      default:
        throw new Error(`unknown item type ${item.type}`);
    }
  });
  if (incomplete) emit('response.incomplete', { response: response('incomplete', done) });
  else emit('response.completed', { response: response('completed', done) });
  // `outputItems`: the finished items as the provider reported them (what must come back verbatim).
  return { provider: 'openai-responses', frames, outputItems: done, ...timing };
}
