// A page that offers tools through the WebMCP draft API (`document.modelContext`), provided either natively
// (Chromium with --enable-features=WebMCP) or by @mcp-b/webmcp-polyfill (injected by the test before this runs).
// `page.lookup` is read-only (annotations.readOnlyHint); `page.erase` changes the page and must ask first.
window.erased = [];
const context = document.modelContext ?? navigator.modelContext;
await context.registerTool({
  name: 'page.lookup',
  description: 'Look up how many items match a word.',
  inputSchema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
  annotations: { readOnlyHint: true },
  execute: async ({ word }) => `found 3 items for ${word}`,
});
await context.registerTool({
  name: 'page.erase',
  description: 'Erase an item from the page.',
  inputSchema: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] },
  execute: async ({ item }) => { window.erased.push(item); return `erased ${item}`; },
});
await import('/npm/widget.js');
const el = document.createElement('patchbridge-agent');
el.setAttribute('endpoint', '/api');
el.headers = { 'x-patchbridge-user': new URLSearchParams(location.search).get('user') ?? 'webmcp' };
document.body.append(el);
window.pageReady = true;
