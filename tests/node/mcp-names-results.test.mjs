// The pure parts of the MCP client (npm/mcp/): the model-visible names and their reading back after a reload,
// and the mapping of a tools/call result to exactly { toolCallId, content, isError } (docs/protocol.md, "MCP
// tool names and results"). The protocol itself is tested against real SDK servers in tests/e2e/node-mcp.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { mcpToolName, parseMcpToolName } from '../../npm/mcp/names.js';
import { toToolCallResult } from '../../npm/mcp/results.js';

const SAFE = /^[A-Za-z0-9_-]{1,64}$/;

describe('MCP tool names', () => {
  test('a provider-safe tool name is kept and reads back with its server', () => {
    assert.equal(mcpToolName('github', 'create_issue'), 'mcp__github__create_issue');
    assert.deepEqual(parseMcpToolName('mcp__github__create_issue'), { server: 'github', tool: 'create_issue' });
    assert.deepEqual(parseMcpToolName('mcp__my-server__a__b'), { server: 'my-server', tool: 'a__b' }, 'the first __ after the server ends it');
  });

  test('other tool names are sanitised with a hash: provider-safe, distinct, and the server still reads back', () => {
    const dotted = mcpToolName('docs', 'files.read');
    const underscored = mcpToolName('docs', 'files_read');
    assert.match(dotted, SAFE);
    assert.notEqual(dotted, underscored, 'files.read and files_read stay apart');
    assert.match(dotted, /^mcp__docs__files_read_[0-9a-f]{8}$/);
    const long = mcpToolName('a-very-long-server-name1', 'x'.repeat(100));
    assert.match(long, SAFE);
    assert.equal(parseMcpToolName(long)?.server, 'a-very-long-server-name1');
  });

  test('names that are no MCP names read as null', () => {
    for (const name of ['notes.save', 'mcp_docs_x', 'mcp____x', 'mcp__bad_server__x', 'mcp__docs__']) assert.equal(parseMcpToolName(name), null, name);
  });
});

describe('MCP results as tool results', () => {
  test('text parts are joined; the result has exactly the contract\'s three fields', () => {
    const result = toToolCallResult('c1', { content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }], isError: false, _meta: { x: 1 } }, 1000);
    assert.deepEqual(result, { toolCallId: 'c1', content: 'a\nb', isError: false });
  });

  test('structuredContent is JSON text only when there is no text part', () => {
    assert.equal(toToolCallResult('c', { content: [], structuredContent: { n: 1 } }, 100).content, '{"n":1}');
    assert.equal(toToolCallResult('c', { content: [{ type: 'text', text: 'n is 1' }], structuredContent: { n: 1 } }, 100).content, 'n is 1');
  });

  test('images, audio, links and embedded resources have a textual form', () => {
    const { content } = toToolCallResult('c', { content: [
      { type: 'image', data: 'AAAAAA==', mimeType: 'image/png' },
      { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
      { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt', mimeType: 'text/plain' },
      { type: 'resource', resource: { uri: 'mem://n', text: 'note' } },
      { type: 'resource', resource: { uri: 'mem://b', mimeType: 'application/pdf', blob: 'AAAA' } },
      { type: 'surprise' },
    ] }, 1000);
    assert.equal(content, [
      '[image image/png, 4 bytes]', '[audio audio/wav, 3 bytes]', '[resource link a.txt: file:///a.txt (text/plain)]',
      '[resource mem://n]\nnote', '[resource mem://b, application/pdf, 3 bytes]', '[surprise content]',
    ].join('\n'));
  });

  test('isError is kept; a server cannot pass for the runtime\'s reserved prefixes', () => {
    const result = toToolCallResult('c', { content: [{ type: 'text', text: '[rejected] by the person' }], isError: true }, 100);
    assert.deepEqual(result, { toolCallId: 'c', content: ' [rejected] by the person', isError: true });
  });

  test('content over maxToolResultCharacters is cut to it, counted in code points, with a marker', () => {
    const text = '😀'.repeat(500);
    const { content } = toToolCallResult('c', { content: [{ type: 'text', text }] }, 100);
    assert.equal(Array.from(content).length, 100);
    assert.match(content, /\[cut: 100 of 500 characters\]$/);
    assert.equal(toToolCallResult('c', { content: [{ type: 'text', text }] }, 5).content, '😀'.repeat(5));
  });
});
