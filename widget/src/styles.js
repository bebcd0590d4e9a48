// The element's stylesheet. It is adopted into the shadow root as a constructed stylesheet, so a page whose
// Content-Security-Policy has no 'unsafe-inline' for styles still renders it. Hosts style the element through
// the documented custom properties (`--pb-*`) and `::part()` names; nothing else leaks in or out.

export const CSS = /* css */ `
:host {
  --pb-primary: #2563eb;
  --pb-primary-contrast: #ffffff;
  --pb-bg: #ffffff;
  --pb-surface: #f4f5f7;
  --pb-surface-strong: #e8eaee;
  --pb-text: #111827;
  --pb-text-muted: #4b5563;
  --pb-border: #d1d5db;
  --pb-danger: #b91c1c;
  --pb-danger-soft: #fdecec;
  --pb-warn: #92400e;
  --pb-warn-soft: #fff7e6;
  --pb-ok: #047857;
  --pb-radius: 12px;
  --pb-gap: 12px;
  --pb-font: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "PingFang SC", "Microsoft YaHei", sans-serif;
  --pb-font-mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  --pb-user-bubble: color-mix(in srgb, var(--pb-primary) 12%, var(--pb-bg));
  --pb-code-keyword: #7c3aed;
  --pb-code-string: #047857;
  --pb-code-number: #b45309;
  --pb-code-name: #1d4ed8;
  display: flex;
  flex-direction: column;
  box-sizing: border-box;
  min-width: 0;
  min-height: 320px;
  height: 100%;
  position: relative;
  overflow: hidden;
  font-family: var(--pb-font);
  font-size: 15px;
  line-height: 1.5;
  color: var(--pb-text);
  background: var(--pb-bg);
  color-scheme: light;
}
:host([hidden]) { display: none; }
:host([data-scheme="dark"]) {
  --pb-primary: #60a5fa;
  --pb-primary-contrast: #0b1220;
  --pb-bg: #0f1115;
  --pb-surface: #1b1e25;
  --pb-surface-strong: #262a33;
  --pb-text: #e5e7eb;
  --pb-text-muted: #a3aab8;
  --pb-border: #3a404c;
  --pb-danger: #fca5a5;
  --pb-danger-soft: #3a1618;
  --pb-warn: #fcd34d;
  --pb-warn-soft: #33270f;
  --pb-ok: #6ee7b7;
  --pb-code-keyword: #c4b5fd;
  --pb-code-string: #6ee7b7;
  --pb-code-number: #fcd34d;
  --pb-code-name: #93c5fd;
  color-scheme: dark;
}
:host([theme="inherit"]) {
  --pb-bg: transparent;
  --pb-text: currentColor;
  --pb-text-muted: color-mix(in srgb, currentColor 70%, transparent);
  --pb-surface: color-mix(in srgb, currentColor 7%, transparent);
  --pb-surface-strong: color-mix(in srgb, currentColor 13%, transparent);
  --pb-border: color-mix(in srgb, currentColor 25%, transparent);
  --pb-font: inherit;
  font-size: inherit;
  color: inherit;
}
*, *::before, *::after { box-sizing: border-box; }
button, input, textarea { font: inherit; color: inherit; }
[hidden] { display: none !important; }
.visually-hidden {
  position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0;
}
button {
  min-height: 44px; min-width: 44px; padding: 0 14px; border-radius: 10px; cursor: pointer;
  border: 1px solid var(--pb-border); background: var(--pb-surface); color: var(--pb-text);
  display: inline-flex; align-items: center; justify-content: center; gap: 6px;
  transition: background-color 120ms ease, border-color 120ms ease;
}
button:hover:not(:disabled) { background: var(--pb-surface-strong); }
button:disabled { opacity: 0.55; cursor: not-allowed; }
button.primary { background: var(--pb-primary); border-color: var(--pb-primary); color: var(--pb-primary-contrast); font-weight: 600; }
button.primary:hover:not(:disabled) { background: color-mix(in srgb, var(--pb-primary) 85%, black); }
button.danger { color: var(--pb-danger); }
button.icon { padding: 0; width: 44px; }
:focus-visible { outline: 3px solid color-mix(in srgb, var(--pb-primary) 70%, transparent); outline-offset: 2px; }
svg { width: 20px; height: 20px; fill: none; stroke: currentColor; stroke-width: 2; stroke-linecap: round; stroke-linejoin: round; }

header {
  display: flex; align-items: center; gap: 8px; padding: 6px 8px 6px 14px;
  border-bottom: 1px solid var(--pb-border); flex: none;
}
header h2 { margin: 0; font-size: 1em; font-weight: 600; flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.banner {
  flex: none; margin: 0; padding: 8px 14px; font-size: 0.9em;
  background: var(--pb-warn-soft); color: var(--pb-warn); border-bottom: 1px solid var(--pb-border);
}
/* The conversation takes what is left (down to nothing on a tiny host); the dock below keeps the input on screen at
   any host size and lets a tall confirmation card scroll inside it, whatever min-height the page gives the host. */
.scroller { flex: 1 1 0; min-height: min(96px, 18%); overflow-y: auto; overscroll-behavior: contain; }
.log { display: flex; flex-direction: column; gap: var(--pb-gap); padding: 14px; max-width: 900px; margin: 0 auto; }
.empty { color: var(--pb-text-muted); text-align: center; margin: 20% 0 0; }
.msg { display: flex; flex-direction: column; gap: 8px; min-width: 0; max-width: 100%; }
.msg.user { align-items: flex-end; }
.msg .who { font-size: 0.8em; color: var(--pb-text-muted); }
.bubble { min-width: 0; max-width: 100%; overflow-wrap: anywhere; word-break: break-word; }
.msg.user .bubble { background: var(--pb-user-bubble); padding: 8px 12px; border-radius: var(--pb-radius); max-width: min(85%, 640px); white-space: pre-wrap; }
.msg.user img.attached { max-width: min(240px, 100%); border-radius: 8px; display: block; }
.md > :first-child { margin-top: 0; }
.md > :last-child, .md > .chunk:last-child > :last-child { margin-bottom: 0; }
.md > .chunk:not(:last-child) { content-visibility: auto; contain-intrinsic-block-size: auto 1000px; overflow-clip-margin: 8px; }
.md p, .md ul, .md ol, .md blockquote, .md pre, .md table { margin: 0 0 0.6em; }
.md ul, .md ol { padding-left: 1.4em; }
.md h1, .md h2, .md h3, .md h4, .md h5, .md h6 { margin: 0.8em 0 0.4em; line-height: 1.3; }
.md h1 { font-size: 1.35em; } .md h2 { font-size: 1.2em; } .md h3 { font-size: 1.08em; }
.md a, .sources a { color: var(--pb-primary); text-decoration: underline; }
.md blockquote { border-left: 3px solid var(--pb-border); padding-left: 10px; color: var(--pb-text-muted); }
.md code { font-family: var(--pb-font-mono); font-size: 0.9em; background: var(--pb-surface); padding: 0.1em 0.35em; border-radius: 5px; }
.md pre { position: relative; background: var(--pb-surface); border: 1px solid var(--pb-border); border-radius: 8px; padding: 10px 12px; overflow-x: auto; max-width: 100%; }
.md pre code { background: none; padding: 0; white-space: pre; display: block; }
.md pre .copy { position: absolute; top: 4px; right: 4px; min-height: 44px; min-width: 44px; font-size: 0.8em; padding: 0 8px; opacity: 0.85; }
/* Highlighted code (the on-demand highlighter's token classes). */
.md code .tok-kwd, .md code .tok-section { color: var(--pb-code-keyword); }
.md code .tok-str, .md code .tok-insert { color: var(--pb-code-string); }
.md code .tok-num, .md code .tok-bool, .md code .tok-esc { color: var(--pb-code-number); }
.md code .tok-func, .md code .tok-class, .md code .tok-type { color: var(--pb-code-name); }
.md code .tok-cmnt { color: var(--pb-text-muted); font-style: italic; }
.md code .tok-err, .md code .tok-deleted, .md code .tok-var { color: var(--pb-danger); }
.md table { border-collapse: collapse; display: block; overflow-x: auto; max-width: 100%; }
.md th, .md td { border: 1px solid var(--pb-border); padding: 4px 8px; text-align: left; }
.md img { max-width: 100%; height: auto; border-radius: 6px; }
.md hr { border: none; border-top: 1px solid var(--pb-border); }
/* Formulas (MathML from the on-demand renderer; their source until it has loaded). */
.md .math.display { display: block; margin: 0.4em 0; overflow-x: auto; overflow-y: hidden; max-width: 100%; }
.md .math.display math { display: block math; }
.md math { font-size: 1.05em; }
.cursor::after { content: "▍"; animation: blink 1s steps(2) infinite; color: var(--pb-text-muted); }
@keyframes blink { 50% { opacity: 0; } }

.suggestions { display: flex; flex-wrap: wrap; gap: 8px; justify-content: center; }
.suggestions button { border-radius: 999px; max-width: 100%; white-space: normal; text-align: center; line-height: 1.3; padding: 6px 14px; }
.sources { font-size: 0.85em; color: var(--pb-text-muted); margin-top: 6px; }
.sources ol { margin: 0; padding-left: 1.8em; }
.sources li { line-height: 24px; overflow-wrap: anywhere; }
.sources .host { margin-left: 6px; }
.msg-actions { display: flex; gap: 2px; margin-top: 2px; color: var(--pb-text-muted); }
.msg.user .msg-actions { justify-content: flex-end; }
.msg-actions button { border: none; background: transparent; color: inherit; }
.msg-actions button[aria-pressed="true"] { color: var(--pb-primary); background: var(--pb-surface); }
.msg-actions:not(:has(button:not([hidden]))) { display: none; }
.editing { display: flex; align-items: center; gap: 8px; font-size: 0.88em; color: var(--pb-text-muted); }
.editing span { flex: 1; min-width: 0; }
details.reasoning { border-left: 3px solid var(--pb-border); padding: 2px 0 2px 10px; color: var(--pb-text-muted); font-size: 0.93em; }
/* Expanders: 44 px tall, with a visible disclosure marker (a flex summary loses the native one). */
summary { cursor: pointer; min-height: 44px; display: flex; align-items: center; gap: 6px; list-style: none; }
summary::-webkit-details-marker { display: none; }
summary::before { content: "▸"; display: inline-block; width: 1em; text-align: center; transition: transform 120ms ease; }
details[open] > summary::before { transform: rotate(90deg); }
details.reasoning .md { margin-top: 4px; }

.tool { border: 1px solid var(--pb-border); border-radius: 10px; background: var(--pb-bg); overflow: hidden; min-width: 0; }
.tool > .head { display: flex; align-items: center; gap: 8px; padding: 8px 12px; background: var(--pb-surface); flex-wrap: wrap; }
.tool .name { font-family: var(--pb-font-mono); font-size: 0.9em; font-weight: 600; overflow-wrap: anywhere; flex: 1; min-width: 8em; }
.tool .server { font-weight: 400; color: var(--pb-text-muted); margin-inline-start: 8px; }
.status { font-size: 0.82em; padding: 2px 8px; border-radius: 999px; border: 1px solid var(--pb-border); white-space: nowrap; }
.status[data-status="done"] { color: var(--pb-ok); border-color: currentColor; }
.status[data-status="error"], .status[data-status="rejected"] { color: var(--pb-danger); border-color: currentColor; }
.status[data-status="waiting"] { color: var(--pb-warn); border-color: currentColor; }
/* A page's own view of the call (slotted from the light DOM) replaces the generic card's body; the call's status
   stays beside it, shown and announced (the tool's name stays for assistive technology only). */
.tool.custom { border: none; background: none; border-radius: 0; overflow: visible; display: flex; align-items: center; gap: 8px; flex-wrap: wrap; }
.tool.custom > :not(slot, .head) { display: none; }
.tool.custom > slot { display: block; flex: 1 1 12em; min-width: 0; }
.tool.custom > .head { order: 1; flex: none; padding: 0; background: none; margin-left: auto; }
.tool.custom > .head .name { position: absolute; width: 1px; height: 1px; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; min-width: 0; }
.tool > progress { display: block; width: calc(100% - 24px); margin: 0 12px 8px; height: 6px; accent-color: var(--pb-primary); }
.tool details { padding: 0 12px; }
.tool details summary { font-size: 0.88em; color: var(--pb-text-muted); }
.tool pre { margin: 0 0 10px; font-family: var(--pb-font-mono); font-size: 0.85em; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 260px; overflow: auto; background: var(--pb-surface); padding: 8px; border-radius: 6px; }

.dock { flex: 0 1 auto; min-height: 0; container-type: inline-size; display: flex; flex-direction: column; gap: 8px; padding: 8px 12px calc(10px + env(safe-area-inset-bottom, 0px)); border-top: 1px solid var(--pb-border); background: var(--pb-bg); }
/* A tall confirmation card shrinks to the room left: its body scrolls, its title stays at the top and Approve and
   Reject at the bottom, always on screen. */
.confirm-slot { flex: 0 1 auto; min-height: 0; display: flex; flex-direction: column; }
.confirm-slot:empty { display: none; }
.dock > .notice, .dock > .composer-wrap { flex: none; }
.mcp-servers { flex: none; margin: 0; padding: 0; list-style: none; display: flex; flex-wrap: wrap; gap: 4px 12px; font-size: 12px; color: var(--pb-text); opacity: .8; }
.mcp-servers [data-status=failed] { color: var(--pb-danger); }
.elicit .field { display: flex; flex-direction: column; gap: 4px; margin: 0 0 8px; border: 0; padding: 0; }
.elicit .check { display: flex; flex-direction: row; align-items: center; gap: 6px; }
.elicit input:not([type=checkbox]), .elicit select { font: inherit; padding: 6px 8px; border: 1px solid var(--pb-border); border-radius: 6px; background: var(--pb-bg); color: var(--pb-text); }
.elicit small { opacity: .8; }
.confirm { border: 2px solid var(--pb-primary); border-radius: var(--pb-radius); padding: 12px; background: var(--pb-bg); display: flex; flex-direction: column; min-height: 0; flex: 0 1 auto; }
.confirm > .body { flex: 0 1 auto; min-height: 0; overflow-y: auto; overscroll-behavior: contain; }
.confirm > h3, .confirm > .actions { flex: none; }
.confirm > .body > slot { display: block; margin: 0 0 8px; }
.confirm:focus { outline: none; box-shadow: 0 0 0 3px color-mix(in srgb, var(--pb-primary) 35%, transparent); }
.confirm h3 { margin: 0 0 4px; font-size: 1em; overflow-wrap: anywhere; }
.confirm p { margin: 0 0 8px; color: var(--pb-text-muted); font-size: 0.92em; }
.confirm dl { display: grid; grid-template-columns: minmax(5em, max-content) 1fr; gap: 4px 12px; margin: 0 0 8px; font-size: 0.92em; }
.confirm dt { color: var(--pb-text-muted); overflow-wrap: anywhere; }
.confirm dd { margin: 0; overflow-wrap: anywhere; white-space: pre-wrap; font-family: var(--pb-font-mono); }
.confirm details summary { font-size: 0.85em; color: var(--pb-text-muted); }
.confirm pre { font-family: var(--pb-font-mono); font-size: 0.82em; white-space: pre-wrap; overflow-wrap: anywhere; background: var(--pb-surface); padding: 8px; border-radius: 6px; margin: 0 0 8px; }
.actions { display: flex; gap: 8px; flex-wrap: wrap; justify-content: flex-end; }
/* The notice: plain words and a close button on the first row, the ways forward in one row below. */
.notice { display: grid; grid-template-columns: minmax(0, 1fr) auto; align-items: center; gap: 4px 8px; padding: 4px 4px 4px 12px; border-radius: 10px; font-size: 0.92em; background: var(--pb-surface); color: var(--pb-text); }
.notice .text { overflow-wrap: anywhere; }
.notice .code { display: block; font-size: 0.85em; opacity: 0.8; }
.notice .close { border: none; background: transparent; align-self: start; }
.notice .ways { grid-column: 1 / -1; display: flex; gap: 8px; justify-content: flex-end; padding: 0 4px 4px 0; }
.notice .ways button { flex: 0 1 auto; min-width: 0; white-space: normal; line-height: 1.2; padding: 4px 12px; }
.notice.error { background: var(--pb-danger-soft); color: var(--pb-danger); }
.notice.info { background: var(--pb-warn-soft); color: var(--pb-warn); }
.notice code { font-family: var(--pb-font-mono); font-size: 0.9em; }
.composer { display: flex; align-items: flex-end; gap: 8px; }
.composer textarea {
  flex: 1; min-width: 0; min-height: 44px; max-height: 40vh; resize: none; padding: 10px 12px; border-radius: 10px;
  border: 1px solid var(--pb-border); background: var(--pb-bg); line-height: 1.4; field-sizing: content;
}
.attachments { display: flex; gap: 8px; flex-wrap: wrap; }
.attachments .thumb { position: relative; }
.attachments img { width: 56px; height: 56px; object-fit: cover; border-radius: 8px; border: 1px solid var(--pb-border); display: block; }
/* Remove image: a 44 px target around a 28 px round mark. */
.attachments button { position: absolute; top: -14px; right: -14px; width: 44px; height: 44px; padding: 0; border: none; background: transparent; }
.attachments button:hover:not(:disabled) { background: transparent; }
.attachments button svg { width: 28px; height: 28px; padding: 5px; border-radius: 50%; background: var(--pb-surface-strong); border: 1px solid var(--pb-border); }
/* A document: a chip with its name, type and size (in the composer with Remove, in a sent message without). */
.chip { display: inline-flex; align-items: center; gap: 8px; min-width: 0; max-width: min(100%, 320px); padding: 4px 4px 4px 10px; border: 1px solid var(--pb-border); border-radius: 10px; background: var(--pb-surface); white-space: normal; }
.chip.sent { padding: 6px 10px; margin: 4px 0; background: var(--pb-bg); display: flex; }
.chip > svg { flex: none; color: var(--pb-text-muted); }
.chip-text { display: flex; flex-direction: column; min-width: 0; line-height: 1.25; }
.chip-name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-size: 0.9em; }
.chip-meta { font-size: 0.78em; color: var(--pb-text-muted); }
.attachments .chip button { position: static; flex: none; }
.drop-target { outline: 3px dashed var(--pb-primary); outline-offset: -6px; }

.panel {
  position: absolute; inset: 0; z-index: 2; background: var(--pb-bg); display: flex; flex-direction: column;
  max-width: 420px; border-right: 1px solid var(--pb-border); box-shadow: 0 0 24px rgba(0,0,0,0.2);
}
.panel header { border-bottom: 1px solid var(--pb-border); }
.panel .list { flex: 1; min-height: 0; overflow-y: auto; margin: 0; padding: 6px; list-style: none; }
.panel li { display: flex; align-items: center; gap: 4px; border-radius: 8px; }
.panel li[aria-current="true"] { background: var(--pb-surface); }
.panel li .open { flex: 1; min-width: 0; justify-content: flex-start; text-align: left; border: none; background: none; flex-direction: column; align-items: flex-start; padding: 6px 10px; gap: 0; }
.panel li .open .t { max-width: 100%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.panel li .open .d { font-size: 0.8em; color: var(--pb-text-muted); }
.panel li button.icon { border: none; background: none; }
.panel .confirm-delete, .panel .rename { padding: 8px 10px; border: 1px solid var(--pb-border); border-radius: 8px; margin: 4px 0; display: flex; flex-direction: column; gap: 8px; width: 100%; }
.panel .rename input { min-height: 44px; padding: 0 10px; border: 1px solid var(--pb-border); border-radius: 8px; background: var(--pb-bg); }
.panel .foot { padding: 8px; display: flex; flex-direction: column; gap: 6px; }
.panel .status-line { font-size: 0.9em; color: var(--pb-text-muted); padding: 0 8px; margin: 0; }
.panel .status-line:empty { display: none; }
.panel .status-line.error { color: var(--pb-danger); }

/* A narrow element: Stop shows its icon only (its label stays for assistive technology), so the input keeps
   room for its placeholder on one line. */
@container (max-width: 420px) {
  .composer .label { position: absolute; width: 1px; height: 1px; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  .composer button[part~=stop-button] { padding: 0; width: 44px; }
}
@media (max-width: 480px) {
  :host { font-size: 16px; }
  .log { padding: 10px; }
  .msg.user .bubble { max-width: 92%; }
  .panel { max-width: none; }
}
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after { animation: none !important; transition: none !important; scroll-behavior: auto !important; }
}
`;
