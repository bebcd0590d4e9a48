// Shared helpers of the Node suites: scripted custom models that speak the neutral stream protocol
// (docs/protocol.md §3) and small utilities. Every suite imports the BUILT package from npm/.

export * as agent from '../../npm/index.js';

/** All five limits (DefaultAgentRuntime requires every one). */
export function fullLimits(overrides = {}) {
  return {
    maxModelCalls: 8,
    maxToolCalls: 16,
    maxDurationMs: 10_000,
    maxModelOutputCharacters: 50_000,
    maxToolResultCharacters: 20_000,
    ...overrides,
  };
}

/** Events of one assistant message with a text block (split into `deltas` pieces). */
export function textMessage(text, { stopReason = 'end-turn', modelState = null, usage, id, pieces = 2, reasoning } = {}) {
  const events = [id === undefined ? { type: 'message-start' } : { type: 'message-start', id }];
  let index = 0;
  if (reasoning !== undefined) {
    events.push({ type: 'block-start', index, block: { type: 'reasoning' } });
    events.push({ type: 'block-delta', index, delta: reasoning });
    events.push({ type: 'block-stop', index });
    index += 1;
  }
  events.push({ type: 'block-start', index, block: { type: 'text' } });
  const size = Math.max(1, Math.ceil(text.length / pieces));
  for (let i = 0; i < text.length; i += size) events.push({ type: 'block-delta', index, delta: text.slice(i, i + size) });
  events.push({ type: 'block-stop', index });
  const stop = { type: 'message-stop', stopReason, modelState };
  if (usage !== undefined) stop.usage = usage;
  events.push(stop);
  return events;
}

/** Events of one assistant message calling tools: `calls` = [{ callId, name, input | rawArguments }]. */
export function toolMessage(calls, { stopReason = 'tool-use', modelState = null, text } = {}) {
  const events = [{ type: 'message-start' }];
  let index = 0;
  if (text !== undefined) {
    events.push({ type: 'block-start', index, block: { type: 'text' } });
    events.push({ type: 'block-delta', index, delta: text });
    events.push({ type: 'block-stop', index });
    index += 1;
  }
  for (const call of calls) {
    const args = call.rawArguments ?? JSON.stringify(call.input ?? {});
    events.push({ type: 'block-start', index, block: { type: 'tool-call', callId: call.callId, name: call.name } });
    const half = Math.floor(args.length / 2);
    if (half > 0) events.push({ type: 'block-delta', index, delta: args.slice(0, half) });
    events.push({ type: 'block-delta', index, delta: args.slice(half) });
    events.push({ type: 'block-stop', index });
    index += 1;
  }
  events.push({ type: 'message-stop', stopReason, modelState });
  return events;
}

/**
 * A custom model answering call i with `turns[i]` (an array of events, or a function (request, signal) returning
 * an async iterable). Records every request it receives in `model.requests`.
 */
export function scriptedModel(turns) {
  const model = {
    requests: [],
    signals: [],
    stream(request, signal) {
      const i = model.requests.length;
      model.requests.push(request);
      model.signals.push(signal);
      const turn = turns[i];
      if (turn === undefined) throw new Error(`scripted model has no turn ${i}`);
      if (typeof turn === 'function') return turn(request, signal);
      return (async function* () { for (const event of turn) yield event; })();
    },
  };
  return model;
}

/** A model stream that never produces anything and ignores abort. */
export function hangingStream() {
  return (async function* () { await new Promise(() => {}); })();
}

/** A tool definition with an execute recording its calls. */
export function recordingTool(name, execute, extra = {}) {
  const tool = {
    name,
    description: `test tool ${name}`,
    inputSchema: { type: 'object', properties: {} },
    readOnly: true,
    calls: [],
    execute(args, ctx) {
      tool.calls.push({ args, ctx });
      return execute(args, ctx);
    },
    ...extra,
  };
  return tool;
}

/** `{ toolCallId, content, isError }` for `ctx.callId`. */
export function ok(ctx, content = 'ok', isError = false) {
  return { toolCallId: ctx.callId, content, isError };
}

export function userInput(text, extra = {}) {
  return { messages: [{ id: 'u1', role: 'user', blocks: [{ type: 'text', text }] }], modelState: null, ...extra };
}

export const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Resolves once `predicate()` is true (polling on macrotasks), or rejects after `ms`. */
export async function until(predicate, ms = 2000) {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > ms) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
