// A custom model for <patchbridge-agent>: an object with `stream(request, signal)` returning an async iterable of
// the runtime's stream events (StreamEvent in @patchbridge/agent's index.d.ts). This one is a rule-based echo that
// runs in the page — no server, no AI — to show the event shapes a real adapter must produce:
//   message-start, then per block block-start / block-delta… / block-stop, then message-stop with its stopReason
//   and `modelState: null` (this model keeps no provider state between calls).
// It streams its text word by word, and when the person says "stamp <label>" it asks for the page tool
// `stamps.add` once; after the tool's result comes back it says what the tool answered and ends the turn.

/** Resolves after `ms`, or rejects when the turn is stopped (the runtime aborts `signal`). */
function pause(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
  });
}

const textOf = (message) => message.blocks.filter((b) => b.type === 'text').map((b) => b.text).join(' ').trim();

/** What to say and, maybe, which tool to call for the last message of the request. */
function decide(request) {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') {
    const results = last.blocks.filter((b) => b.type === 'tool-result');
    const said = results.map((r) => (r.isError ? `the tool refused (${r.content})` : `the tool answered “${r.content}”`)).join('; ');
    return { text: `Done: ${said}. (Echo model in this page, not AI.)` };
  }
  const text = last ? textOf(last) : '';
  const stamp = /^stamp\s+(.+)$/i.exec(text);
  if (stamp && request.tools.some((t) => t.name === 'stamps.add')) {
    return { text: `I will ask to put a “${stamp[1]}” stamp on the page.`, call: { name: 'stamps.add', input: { label: stamp[1] } } };
  }
  return { text: `You said: “${text}”. I am an echo model running in this page, not AI. Say “stamp gold” to see a tool.` };
}

let calls = 0;

/** @type {import('../../npm/index.js').AgentModel} */
export const echoModel = {
  async *stream(request, signal) {
    const { text, call } = decide(request);
    calls += 1;
    yield { type: 'message-start' };
    yield { type: 'block-start', index: 0, block: { type: 'text' } };
    // Word-sized deltas with a short pause, so the element shows the answer growing.
    for (const word of text.split(/(?<= )/)) {
      await pause(40, signal);
      yield { type: 'block-delta', index: 0, delta: word };
    }
    yield { type: 'block-stop', index: 0 };
    if (call) {
      const json = JSON.stringify(call.input);
      const half = Math.floor(json.length / 2);
      yield { type: 'block-start', index: 1, block: { type: 'tool-call', callId: `echo-call-${calls}`, name: call.name } };
      // Tool arguments stream as JSON text in pieces; the runtime validates the whole object at block-stop.
      yield { type: 'block-delta', index: 1, delta: json.slice(0, half) };
      await pause(40, signal);
      yield { type: 'block-delta', index: 1, delta: json.slice(half) };
      yield { type: 'block-stop', index: 1 };
    }
    yield {
      type: 'message-stop',
      stopReason: call ? 'tool-use' : 'end-turn',
      usage: { inputTokens: request.messages.length, outputTokens: text.split(' ').length },
      modelState: null,
    };
  },
};
