// Helpers for driving <patchbridge-agent> in Chromium: its shadow DOM is open, so Playwright's CSS selectors
// pierce it (`patchbridge-agent textarea`), and in-page functions reach it through `shadowRoot`.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { waitInPage } from './browser.mjs';
import { ROOT } from './relay.mjs';
import { relayAndBrowser } from './suite.mjs';

export const W = 'patchbridge-agent';
export const sel = {
  input: `${W} textarea[part~=input]`,
  send: `${W} [part~=send-button]`,
  stop: `${W} [part~=stop-button]`,
  approve: `${W} [part~=approve-button]`,
  reject: `${W} [part~=reject-button]`,
  confirmation: `${W} [part~=confirmation]`,
  notice: `${W} [part~=notice]`,
  banner: `${W} [part~=banner]`,
  history: `${W} [part~=history-button]`,
  newChat: `${W} [part~=new-button]`,
  panel: `${W} [part~=history-panel]`,
};

/** Types `text` into the widget and presses Enter. */
export async function sendInWidget(page, text) {
  await page.fill(sel.input, text);
  await page.press(sel.input, 'Enter');
}

/** Waits until the widget's controller exists (the runtime has loaded). */
export function waitReady(page) {
  return waitInPage(page, () => document.querySelector('patchbridge-agent')?.controller != null);
}

/**
 * The rendered log as [{ role, text }]: tool messages (which render inside call cards) are skipped, and so are
 * the cards' live status labels (compare them on their own).
 */
export function logOf(page) {
  return page.evaluate(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.log > .msg')]
    .filter((m) => !m.classList.contains('tool'))
    .map((m) => {
      const copy = m.cloneNode(true);
      copy.querySelectorAll('.status').forEach((s) => s.remove());
      return { role: m.classList.contains('user') ? 'user' : 'assistant', text: copy.textContent };
    }));
}

/** Waits until the widget's log has `n` assistant messages (stable or draft). */
export function waitAssistantCount(page, n) {
  return waitInPage(page, (count) => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.log > .msg.assistant').length >= count, n);
}

/**
 * Waits until the controller is idle again and the element has painted that state (it renders on animation
 * frames, so the DOM can trail the controller by a frame).
 */
export async function waitIdle(page) {
  await waitInPage(page, () => document.querySelector('patchbridge-agent').controller?.getState().status === 'idle');
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))));
}

/** Saves a screenshot under tests/e2e/artifacts/ (git-ignored), the test run's visual record. */
export async function artifact(page, name) {
  const dir = path.join(ROOT, 'tests', 'e2e', 'artifacts');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`) });
}

/**
 * The environment of a widget suite: a fake upstream, a relay serving tests/e2e/pages/ at /examples/ with models
 * pointing at that upstream, and a headless Chromium — started before the suite, stopped after it.
 */
export function widgetEnvironment() {
  return relayAndBrowser({ fakeUpstream: true, examplesDir: path.join(ROOT, 'tests', 'e2e', 'pages') });
}

/**
 * In the page (pass it to any driver's `evaluate`): the session "expires", so requests go out without an
 * identity and the relay refuses them with 401; the page answers the element's `patchbridge-unauthorized` by
 * signing in again (restoring the `?user=` identity header after 50 ms) and tells the element when it is done.
 * The codes the events carried collect in `window.unauthorized`. `once`: answer only the first event (a page
 * shared by several tests).
 * @param {{ once?: boolean }} [options]
 */
export function expireSessionAndSignInAgain({ once = false } = {}) {
  const el = document.querySelector('patchbridge-agent');
  window.unauthorized = [];
  el.headers = () => ({});
  el.addEventListener('patchbridge-unauthorized', (event) => {
    window.unauthorized.push(event.detail.error.code);
    event.detail.waitUntil(new Promise((resolve) => setTimeout(() => {
      el.headers = () => ({ 'x-patchbridge-user': new URLSearchParams(location.search).get('user') });
      resolve();
    }, 50)));
  }, { once });
}
