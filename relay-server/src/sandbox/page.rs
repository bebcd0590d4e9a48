//! The sandbox proxy page as the sandbox listener serves it, and its headers.
//!
//! [`SOURCE`] is a copy of `widget/sandbox/proxy.html` (the crate is published without the repository around it;
//! `tests/sandbox.rs` fails when the two differ). The page origins are written into its `data-page-origins`
//! attribute, where the proxy reads which parents it answers.
//!
//! Its policy ([`PROXY_CSP`] plus `frame-ancestors`) is the outer bound of every app: the inner frame is a
//! `srcdoc` document, which inherits this policy and adds the one the proxy builds from the resource's
//! `_meta.ui.csp` (both apply, so the stricter wins). So this one leaves fetches open (any http(s) source, inline
//! scripts and styles) and the resource's declared policy decides; it forbids plugins, forms and every powerful
//! feature (`Permissions-Policy`), and only `pageOrigins` may frame it.

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;

/// `widget/sandbox/proxy.html`, byte for byte.
pub const SOURCE: &str = r###"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="robots" content="noindex">
<title>MCP App sandbox</title>
<style>html,body{margin:0;padding:0;height:100%;overflow:hidden;background:transparent}iframe{display:block;border:0;width:100%;height:100%}</style>
</head>
<body data-page-origins="[]">
<script>
// The sandbox proxy of <patchbridge-agent>'s MCP Apps (SEP-1865, "Sandbox proxy"; docs/adr/018). It is served
// from an origin of its own, never the host page's (the relay's `sandbox` listener, relay-server/src/sandbox/,
// which writes the page origins allowed to frame it into `data-page-origins` above and into `frame-ancestors`).
//  1. tells the host page it is ready (`ui/notifications/sandbox-proxy-ready`);
//  2. takes the app's HTML from the host page once (`ui/notifications/sandbox-resource-ready`) and loads it into
//     an inner frame: `srcdoc` in a sandbox without `allow-same-origin` (an opaque origin: no storage, no
//     cookies, no reach into this document), with the policy built from the resource's `_meta.ui.csp` as the
//     first element of the document, before anything of the app (default: no network at all);
//  3. forwards JSON-RPC messages both ways: from the host page only when they come from the parent window with
//     an allowed origin (pinned at step 2), from the app only when they come from the inner frame.
(() => {
  'use strict';
  const READY = 'ui/notifications/sandbox-proxy-ready';
  const RESOURCE = 'ui/notifications/sandbox-resource-ready';
  /** @type {string[]} */
  let allowed = [];
  try { allowed = JSON.parse(document.body.dataset.pageOrigins || '[]'); } catch { allowed = []; }
  if (!Array.isArray(allowed)) allowed = [];
  /** The host page's origin, pinned by its first message. */
  let host = null;
  /** @type {HTMLIFrameElement | null} */
  let inner = null;
  // A source the policy may name: scheme://host[:port], `*.` allowed as the first label; nothing that could end
  // the directive (`;`, `,`, quotes, spaces) or widen it (`*` alone, `'unsafe-…'`, data:).
  const SOURCE = /^(https?|wss?):\/\/(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*(:(\d{1,5}|\*))?$/i;
  /** @param {unknown} list */
  const sources = (list) => (Array.isArray(list) ? list.filter((s) => typeof s === 'string' && SOURCE.test(s)) : []);
  /** The inner document's policy from `_meta.ui.csp` (McpUiResourceCsp); default: no network. @param {any} csp */
  function policy(csp) {
    const resource = sources(csp?.resourceDomains).join(' ');
    const connect = sources(csp?.connectDomains).join(' ') || "'none'";
    const frame = sources(csp?.frameDomains).join(' ') || "'none'";
    const base = sources(csp?.baseUriDomains).join(' ') || "'none'";
    return [
      "default-src 'none'",
      `script-src 'unsafe-inline' ${resource}`.trim(),
      `style-src 'unsafe-inline' ${resource}`.trim(),
      `img-src data: blob: ${resource}`.trim(),
      `font-src data: ${resource}`.trim(),
      `media-src data: blob: ${resource}`.trim(),
      `connect-src ${connect}`,
      `frame-src ${frame}`,
      "worker-src 'none'",
      "object-src 'none'",
      `base-uri ${base}`,
      "form-action 'none'",
    ].join('; ');
  }
  /** @param {string} text */
  const attribute = (text) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  /** @param {any} params */
  function load(params) {
    if (inner || typeof params?.html !== 'string') return;
    inner = document.createElement('iframe');
    // Never `allow-same-origin`: the app gets an opaque origin, not this one.
    inner.setAttribute('sandbox', 'allow-scripts');
    inner.setAttribute('allow', '');
    inner.setAttribute('referrerpolicy', 'no-referrer');
    inner.title = 'MCP App';
    // The policy first; the doctype keeps the document out of quirks mode (the app's own doctype, later, is
    // ignored by the parser).
    inner.srcdoc = `<!doctype html><meta http-equiv="Content-Security-Policy" content="${attribute(policy(params.csp))}">${params.html}`;
    document.body.replaceChildren(inner);
  }
  window.addEventListener('message', (event) => {
    const data = event.data;
    if (!data || typeof data !== 'object' || data.jsonrpc !== '2.0') return;
    if (event.source === window.parent) {
      if (!allowed.includes(event.origin) || (host !== null && event.origin !== host)) return;
      if (data.method === RESOURCE) {
        if (host === null) { host = event.origin; load(data.params); }
        return;
      }
      if (inner?.contentWindow) inner.contentWindow.postMessage(data, '*');
    } else if (inner && event.source === inner.contentWindow && host !== null) {
      if (data.method === READY || data.method === RESOURCE) return;
      window.parent.postMessage(data, host);
    }
  });
  // Only an allowed page receives it (each origin is tried; the browser delivers to the one that matches).
  for (const origin of allowed) window.parent.postMessage({ jsonrpc: '2.0', method: READY, params: {} }, origin);
})();
</script>
</body>
</html>
"###;

/// The attribute the page origins are written into.
const ORIGINS_PLACEHOLDER: &str = "data-page-origins=\"[]\"";

/// The proxy page's policy, without `frame-ancestors` (added from `pageOrigins`).
pub const PROXY_CSP: &str = "default-src 'none'; script-src * 'unsafe-inline'; style-src * 'unsafe-inline'; \
img-src * data: blob:; font-src * data:; media-src * data: blob:; connect-src *; frame-src *; worker-src 'none'; \
object-src 'none'; base-uri *; form-action 'none'";

/// Features no app gets (SEP-1865 `permissions` are not granted by this host).
pub const PERMISSIONS_POLICY: &str = "camera=(), microphone=(), geolocation=(), clipboard-read=(), \
clipboard-write=(), payment=(), usb=(), serial=(), hid=(), bluetooth=(), display-capture=(), publickey-credentials-get=()";

/// The page with its origins written in, and its headers, built once per listener.
#[derive(Debug, Clone)]
pub struct ProxyPage {
    body: bytes::Bytes,
    csp: HeaderValue,
}

impl ProxyPage {
    /// `page_origins`: serialized origins (checked by the config, so they hold no quote or `;`).
    pub fn new(page_origins: &[String]) -> Self {
        let json = serde_json::to_string(page_origins).unwrap_or_else(|_| "[]".into());
        let attribute = format!("data-page-origins=\"{}\"", html_attribute(&json));
        let body = SOURCE.replacen(ORIGINS_PLACEHOLDER, &attribute, 1);
        let csp = format!("{PROXY_CSP}; frame-ancestors {}", page_origins.join(" "));
        ProxyPage {
            body: bytes::Bytes::from(body),
            csp: HeaderValue::from_str(&csp).unwrap_or_else(|_| {
                HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'")
            }),
        }
    }

    /// The page (`head`: headers only), with its policy, never cached past a deploy for long.
    pub fn response(&self, head: bool) -> Response {
        let body = if head {
            Body::empty()
        } else {
            Body::from(self.body.clone())
        };
        let mut response = Response::new(body);
        *response.status_mut() = StatusCode::OK;
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(self.body.len()));
        headers.insert(header::CONTENT_SECURITY_POLICY, self.csp.clone());
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        headers.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
        headers.insert(
            header::HeaderName::from_static("permissions-policy"),
            HeaderValue::from_static(PERMISSIONS_POLICY),
        );
        response
    }

    /// The page's bytes as served.
    pub fn body(&self) -> &[u8] {
        &self.body
    }
}

/// Escapes text for a double-quoted HTML attribute.
fn html_attribute(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}
