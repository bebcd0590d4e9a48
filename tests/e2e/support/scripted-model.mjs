// A custom model (`createAgentController({ model })`, the contract's `{ stream(request, signal) }`) that plays
// scripted turns in order and records every request: the MCP suites that need no provider translation drive the
// built controller with it instead of a relay. A turn is `toolCalls([{ id, name, arguments }])` (stop reason
// tool-use) or `say(text)` (end-turn); a request with nothing scripted fails the model call.

/** @param {{ id: string, name: string, arguments: object }[]} calls */
export const toolCalls = (calls) => ({ calls });
/** @param {string} text */
export const say = (text) => ({ text });

export function scriptedModel() {
  /** @type {({ calls: { id: string, name: string, arguments: object }[] } | { text: string })[]} */
  const turns = [];
  /** @type {any[]} */
  const requests = [];
  const model = {
    async *stream(/** @type {any} */ request) {
      requests.push(request);
      const turn = turns.shift();
      if (!turn) throw new Error('scripted model: no turn scripted for this request');
      yield { type: 'message-start' };
      if ('calls' in turn) {
        for (const [index, call] of turn.calls.entries()) {
          yield { type: 'block-start', index, block: { type: 'tool-call', callId: call.id, name: call.name } };
          yield { type: 'block-delta', index, delta: JSON.stringify(call.arguments) };
          yield { type: 'block-stop', index };
        }
        yield { type: 'message-stop', stopReason: 'tool-use', modelState: null };
      } else {
        yield { type: 'block-start', index: 0, block: { type: 'text' } };
        yield { type: 'block-delta', index: 0, delta: turn.text };
        yield { type: 'block-stop', index: 0 };
        yield { type: 'message-stop', stopReason: 'end-turn', modelState: null };
      }
    },
  };
  return {
    model,
    requests,
    /** Queues turns, played one per model request. */
    script: (/** @type {any[]} */ ...next) => { turns.push(...next); },
    /** The tool names the model was offered in request `i`. */
    toolNames: (/** @type {number} */ i) => requests[i].tools.map((/** @type {any} */ t) => t.name).sort(),
  };
}
