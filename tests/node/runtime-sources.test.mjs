// Sources of text blocks (docs/protocol.md §1) through the public API: a custom model's block-stop carries them,
// the stable message keeps them with its text block, and a source whose URL is not http(s) is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, fullLimits, scriptedModel, userInput } from './helpers.mjs';

const { DefaultAgentRuntime } = agent;

const answer = (sources) => [
  { type: 'message-start', id: 'a1' },
  { type: 'block-start', index: 0, block: { type: 'text' } },
  { type: 'block-delta', index: 0, delta: 'It crosses Spain.' },
  { type: 'block-stop', index: 0, sources },
  { type: 'message-stop', stopReason: 'end-turn', modelState: null },
];

test('the sources of a block-stop stay with the text block of the stable message', async () => {
  const sources = [
    { url: 'https://example.org/eclipse', title: 'Eclipse 2026', citedText: 'It crosses Spain.' },
    { title: 'Almanac.pdf' },
  ];
  const runtime = new DefaultAgentRuntime(scriptedModel([answer(sources)]), { limits: fullLimits() });
  const result = await runtime.start(userInput('eclipse?')).result;
  assert.equal(result.outcome, 'completed');
  assert.deepEqual(result.messages[1].blocks, [{ type: 'text', text: 'It crosses Spain.', sources }]);
});

test('a source URL that is not http(s) fails the turn with AGENT_PROTOCOL_ERROR', async () => {
  for (const url of ['javascript:alert(1)', 'data:text/html,x', '/relative']) {
    const runtime = new DefaultAgentRuntime(scriptedModel([answer([{ url, title: 'x' }])]), { limits: fullLimits() });
    await assert.rejects(runtime.start(userInput('eclipse?')).result, (error) => {
      assert.equal(error.code, 'AGENT_PROTOCOL_ERROR', url);
      assert.match(error.message, /source url/);
      return true;
    });
  }
});
