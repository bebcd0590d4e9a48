// The mcp-server example's script: the element's only tools come from the MCP server `notes`, reached through
// the relay's passthrough at /api/mcp/notes (same origin, so the page's `connect-src 'self'` covers it). The MCP
// client is downloaded only because `mcpServers` is set.

const agent = document.querySelector('patchbridge-agent');
// The relay of ./relay.json runs in development identity mode: the user travels in a header, on model calls and
// on the MCP exchange alike (the relay checks identity on every route under /api).
const identity = { 'x-patchbridge-user': 'mcp-example-user' };
agent.headers = identity;
// `list_notes` only reads, and the page says so; `add_note` changes the list, so it asks first.
agent.mcpServers = [{ name: 'notes', url: '/api/mcp/notes', headers: identity, readOnly: ['list_notes'] }];
