// What the Firefox and WebKit journeys read of <patchbridge-agent>: only its public surface (documented parts,
// attributes, ARIA roles, the `controller` property and its state), reached through the engine-neutral driver
// (./driver.mjs). In-page functions are serialized to the browser, so each one is self-contained.

export const W = 'patchbridge-agent';
export const sel = {
  input: `${W} >>> [part~=input]`,
  send: `${W} >>> [part~=send-button]`,
  stop: `${W} >>> [part~=stop-button]`,
  approve: `${W} >>> [part~=approve-button]`,
  reject: `${W} >>> [part~=reject-button]`,
  history: `${W} >>> [part~=history-button]`,
  newChat: `${W} >>> [part~=new-button]`,
};

/** Waits until the element's runtime is ready (its `controller` property is set). */
export function waitReady(page) {
  return page.waitFor(() => document.querySelector('patchbridge-agent')?.controller != null, null, 'the controller');
}

/** Waits until the controller is idle and its last turn ended as `outcome` (a turn that was sent has run). */
export function waitOutcome(page, outcome, turns) {
  return page.waitFor(({ outcome: o, turns: n }) => {
    const s = document.querySelector('patchbridge-agent').controller.getState();
    const users = s.messages.filter((m) => m.role === 'user').length;
    return s.status === 'idle' && s.lastOutcome === o && users >= n;
  }, { outcome, turns }, `an idle controller whose turn ${turns} ended as ${outcome}`);
}

/**
 * Waits until the controller is idle and the element has painted that state (it renders on animation frames, so
 * the DOM can trail the controller by a frame).
 */
export async function waitIdle(page) {
  await page.waitFor(() => document.querySelector('patchbridge-agent').controller?.getState().status === 'idle', null, 'an idle controller');
  await page.evaluate(() => new Promise((resolve) => { requestAnimationFrame(() => requestAnimationFrame(() => resolve(true))); }));
}

/** Waits until the confirmation card is on screen; returns its text. */
export function waitConfirmation(page) {
  return page.waitFor(() => {
    const card = document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=confirmation]');
    return card && card.getClientRects().length > 0 ? card.textContent : null;
  }, null, 'the confirmation card');
}

/** The rendered conversation: user and assistant bubbles in order, as { role, text }. */
export function bubbles(page) {
  return page.evaluate(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=bubble-user], [part~=bubble-assistant]')]
    .map((b) => ({ role: b.matches('[part~=bubble-user]') ? 'user' : 'assistant', text: b.textContent })));
}

/** Waits until `n` bubbles are rendered and the last one matches `pattern` (a RegExp source); returns them. */
export function waitBubbles(page, n, pattern) {
  return page.waitFor(({ count, source }) => {
    const list = [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=bubble-user], [part~=bubble-assistant]')];
    return list.length >= count && new RegExp(source).test(list.at(-1).textContent)
      ? list.map((b) => ({ role: b.matches('[part~=bubble-user]') ? 'user' : 'assistant', text: b.textContent }))
      : null;
  }, { count: n, source: pattern.source }, `${n} bubbles, the last matching ${pattern}`);
}

/** The live status label of every tool card, in order (the cards' `role=status` regions). */
export function toolStatuses(page) {
  return page.evaluate(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=tool-card] [role=status]')]
    .map((s) => s.textContent));
}

/** Whether an element of the widget's shadow root (CSS selector) is rendered. */
export function shown(page, css) {
  return page.evaluate((c) => {
    const el = document.querySelector('patchbridge-agent').shadowRoot.querySelector(c);
    return Boolean(el && !el.hidden && el.getClientRects().length > 0);
  }, css);
}

/** The demo page's todo list (what the page tool changed). */
export function todos(page) {
  return page.evaluate(() => [...document.querySelectorAll('#todos li')].map((li) => li.textContent));
}

/** Types `text` into the widget's message box and presses Enter, as a person does. */
export async function sendInWidget(page, text) {
  await page.type(sel.input, text);
  await page.press(sel.input, 'Enter');
}
