// The page's OAuth callback for <patchbridge-agent>'s "Connect <server>" popup: it hands the authorization code
// and state to the element's window and closes.
const params = new URLSearchParams(window.location.search);
window.opener?.postMessage({ type: 'patchbridge-mcp-auth', code: params.get('code'), state: params.get('state') }, window.location.origin);
window.close();
