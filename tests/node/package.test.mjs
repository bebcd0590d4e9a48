// The package surface: exports, the error class, and errors.js naming exactly the core's closed set of codes
// (npm/generated/error-codes.* are generated from the Rust codes; a Rust test keeps them equal).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { agent } from './helpers.mjs';

test('the package exports exactly the generated error codes, each as a constant naming itself', () => {
  const generated = readFileSync(new URL('../../npm/generated/error-codes.d.ts', import.meta.url), 'utf8');
  const declared = [...generated.matchAll(/^export declare const ([A-Z_]+): '([A-Z_]+)';$/gm)]
    .map(([, name, value]) => { assert.equal(name, value, `declaration of ${name}`); return name; })
    .sort();
  assert.ok(declared.length > 10, 'the generated declarations name the codes');
  assert.deepEqual(Object.keys(agent.ErrorCodes).sort(), declared);
  for (const code of declared) {
    assert.equal(agent[code], code, `constant ${code}`);
    assert.equal(agent.ErrorCodes[code], code, `ErrorCodes.${code}`);
  }
});

test('AgentError is an Error with code, limit, details and cause', () => {
  const cause = new Error('root');
  const error = new agent.AgentError('AGENT_LIMIT_EXCEEDED', 'too many', { limit: 'maxToolCalls', details: { n: 3 }, cause });
  assert.ok(error instanceof Error);
  assert.equal(error.name, 'AgentError');
  assert.equal(error.code, 'AGENT_LIMIT_EXCEEDED');
  assert.equal(error.limit, 'maxToolCalls');
  assert.deepEqual(error.details, { n: 3 });
  assert.equal(error.cause, cause);
  assert.equal(agent.isAgentError(error, 'AGENT_LIMIT_EXCEEDED'), true);
  assert.equal(agent.isAgentError(new Error('x')), false);
});

test('the package exports the documented API and ships its files', () => {
  for (const name of ['createAgentController', 'DefaultAgentRuntime', 'AgentExecution', 'AgentController', 'DEFAULT_LIMITS', 'AgentError']) {
    assert.ok(name in agent, name);
  }
  const manifest = JSON.parse(readFileSync(new URL('../../npm/package.json', import.meta.url), 'utf8'));
  assert.equal(manifest.name, '@patchbridge/agent');
  assert.equal(manifest.type, 'module');
  for (const file of manifest.files) readFileSync(new URL(`../../npm/${file}`, import.meta.url));
});

test('the runtime classes have the documented methods and getters, as class members', () => {
  const members = {
    AgentController: ['subscribe', 'getState', 'send', 'retry', 'regenerate', 'editLastMessage', 'setRuntimeOptions',
      'abort', 'approveTool', 'rejectTool', 'registerTool', 'unregisterTool', 'getToolInspectionSource',
      'loadConversation', 'newConversation', 'listConversations', 'renameConversation', 'deleteConversation',
      'getModelState', 'destroy', 'free'],
    DefaultAgentRuntime: ['get limits', 'start', 'free'],
    AgentExecution: ['get id', 'get result', 'get settled', 'get pendingInterrupt', 'cancel', 'respond', 'free'],
  };
  for (const [name, list] of Object.entries(members)) {
    const { prototype } = agent[name];
    assert.equal(Object.keys(prototype).length, 0, `${name}: no enumerable members`);
    for (const member of list) {
      const getter = member.startsWith('get ');
      const descriptor = Object.getOwnPropertyDescriptor(prototype, getter ? member.slice(4) : member);
      assert.equal(typeof (getter ? descriptor?.get : descriptor?.value), 'function', `${name}.${member}`);
    }
  }
});

test('bundling the package with esbuild gives no warning (one import-object key per JS module in the glue)', async () => {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('../../npm/index.js', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  assert.deepEqual(result.errors, []);
  assert.deepEqual(result.warnings.map((w) => `${w.text} (${w.location?.file}:${w.location?.line})`), []);
});
