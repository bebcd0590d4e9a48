// OpenAI Chat Completions streaming responses, frame by frame, in the provider's real wire format
// (`data: <chat.completion.chunk JSON>` frames, a usage chunk with empty `choices` when the request asked for
// `stream_options.include_usage`, then `data: [DONE]`), as recorded from api.openai.com. Each builder returns a
// turn for the fake upstream (./fake-upstream.mjs).

let counter = 0;

function chunkFactory(id, model) {
  const created = 1764460800;
  return (delta, finishReason = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    system_fingerprint: 'fp_e2e',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
}

const frame = (value) => `data: ${JSON.stringify(value)}\n\n`;

/** Splits `text` into `pieces` roughly equal parts (at least one). */
export function split(text, pieces) {
  const size = Math.max(1, Math.ceil(text.length / pieces));
  const out = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [''];
}

function finish(id, model, finishReason, usage, make) {
  const frames = [frame(make({}, finishReason))];
  frames.push(frame({
    id, object: 'chat.completion.chunk', created: 1764460800, model, system_fingerprint: 'fp_e2e', choices: [],
    usage: {
      prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion,
      completion_tokens_details: { reasoning_tokens: 0 },
    },
  }));
  frames.push('data: [DONE]\n\n');
  return frames;
}

/**
 * A streamed text answer. `finishReason` `stop` (end-turn) or `length` (max-tokens); `pieces` content deltas;
 * `reasoning` streams `reasoning_content` first, as OpenAI-compatible gateways do.
 */
export function textTurn(text, { finishReason = 'stop', pieces = 4, usage = { prompt: 40, completion: 12 }, id, reasoning, ...timing } = {}) {
  counter += 1;
  const cid = id ?? `chatcmpl-e2e${counter}`;
  const model = 'gpt-4.1-mini-2025-04-14';
  const make = chunkFactory(cid, model);
  const frames = [frame(make({ role: 'assistant', content: '', refusal: null }))];
  if (reasoning !== undefined) {
    for (const part of split(reasoning, 2)) frames.push(frame(make({ reasoning_content: part })));
  }
  for (const part of split(text, pieces)) frames.push(frame(make({ content: part })));
  frames.push(...finish(cid, model, finishReason, usage, make));
  return { provider: 'openai-chat', frames, ...timing };
}

/**
 * Tool calls streamed as OpenAI does: the first fragment of each call carries `id`, `type` and the function
 * name with empty arguments, later fragments carry pieces of the arguments JSON; `finish_reason: tool_calls`.
 * `calls` = [{ id, name, arguments }] where `name` is the (sanitised) upstream tool name and `arguments` an
 * object or raw JSON text. An optional `text` is streamed before the calls.
 */
export function toolCallTurn(calls, { text, usage = { prompt: 60, completion: 20 }, id, ...timing } = {}) {
  counter += 1;
  const cid = id ?? `chatcmpl-e2e${counter}`;
  const model = 'gpt-4.1-mini-2025-04-14';
  const make = chunkFactory(cid, model);
  const frames = [];
  if (text !== undefined) {
    frames.push(frame(make({ role: 'assistant', content: '', refusal: null })));
    for (const part of split(text, 2)) frames.push(frame(make({ content: part })));
  }
  calls.forEach((call, index) => {
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
    const first = { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } };
    frames.push(frame(make(index === 0 && text === undefined
      ? { role: 'assistant', content: null, tool_calls: [first], refusal: null }
      : { tool_calls: [first] })));
    for (const part of split(args, 3)) frames.push(frame(make({ tool_calls: [{ index, function: { arguments: part } }] })));
  });
  frames.push(...finish(cid, model, 'tool_calls', usage, make));
  return { provider: 'openai-chat', frames, ...timing };
}
