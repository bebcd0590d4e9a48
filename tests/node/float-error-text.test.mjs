// The error path scripts/wasm-dead-float-display.mjs reasons about, through the shipped wasm: serde's
// "invalid type" text for a float where an integer belongs. serde_json formats the float itself (its
// `JsonUnexpected`); were that ever handed to serde's Display, whose float formatting the build drops, this
// would be a `RuntimeError: unreachable` trap instead of the text. Other kinds still go through serde's Display.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, fullLimits, userInput } from './helpers.mjs';

const { DefaultAgentRuntime, AgentError } = agent;

/** Runs one execution whose model streams `events`; the settled result or the AgentError it rejected with. */
async function run(events) {
  const model = { stream() { return (async function* () { yield* events; })(); } };
  try {
    return await new DefaultAgentRuntime(model, { limits: fullLimits() }).start(userInput('go')).result;
  } catch (error) {
    return error;
  }
}

const text = [
  { type: 'message-start' },
  { type: 'block-start', index: 0, block: { type: 'text' } },
  { type: 'block-delta', index: 0, delta: 'hi' },
  { type: 'block-stop', index: 0 },
];
const stop = (usage) => ({ type: 'message-stop', stopReason: 'end-turn', modelState: null, usage });

test('a float where an integer belongs is reported with the float written out, not a trap', async () => {
  for (const [value, written] of [[1.5, '1.5'], [1e300, '1e+300'], [-0.25, '-0.25']]) {
    const error = await run([...text, stop({ inputTokens: value, outputTokens: 2 })]);
    assert.ok(error instanceof AgentError, `${value}: ${error}`);
    assert.equal(error.code, 'AGENT_PROTOCOL_ERROR');
    assert.match(error.message, new RegExp(`invalid type: floating point \`${written.replace(/[+.]/g, '\\$&')}\`, expected u64`));
  }
  const index = await run([{ type: 'message-start' }, { type: 'block-start', index: 0.5, block: { type: 'text' } }]);
  assert.match(index.message, /invalid type: floating point `0\.5`, expected u32/);
});

test('the other kinds of serde\'s invalid-type text still read through serde\'s own Display', async () => {
  const error = await run([...text, stop({ inputTokens: 'many', outputTokens: 2 })]);
  assert.equal(error.code, 'AGENT_PROTOCOL_ERROR');
  assert.match(error.message, /invalid type: string "many", expected u64/);
  const fine = await run([...text, stop({ inputTokens: 1, outputTokens: 2 })]);
  assert.equal(fine.outcome, 'completed', 'the runtime still works after those errors');
});
