// The element's shell, built once in its constructor so it paints at once: the header (history button, title,
// new conversation), the demo banner, the scrolling log and the dock (confirmation slot and notice bar; the
// composer joins it when the element connects). Also the strings on it, and following the end of the log.
import { h, iconButton } from './dom.js';

/** @typedef {import('./model.js').Translate} Translate */

/**
 * @param {Translate} t
 * @param {{ onHistory: () => void, onNew: () => void }} on
 */
export function buildShell(t, on) {
  const title = h('h2', { part: 'title' }, t('title'));
  const historyButton = iconButton('history', t('history'), { part: 'history-button', onclick: on.onHistory });
  const newButton = iconButton('plus', t('newConversation'), { part: 'new-button', onclick: on.onNew });
  const banner = h('p', { className: 'banner', part: 'banner', role: 'status', hidden: true });
  const log = h('div', { className: 'log', part: 'messages', role: 'log', 'aria-live': 'polite', 'aria-relevant': 'additions', 'aria-label': t('title') });
  const scroller = h('div', { className: 'scroller' }, log);
  const confirmSlot = h('div', { className: 'confirm-slot' });
  const notice = h('div', { className: 'notice', part: 'notice', role: 'alert', hidden: true });
  const dock = h('div', { className: 'dock', part: 'dock' }, confirmSlot, notice);
  const header = h('header', { part: 'header' }, historyButton, title, newButton);
  return { title, historyButton, newButton, banner, log, scroller, confirmSlot, notice, dock, header };
}

/** @typedef {ReturnType<typeof buildShell>} Shell */

/**
 * Puts the strings of `t` on the shell; the title only while no conversation names it.
 * @param {Shell} shell
 * @param {Translate} t
 * @param {boolean} titled
 */
export function translateShell(shell, t, titled) {
  for (const [button, key] of /** @type {const} */ ([[shell.historyButton, 'history'], [shell.newButton, 'newConversation']])) {
    button.title = t(key);
    button.setAttribute('aria-label', t(key));
  }
  shell.log.setAttribute('aria-label', t('title'));
  if (!titled) shell.title.textContent = t('title');
  if (!shell.banner.hidden) shell.banner.textContent = t('demoBanner');
}

/**
 * Following the end of the log: the person's own scrolling decides (read when the browser scrolls, where layout
 * is clean), and the jump to the end happens after layout (a ResizeObserver), so streaming never forces a layout
 * per frame. `follow.stick` is set again when the person sends something.
 * @param {Shell} shell
 * @param {{ stick: boolean }} follow
 * @param {AbortSignal} signal
 */
export function followEnd(shell, follow, signal) {
  const { scroller } = shell;
  // Where the last jump to the end left the scroller: its scroll event can come after more content has grown below
  // (a long stored answer renders in slices), and still at that position the person has not scrolled away.
  let jumpedTo = -1;
  scroller.addEventListener('scroll', () => {
    follow.stick = scroller.scrollTop === jumpedTo || scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
  }, { signal, passive: true });
  if (typeof ResizeObserver !== 'function') return;
  const observer = new ResizeObserver(() => {
    if (!follow.stick) return;
    scroller.scrollTop = scroller.scrollHeight;
    jumpedTo = scroller.scrollTop;
  });
  observer.observe(shell.log);
  observer.observe(scroller);
  signal.addEventListener('abort', () => observer.disconnect());
}
